#!/usr/bin/env bash
# Installs the Debian 12 packages NP Explorer needs to build, test and run.
# Uses sudo when not run as root. Safe to run repeatedly.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libtorch-dev
  # Without OpenBLAS, Debian's libtorch falls back to reference BLAS (~15x slower matmuls).
  libopenblas0-openmp
  # oneDNN's headers: the TE attention kernel calls the oneDNN that libtorch links (libdnnl2).
  libdnnl-dev
  nlohmann-json3-dev zlib1g-dev libcli11-dev
  # npe predict --image reads and writes PNG pictures (libpng, in core/).
  libpng-dev
  # The pictures task reads folders of JPEG photographs (libjpeg-turbo, in core/).
  libjpeg62-turbo-dev
  # Checkpoints are zip archives: minizip checks their directory before libtorch reads them.
  libminizip-dev
  # Gloo's headers, for libtorch's c10d process group (data-parallel training under torchrun).
  libgloo-dev
  # T-FashionMNIST tasks and the image tab read Debian's Fashion-MNIST.
  dataset-fashion-mnist
  # ERA5 maps: NetCDF and GRIB readers (core/), GSHHG coastlines drawn on the map tab.
  libnetcdf-dev libhdf5-dev libeccodes-dev gmt-gshhg-low
  # CF unit strings ("DEG C", "degC", "K", …) are parsed and converted by UDUNITS-2.
  libudunits2-dev
  # ncdump: the tests check the CF header of `npe predict --grid`'s NetCDF output.
  netcdf-bin
  libgtest-dev
  # npe-convert-reference and its test read checkpoints of the authors' PyTorch code.
  python3-torch
  # The sanitizer and fuzzing build (clang's libFuzzer, AddressSanitizer, UBSan) that CI runs.
  clang libclang-rt-14-dev
  qt6-base-dev libqt6opengl6-dev qt6-svg-dev libqcustomplot-dev
  # The map tab's 2-D and 3-D views (VTK rendering offscreen into a Qt widget).
  libvtk9-dev
  # GUI tests and screenshots run under a virtual X server.
  xvfb xauth libgl1-mesa-dri
  # Training hosts: the tab runs jobs on other computers with the user's ssh and copies their
  # checkpoints back with scp; the hosts test starts its own sshd on 127.0.0.1.
  openssh-client openssh-server
)

if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
