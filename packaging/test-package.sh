#!/bin/sh
# Builds the Debian package from a build tree, unpacks it into a scratch root with dpkg -x and
# runs the installed programs: npe on a shipped model, np-explorer's screenshot offscreen.
# Usage: packaging/test-package.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)
work="$build/package-test"
rm -rf "$work"
mkdir -p "$work"
(cd "$build" && cpack -G DEB -B "$work" > "$work/cpack.log")
deb=$(ls "$work"/np-explorer_*_amd64.deb)
echo "package: $(basename "$deb"), $(du -h "$deb" | cut -f1)"
echo "Depends: $(dpkg-deb -f "$deb" Depends)"
dpkg -x "$deb" "$work/root"
root="$work/root"
# Every library a program links directly must come from a package named in Depends: ldd finds
# it on this machine, dpkg -S names its package (trying both spellings of a merged /usr).
owner_of() {
  for file in "$1" "/usr$1" "${1#/usr}"; do
    if dpkg -S "$file" > "$work/owner" 2>/dev/null; then cut -d: -f1 "$work/owner"; return; fi
  done
}
depends=" $(dpkg-deb -f "$deb" Depends | sed 's/([^)]*)//g; s/[,|]/ /g') "
for program in "$root"/usr/bin/*; do
  [ "$(head -c 4 "$program")" = "$(printf '\177ELF')" ] || continue
  for library in $(readelf -d "$program" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
    file=$(ldd "$program" | awk -v l="$library" '
      $1 == l && $2 == "=>" { print $3 } $1 ~ ("/" l "$") { print $1 }')
    package=$(owner_of "$file")
    case "$depends" in
      *" $package "*) ;;
      *) echo "$(basename "$program") links $library ($file, package '$package'), which Depends does not name"
         exit 1 ;;
    esac
  done
done
test -x "$root/usr/bin/npe"
test -f "$root/usr/share/man/man1/npe.1"
test -f "$root/usr/share/np-explorer/models/gp1d/tetnp.pt"
"$root/usr/bin/npe" eval --checkpoint "$root/usr/share/np-explorer/models/gp1d/cnp.pt" \
  --tasks 16 --threads 1
# The package is whole: the ERA5 month, its invariants and the Europe field are in it, and the
# unpacked npe finds its own copy first (not the source tree's), then evaluates a shipped ERA5
# model on it.
for f in era5-t2m-2019-03-uk.nc era5-t2m-2019-03-uk.grib era5-invariants-europe-0p25.nc \
  era5-t2m-2017-01-01T12-europe.grib; do
  test -f "$root/usr/share/np-explorer/data/era5/$f"
done
test -f "$root/usr/share/np-explorer/data/README.md"
first_data=$("$root/usr/bin/npe" devices --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["shipped"]["data"][0])')
test "$first_data" = "$(cd "$root/usr/share/np-explorer/data" && pwd -P)" ||
  { echo "the unpacked npe looks for data in $first_data first"; exit 1; }
"$root/usr/bin/npe" eval --checkpoint "$root/usr/share/np-explorer/models/era5/cnp.pt" \
  --tasks 4 --threads 1
if [ -x "$root/usr/bin/np-explorer" ]; then
  test -f "$root/usr/share/applications/np-explorer.desktop"
  QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/config" \
    "$root/usr/bin/np-explorer" --tab images --threads 1 --screenshot "$work/shot.png"
  test -s "$work/shot.png"
  # The Maps tab opens the packaged month (without data it says "No ERA5 data").
  QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/config" \
    "$root/usr/bin/np-explorer" --tab maps --threads 1 --screenshot "$work/shot-maps.png" \
    2> "$work/maps.log" || { cat "$work/maps.log"; exit 1; }
  test -s "$work/shot-maps.png"
  if grep -q 'No ERA5 data' "$work/maps.log"; then cat "$work/maps.log"; exit 1; fi
fi
echo "package test passed"
