#!/usr/bin/env python3
"""Times the reference workload with npe and with the authors' benchmark script in the same
sitting, in fresh processes interleaved round by round, and prints medians and ratios as a
Markdown table (the side-by-side table of BENCHMARKS.md).

    /usr/bin/python3 tests/reference/compare_speed.py --npe build/app/npe/npe \
        --reference ../shared/reference/official_bench/bench.py --rounds 3 --threads 2

Both sides get the same glibc allocator tuning (npe sets it itself with mallopt; the script
gets it through GLIBC_TUNABLES) and the same thread count. Each npe configuration (precision,
attention implementation) is a separate process per round.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

TUNED_ALLOCATOR = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184"


def run_reference(script, model, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), GLIBC_TUNABLES=TUNED_ALLOCATOR)
    out = subprocess.run([sys.executable, script, "--worker", "--model", model, "--threads",
                          str(threads)], env=env, capture_output=True, text=True, check=True)
    line = next(l for l in out.stdout.splitlines() if l.startswith("@@RESULT@@"))
    result = json.loads(line[len("@@RESULT@@"):])
    return result["train"]["median_ms"], result["inference"]["median_ms"]


def run_npe(npe, model, threads, precision, attention):
    common = ["--workload", "reference", "--models", model, "--threads", str(threads),
              "--precision", precision, "--te-attention", attention, "--json"]
    timings = []
    for suite in ("train", "latency"):
        out = subprocess.run([npe, "bench", suite] + common, capture_output=True, text=True,
                             check=True)
        timings.append(json.loads(out.stdout.strip().splitlines()[-1])[0]["median_ms"])
    return tuple(timings)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npe", required=True)
    parser.add_argument("--reference", required=True, help="path of official_bench/bench.py")
    parser.add_argument("--models", default="tetnp,tnp")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    configs = [("reference (PyTorch)", None, None), ("npe fp32, plain", "fp32", "plain"),
               ("npe fp32, fused", "fp32", "fused"), ("npe bf16, fused", "bf16", "fused")]
    rows = []
    for model in args.models.split(","):
        samples = {name: [] for name, _, _ in configs}
        for round_ in range(args.rounds):
            for name, precision, attention in configs:
                if precision is None:
                    timing = run_reference(args.reference, model, args.threads)
                else:
                    timing = run_npe(args.npe, model, args.threads, precision, attention)
                samples[name].append(timing)
                print(f"round {round_ + 1} {model} {name}: train {timing[0]:.1f} ms, "
                      f"predict {timing[1]:.2f} ms", file=sys.stderr, flush=True)
        reference_train = statistics.median(t for t, _ in samples[configs[0][0]])
        reference_predict = statistics.median(p for _, p in samples[configs[0][0]])
        for name, _, _ in configs:
            train = statistics.median(t for t, _ in samples[name])
            predict = statistics.median(p for _, p in samples[name])
            spread = ", ".join(f"{t:.0f}" for t, _ in samples[name])
            rows.append(f"| {model} | {name} | {train:.0f} ({spread}) | "
                        f"{reference_train / train:.2f}x | {predict:.1f} | "
                        f"{reference_predict / predict:.2f}x |")
    print("| model | implementation | training step ms, median of rounds (each round) | "
          "speed-up | prediction ms | speed-up |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
