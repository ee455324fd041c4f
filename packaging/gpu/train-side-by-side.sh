#!/usr/bin/env bash
# Run ON the lent GPU machine, after `eval "$(bash packaging/gpu/build-npe.sh | tail -1)"`:
# trains several models side by side on the one GPU until a deadline, then brings their
# resumable checkpoints back. Each training gets its share of the cores (with all of them each,
# three processes stalled one another in session 38), is stopped with SIGTERM (on which npe
# writes its checkpoint) well before the command's own limit, and its checkpoint is split into
# parts of 15 MiB under $OUT (files over 16 MiB do not come back), its metadata and log in
# $OUT/runs.tgz. Here, join the parts with `cat NAME.pt.part-* > NAME.pt`, put NAME.pt.json from
# runs.tgz beside it, and continue with `npe train --resume NAME.pt`.
#
# Settings (environment):
#   NPE       the npe binary (set by build-npe.sh's output)
#   OUT       where the files that come back go (set by the device tool)
#   DEADLINE  seconds from now at which the trainings are stopped (default 420)
#   MODELS    model kinds, one training each (default "tetnp convcnp")
#   TASK, SIZE, BATCH, DEVICE   as npe train's options (default gp1d, paper, 64, cuda)
#   RESUME    a folder of KIND.pt checkpoints (carried in .device/) to continue instead
#   STEPS     the planned total steps (default 200000: the deadline ends the run)
#   TRAIN_ARGS  more npe train options for every training (e.g. "--precision fp32": a resumed
#             run otherwise keeps the precision it last trained in, bf16 for CPU-trained ones)
set -uo pipefail
: "${NPE:?run build-npe.sh first}" "${OUT:?}"
deadline=$(( $(date +%s) + ${DEADLINE:-420} ))
models=(${MODELS:-tetnp convcnp})
task=${TASK:-gp1d} size=${SIZE:-paper} batch=${BATCH:-64} device=${DEVICE:-cuda}
threads=$(( $(nproc) / ${#models[@]} )); (( threads >= 1 )) || threads=1
run=/tmp/npe-runs; mkdir -p $run
declare -A pids
for kind in "${models[@]}"; do
  name=$task-$kind-$size
  if [ -n "${RESUME:-}" ] && [ -f "$RESUME/$kind.pt" ]; then
    name=$kind  # comes back under the name it went out with
    cp "$RESUME/$kind.pt" $run/$name.pt
    [ -f "$RESUME/$kind.pt.json" ] && cp "$RESUME/$kind.pt.json" $run/$name.pt.json
    args=(--resume $run/$name.pt)
  else
    args=(--model $kind --task $task --size $size --batch-size $batch --seed 7
          --val-every 1000 --out $run/$name.pt)
  fi
  "$NPE" train "${args[@]}" --device $device --threads $threads --steps ${STEPS:-200000} \
    --checkpoint-every 500 ${TRAIN_ARGS:-} > $run/$name.log 2>&1 &
  pids[$name]=$!
  echo "started $name (pid ${pids[$name]}, $threads threads)"
done
while (( $(date +%s) < deadline )); do
  alive=0; for pid in "${pids[@]}"; do kill -0 $pid 2>/dev/null && alive=1; done
  (( alive )) || break
  sleep 2
done
for pid in "${pids[@]}"; do kill -TERM $pid 2>/dev/null; done
# Writing a checkpoint takes seconds; one that hangs must not hold the others' results back.
for i in $(seq 60); do
  alive=0; for pid in "${pids[@]}"; do kill -0 $pid 2>/dev/null && alive=1; done
  (( alive )) || break
  sleep 1
done
for name in "${!pids[@]}"; do
  kill -0 ${pids[$name]} 2>/dev/null && { echo "$name: still running 60 s after SIGTERM, killed"; kill -KILL ${pids[$name]}; }
  wait ${pids[$name]}; echo "$name: exit $?"
  tr '\r' '\n' < $run/$name.log | tail -2
  [ -f $run/$name.pt ] || { echo "$name: no checkpoint written"; continue; }
  (cd $run && split -b 15M $name.pt "$OUT/$name.pt.part-")
done
# Metadata and logs in one file: at most 8 files come back.
(cd $run && tar czf "$OUT/runs.tgz" *.json *.log)
ls -l "$OUT"
