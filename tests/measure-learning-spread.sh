#!/usr/bin/env bash
# Measures what the learning tests (a training run must lower a loss, a trained model must stay
# equivariant, ...) achieve under each BLAS kernel, thread count and seed, so that their
# thresholds come from the spread of those figures, not from one run (docs/developers/testing.md,
# "Learning tests"). Each test prints "[learning] NAME WHAT: before B after A"; this runs them
# under every combination and prints, per test, the range of B - A (or of A, B) it saw.
#
#   tests/measure-learning-spread.sh [BUILD_DIR]
#   CORETYPES="unset Haswell Sandybridge" THREADS="1 2" SEEDS="0 1 2" tests/measure-learning-spread.sh
#
# OPENBLAS_CORETYPE=SkylakeX is measured only where the CPU has AVX-512 (elsewhere OpenBLAS
# runs instructions the CPU lacks and the program dies). OMP_WAIT_POLICY=PASSIVE keeps the
# 2-thread runs fast on a busy machine. Raw lines go to BUILD_DIR/learning-spread.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
coretypes=${CORETYPES:-"unset Haswell SkylakeX Sandybridge"}
threads=${THREADS:-"1 2"}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
seeds=${SEEDS:-"0 1 2"}
core_filter='*ShortTrainingRunLowersTheLoss*:LearningCriterion.*:Era5Files.SeArdGpFit*'
core_filter+=':TrainingJobTest.RecordsLoss*:BsaTnp.TrainsOnAStep*'
cli_filter='NpeTrainJob.TwoRanksOverLoopback*'
raw="$build/learning-spread.txt"
: >"$raw"

for coretype in $coretypes; do
  if [ "$coretype" = SkylakeX ] && ! grep -q avx512f /proc/cpuinfo; then
    echo "measure-learning-spread: no AVX-512 here, SkylakeX left out" >&2
    continue
  fi
  for t in $threads; do
    for seed in $seeds; do
      env_args=(OMP_NUM_THREADS="$t" NPE_LEARNING_TEST_SEED="$seed")
      if [ "$coretype" = unset ]; then
        env_args=(-u OPENBLAS_CORETYPE "${env_args[@]}")
      else
        env_args=(OPENBLAS_CORETYPE="$coretype" "${env_args[@]}")
      fi
      echo "measure-learning-spread: OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=$t seed $seed" >&2
      programs=("$build/tests/core/npe_core_tests --gtest_filter=$core_filter")
      # The data-parallel test has no seed of its own: run it once per kernel and thread count.
      [ "$seed" = "${seeds%% *}" ] &&
        programs+=("$build/tests/app/npe_training_cli_test --gtest_filter=$cli_filter")
      for program in "${programs[@]}"; do
        # shellcheck disable=SC2086
        env "${env_args[@]}" $program 2>&1 | { grep '^\[learning\]' || true; } |
          sed "s/^/$coretype $t $seed /" >>"$raw"
      done
    done
  done
done

python3 - "$raw" <<'EOF'
# Per figure: how far B - A moved between kernels and thread counts at one seed (the summation
# order alone), the range of B - A over everything, and the ranges of B and A.
import collections, re, sys
rows = collections.defaultdict(list)
pattern = re.compile(r"^(\S+) (\d+) (\d+) \[learning\] (.+): before (\S+) after (\S+)$")
for line in open(sys.argv[1]):
    m = pattern.match(line.strip())
    if m:
        coretype, threads, seed, what, before, after = m.groups()
        rows[what].append((coretype, int(threads), int(seed), float(before), float(after)))
print(f"{'test and figure':<96} {'runs':>4} {'order':>9} {'B-A min':>9} {'B-A max':>9} "
      f"{'B min':>9} {'B max':>9} {'A min':>9} {'A max':>9}")
for what, values in sorted(rows.items()):
    drops = [b - a for *_, b, a in values]
    by_seed = collections.defaultdict(list)
    for _, _, seed, b, a in values:
        by_seed[seed].append(b - a)
    order = max(max(d) - min(d) for d in by_seed.values())
    befores = [b for *_, b, _ in values]
    afters = [a for *_, a in values]
    print(f"{what:<96} {len(values):>4} {order:>9.3g} {min(drops):>9.4g} {max(drops):>9.4g} "
          f"{min(befores):>9.4g} {max(befores):>9.4g} {min(afters):>9.4g} {max(afters):>9.4g}")
EOF
