#!/usr/bin/env bash
# Long `npe train` runs interrupted at random moments, to find memory errors that only a long,
# paused and stopped run reaches. (Issue 79's "corrupted size vs. prev_size" after SIGTERM of a
# bf16 TE-TNP-ND run was a signal handler's frame written over the heap by oneDNN's GEMM:
# app/npe/stop_signals.h.) Each round trains for a random time, is paused by SIGSTOP/SIGCONT
# (twice) and stopped by SIGTERM; the next round resumes the checkpoint. A round fails when npe
# does not exit 0 with its "stopped" line, when the sanitizer or glibc reports anything, or when
# the checkpoint does not resume.
#
#   tests/stress/train-under-signals.sh NPE OUTDIR KIND THREADS ROUNDS [TASK]
#
# NPE is the npe binary (a sanitizer build's, or a plain one run under glibc's malloc checks:
# LD_PRELOAD=libc_malloc_debug.so.0 GLIBC_TUNABLES=glibc.malloc.check=3). Seconds per round:
# $STRESS_MIN_S..$STRESS_MAX_S (default 8..40). Prints one line per round and a summary; exits
# non-zero on the first failure, its log kept in OUTDIR.
set -uo pipefail
npe=$1 out=$2 kind=$3 threads=$4 rounds=$5 task=${6:-gp1d}
min_s=${STRESS_MIN_S:-8} max_s=${STRESS_MAX_S:-40}
mkdir -p "$out"
checkpoint="$out/$kind-t$threads.pt"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
random_between() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }
# A random moment to the tenth of a second.
random_seconds() { echo "$(random_between $(($1 * 10)) $(($2 * 10)))e-1"; }
signals=0
for round in $(seq 1 "$rounds"); do
  log="$out/$kind-t$threads-round$round.log"
  if [ -f "$checkpoint" ]; then
    args=(--resume "$checkpoint" --steps 1000000)
  else
    args=(--model "$kind" --task "$task" --size small --steps 1000000 --batch-size 8
      --val-every 200 --val-tasks 16 --out "$checkpoint")
  fi
  # STRESS_GUARD=alternate: odd rounds run the tile products guarded (NPE_TILE_MATMUL_GUARD,
  # several times slower), even rounds every tensor against a guard page (NPE_GUARD_PAGES: a
  # write past a tensor's end faults, in code that ASan does not see too).
  guard_env=()
  if [ "${STRESS_GUARD:-}" = alternate ]; then
    if [ $((round % 2)) -eq 1 ]; then
      guard_env=(NPE_TILE_MATMUL_GUARD=1)
    else
      guard_env=(NPE_GUARD_PAGES=end NPE_GUARD_PAGES_ALIGNMENT=2)
    fi
  fi
  : >"$log"  # there before the wait below reads it
  env "${guard_env[@]}" "$npe" train "${args[@]}" --precision bf16 --threads "$threads" --checkpoint-every 50 \
    --progress-json </dev/null >"$log" 2>&1 &
  pid=$!
  # The signals count from the first step: before it, SIGTERM ends a program that has not yet
  # installed its handler (and has nothing to lose).
  until grep -q '"event":"progress"' "$log" || ! kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  for _ in 1 2; do
    sleep "$(random_seconds "$min_s" "$max_s")"
    kill -STOP "$pid" 2>/dev/null && sleep "$(random_seconds 1 3)" && kill -CONT "$pid"
    signals=$((signals + 2))
  done
  sleep "$(random_seconds 1 "$min_s")"
  kill -TERM "$pid"
  signals=$((signals + 1))
  wait "$pid"
  status=$?
  step=$(sed -n 's/^stopped .* at step \([0-9]*\) of.*/\1/p' "$log")
  if [ "$status" -ne 0 ] || [ -z "$step" ] ||
    grep -qE "ERROR: AddressSanitizer|runtime error:|malloc\(\)|free\(\)|corrupted|double free" "$log"; then
    echo "round $round${guard_env:+ (${guard_env[*]})}: FAILED (exit status $status); log $log"
    tail -n 40 "$log"
    exit 1
  fi
  echo "round $round${guard_env:+ (${guard_env[*]})}: stopped at step $step, exit status 0"
done
echo "$kind, $threads thread(s): $rounds rounds, $signals signals, last step $step, no error"
