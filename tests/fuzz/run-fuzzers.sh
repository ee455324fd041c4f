#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a while and fails if any finds a crash.
#   tests/fuzz/run-fuzzers.sh BUILD_DIR SECONDS_PER_TARGET [TARGET...]
# SECONDS_PER_TARGET 0 only replays the regression inputs.
# Seeds: tests/fuzz/seeds/<target>, plus files found at run time (the shipped models'
# metadata, the smallest shipped checkpoint, ecCodes' GRIB samples). Every input in
# tests/fuzz/regressions/<target> (crashes found before, now fixed) is replayed first.
# Crash reproducers go to $FUZZ_OUT (default BUILD_DIR/fuzz-out), with each target's log.
# $FUZZ_JOBS targets run at once (default 2: one per core of the CI machine); $FUZZ_SEED seeds
# libFuzzer (default 1, so CI runs repeat); $FUZZ_RUNS, when set, also stops each target after
# that many executions (for the long runs: give a generous SECONDS_PER_TARGET and FUZZ_RUNS);
# $FUZZ_TIMEOUT is the seconds one input may take before it counts as a hang (default 30; a long
# run that is paused with SIGSTOP now and then needs more, or the pause is reported as a hang).
set -euo pipefail
build=${1:?build dir}
seconds=${2:?seconds per target}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${FUZZ_OUT:-$build/fuzz-out}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_checkpoint_metadata fuzz_checkpoint_archive fuzz_point_table fuzz_idx
           fuzz_picture fuzz_gridded_field fuzz_session)
fi
mkdir -p "$out"
# The file loaders read each input back from a scratch file in $TMPDIR: on a tmpfs, not the disk
# (fuzz_point_table: 2,307 against 256 executions a second on a disk-backed /tmp, 2026-11-23).
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
# Leaks inside Debian's libtorch and HDF5 on their error paths (see the file) are not ours.
export LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

seed_corpus() {  # target -> folder of seeds (fresh copy: libFuzzer adds to its corpus)
  local target=$1 corpus="$out/corpus/$1"
  mkdir -p "$corpus"
  local name=${target#fuzz_}
  if [ -d "$here/seeds/$name" ]; then cp "$here/seeds/$name"/* "$corpus"/; fi
  case $name in
    checkpoint_metadata)
      for f in "$root"/models/*/*.pt.json; do
        cp "$f" "$corpus/$(basename "$(dirname "$f")")-$(basename "$f")"
      done ;;
    checkpoint_archive) cp "$root/models/gp1d/cnp.pt" "$corpus"/ ;;
    gridded_field)
      for f in regular_ll_sfc_grib1 regular_ll_sfc_grib2 GRIB1 GRIB2; do
        [ -f "/usr/share/eccodes/samples/$f.tmpl" ] && cp "/usr/share/eccodes/samples/$f.tmpl" "$corpus/$f.grib"
      done ;;
  esac
  echo "$corpus"
}

fuzz_one() {  # target -> 0 when it ran clean
  local target=$1 binary="$build/tests/fuzz/$1" name=${1#fuzz_} status=0
  # Memory actually used is capped at 3 GiB. libFuzzer also fails any single malloc above that
  # cap, but libnetcdf's classic-format reader mallocs what a header claims (15 GB for a 324-byte
  # file) before it checks the header against the file and refuses it (E2BIG), touching none of
  # it: with glibc the program's resident size stays at 16 MB and it answers in 0.02 s. Under
  # AddressSanitizer the same malloc poisons shadow memory for all 15 GB (36 s, a timeout). For
  # the gridded readers (C libraries, malloc) a malloc above 3 GiB therefore returns NULL, as on a
  # machine without that much memory, which the libraries report as an error; a C++ new above it
  # still stops the run (ASan reports it), and resident memory is still capped.
  #
  # fuzz_gridded_field reads in a reader server forked from the fuzzer (reader_server.h): a
  # sanitizer report there stops the run, while a signal in a library (a library crashing on a
  # corrupt file, which the programs' child exists to contain) does not. Library faults that a
  # sanitizer's interceptor reports (HDF5's bad memcpy calls) are told apart from the project's
  # bugs by the report (reader_server.cpp): no suppression file, which would also hide a library
  # writing past a buffer the project handed it.
  local limits=(-rss_limit_mb=3072)
  case $name in
    checkpoint_archive)
      # A long run's resident size grows by ~0.6 KB an execution with no leak reported (memory
      # still reachable, in libtorch or the fuzzer; session 19), ~7 GB over 10 M. Resident
      # memory may reach 12 GiB; one allocation is still capped at 3 GiB.
      limits=(-rss_limit_mb=12288 -malloc_limit_mb=3072)
      # ASan records each allocation's stack; unwound through libtorch (no frame pointers) they
      # all look new, and its stack depot grew until it took 43 % of the time (~400 against ~820
      # executions a second by 2 M; sessions 19 and 20). Two frames keep it small. A report
      # then shows two frames of where memory was allocated or freed: replay the reproducer
      # with ASAN_OPTIONS=malloc_context_size=30 for the whole stack.
      export ASAN_OPTIONS="malloc_context_size=2${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
    gridded_field)
      limits+=(-malloc_limit_mb=1048576)
      # A 32 MB quarantine (default 256) keeps the parent small, and fork() cheaper: 155 against
      # 128 executions a second (session 19). Use-after-free is still caught for 32 MB of frees.
      export ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=3072:quarantine_size_mb=32${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
  esac
  if [ -d "$here/regressions/$name" ]; then
    echo "fuzz: $target: replaying $(ls "$here/regressions/$name" | wc -l) regression inputs"
    "$binary" "${limits[@]}" "$here/regressions/$name"/* > "$out/$target.regressions.log" 2>&1 || {
      echo "fuzz: $target: a regression input fails again (see $out/$target.regressions.log)"; status=1; }
  fi
  if [ "$seconds" = 0 ]; then return $status; fi  # regressions only
  local corpus
  corpus=$(seed_corpus "$target")
  # Archive and NetCDF/GRIB inputs are larger than libFuzzer's default maximum length.
  local max_len=4096
  case $name in checkpoint_archive) max_len=200000 ;; gridded_field) max_len=16384 ;; esac
  local log="$out/$target.log" started
  started=$(date +%s)
  if [ -n "${FUZZ_RUNS:-}" ]; then limits+=(-runs="$FUZZ_RUNS"); fi
  if "$binary" "$corpus" -max_total_time="$seconds" -max_len=$max_len "${limits[@]}" \
       -timeout="${FUZZ_TIMEOUT:-30}" -seed="${FUZZ_SEED:-1}" -print_final_stats=1 -artifact_prefix="$out/$target-" > "$log" 2>&1; then
    local runs
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    echo "fuzz: $target: ${runs:-?} executions in $(( $(date +%s) - started ))s, no crash"
  else
    echo "fuzz: $target: FAILED (reproducer in $out/$target-*; log $log)"
    grep -m 5 -E "ERROR|SUMMARY|terminate|what\(\)" "$log" || tail -n 20 "$log"
    status=1
  fi
  return $status
}

export build seconds here root out
export -f fuzz_one seed_corpus
printf '%s\n' "${targets[@]}" | xargs -P "${FUZZ_JOBS:-2}" -I{} bash -c 'fuzz_one "$1"' _ {}
