#!/usr/bin/env bash
# Runs a GoogleTest program in shards (GTEST_TOTAL_SHARDS), JOBS processes side by side, and fails
# if any shard fails; a shard's log is printed only when it fails.
#   tests/run-gtest-shards.sh PROGRAM JOBS [GTEST_ARGUMENTS...]
# For CI's repeat runs (another BLAS kernel, the sanitizer builds): ctest starts a process per
# test case, and a process that loads libtorch takes about a second to start (1.3 s measured
# for a one-case run beside a build here; more under AddressSanitizer), minutes over the 442
# core cases. The README's
# test command keeps ctest, which isolates every case; this is for suites that pass there.
# Four shards per job even out the slow suites, which sit next to each other in the program.
set -uo pipefail
program=${1:?program} jobs=${2:?jobs}
shift 2
shards=$((4 * jobs))
logs=$(mktemp -d)
export program logs shards
run_shard() {
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$1 "$program" "${@:2}" >"$logs/shard$1.log" 2>&1
  echo $? >"$logs/shard$1.status"
}
export -f run_shard
seq 0 $((shards - 1)) | xargs -P "$jobs" -I{} bash -c 'run_shard "$@"' _ {} "$@"
failed=0 passed=0 skipped=0
for ((i = 0; i < shards; i++)); do
  status=$(cat "$logs/shard$i.status" 2>/dev/null || echo "none")
  if [ "$status" = 0 ]; then
    passed=$((passed + $(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$logs/shard$i.log")))
    skipped=$((skipped + $(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$logs/shard$i.log" | head -n 1 | grep . || echo 0)))
  else
    echo "shard $i of $shards of $program FAILED (exit status $status); its log:"
    cat "$logs/shard$i.log"
    failed=1
  fi
done
echo "$program: $passed test cases passed, $skipped skipped, in $shards shards"
# The slowest cases, so that a CI log shows where a phase's minutes go.
sed -n 's/^\[       OK \] \(.*\) (\([0-9]*\) ms)$/\2 \1/p' "$logs"/shard*.log | sort -rn | head -n 5 |
  awk '{printf "  slowest: %s %.1f s\n", $2, $1 / 1000}'
rm -rf "$logs"
exit $failed
