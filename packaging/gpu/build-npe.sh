#!/usr/bin/env bash
# Run ON the lent GPU machine (Ubuntu 24.04, PyTorch 2.x with CUDA, no apt, no network), from
# the project root, with .device/ from prepare.sh carried: builds npe (no GUI; the core tests on
# request) against that machine's libtorch and prints the environment lines to source before
# running it.
# Measured on an H200 machine (16 cores): configure 5 s, build 95 s (2026-11-26, one file per
# unit); 75 s with unity batches of 4 (2026-11-27).
set -euo pipefail
D=/tmp/npe-deps; B=${NPE_BUILD_DIR:-/tmp/npe-build}
mkdir -p $D
for f in .device/debs/*.deb; do dpkg -x "$f" $D; done
LIBS=$D/usr/lib/x86_64-linux-gnu:$D/usr/lib/x86_64-linux-gnu/hdf5/serial:$D/lib/x86_64-linux-gnu
# The carried pkgconf, pointed at the carried .pc files; the sysroot turns their /usr paths into
# the unpacked ones.
cat > $D/pkg-config <<EOF
#!/bin/sh
export LD_LIBRARY_PATH=$LIBS
export PKG_CONFIG_LIBDIR=$D/usr/lib/x86_64-linux-gnu/pkgconfig:$D/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$D
exec $D/usr/bin/pkgconf "\$@"
EOF
chmod +x $D/pkg-config
# Fashion-MNIST only for the image tasks: a 1-D run may leave it behind to fit the 64 MiB.
mkdir -p /tmp/fmnist
shopt -s nullglob
for f in .device/fmnist/*.xz; do xz -dc "$f" | gzip -1 > /tmp/fmnist/"$(basename "$f" .xz)".gz; done
for f in .device/fmnist/*.gz; do cp "$f" /tmp/fmnist/; done
shopt -u nullglob
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
gen=Ninja; keep_going=(-k 0)
command -v ninja > /dev/null || { gen="Unix Makefiles"; keep_going=(-k); }
# C++20: PyTorch's headers ask for it from 2.12 on, and core/ compiles as C++17 and C++20 alike.
# -rpath-link lets the linker find what libnetcdf needs among the unpacked libraries.
# Unity batches of 4 (not 16) give the 16 cores more units to compile side by side.
# NPE_BUILD_TESTS=ON in the environment also builds the core suites (npe_core_tests) there.
tests=${NPE_BUILD_TESTS:-OFF}
cmake -S . -B $B -G "$gen" -DCMAKE_BUILD_TYPE=Release -DNPE_BUILD_GUI=OFF -DNPE_BUILD_TESTS=$tests \
  -DNPE_USE_ONEDNN=OFF -DNPE_USE_C10D_GLOO=OFF -DCMAKE_CXX_STANDARD=20 -DNPE_UNITY_BATCH_SIZE=4 \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$D/usr" -DPKG_CONFIG_EXECUTABLE=$D/pkg-config \
  -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$LIBS" > /tmp/npe-configure.log 2>&1 \
  || { tail -40 /tmp/npe-configure.log >&2; exit 1; }
targets=(npe); [ "$tests" = ON ] && targets+=(npe_core_tests)
# The build runs npe_core_tests to list its tests (gtest_discover_tests): it needs the unpacked
# libraries too, or the test build stops after linking with an error from that listing.
export LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake --build $B --target "${targets[@]}" -j"$(nproc)" -- "${keep_going[@]}" > /tmp/npe-build.log 2>&1 \
  || { grep -E -A6 'error' /tmp/npe-build.log | head -150 >&2; exit 1; }
# UDUNITS-2 reads its unit database from the unpacked libudunits2-data.
echo "export LD_LIBRARY_PATH=$LIBS\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} NPE_FASHION_MNIST_DIR=/tmp/fmnist UDUNITS2_XML_PATH=$D/usr/share/xml/udunits/udunits2.xml NPE=$B/app/npe/npe"
