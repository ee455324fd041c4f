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
test -x "$root/usr/bin/npe"
test -f "$root/usr/share/man/man1/npe.1"
test -f "$root/usr/share/np-explorer/models/gp1d/tetnp.pt"
"$root/usr/bin/npe" eval --checkpoint "$root/usr/share/np-explorer/models/gp1d/cnp.pt" \
  --tasks 16 --threads 1
if [ -x "$root/usr/bin/np-explorer" ]; then
  test -f "$root/usr/share/applications/np-explorer.desktop"
  QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/config" \
    "$root/usr/bin/np-explorer" --tab images --threads 1 --screenshot "$work/shot.png"
  test -s "$work/shot.png"
fi
echo "package test passed"
