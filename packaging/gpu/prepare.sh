#!/usr/bin/env bash
# Run HERE (the Debian 12 development machine), from the project root, before a `device` run:
# fills .device/ (ignored by git, named in the run's `carry`) with what the lent GPU machine
# lacks: the Debian packages core/ and npe build against (headers, pkg-config files and the
# runtime libraries behind them, minus glibc and libstdc++, which that machine has newer) and
# Fashion-MNIST, recompressed with xz so that tree and data fit the 64 MiB a run may carry.
# ../shared does not travel; see build-npe.sh for the other side.
set -euo pipefail
mkdir -p .device/debs .device/fmnist
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo /.device/ >> .git/info/exclude
# Development packages, then the runtime closure of libnetcdf19, libhdf5-103-1, libeccodes0 and
# libminizip1 as `ldd` lists it on Debian 12 (oneDNN and Gloo are left out: with a non-Debian
# libtorch, core/CMakeLists.txt uses neither).
(cd .device/debs && apt-get download \
  nlohmann-json3-dev libcli11-dev libgtest-dev libpng-dev libminizip-dev libnetcdf-dev libhdf5-dev libeccodes-dev \
  libudunits2-dev libudunits2-0 libudunits2-data libexpat1 \
  zlib1g-dev pkgconf pkgconf-bin libpkgconf3 \
  libminizip1 libnetcdf19 libhdf5-103-1 libhdf5-hl-100 libeccodes0 libaec0 libsz2 libxml2 \
  libicu72 libcurl3-gnutls libcurl4 libbrotli1 libffi8 libgmp10 libgnutls30 libgssapi-krb5-2 \
  libhogweed6 libidn2-0 libk5crypto3 libkrb5-3 libkrb5support0 libkeyutils1 libcom-err2 \
  libldap-2.5-0 libsasl2-2 libsasl2-modules-db libdb5.3 libnettle8 libnghttp2-14 libopenjp2-7 \
  libp11-kit0 libpng16-16 libpsl5 librtmp1 libssh2-1 libssl3 libtasn1-6 libunistring2 \
  libzstd1 liblzma5 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
data=${NPE_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
for f in train-images-idx3-ubyte t10k-images-idx3-ubyte; do
  [ -s .device/fmnist/$f.xz ] || zcat "$data/$f.gz" | xz -9 -T2 > .device/fmnist/$f.xz
done
cp "$data"/*labels-idx1-ubyte.gz .device/fmnist/
du -sh .device
