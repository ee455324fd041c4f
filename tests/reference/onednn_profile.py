#!/usr/bin/env python3
"""Where a training step's matrix products go: runs `npe bench train` on the reference workload
with oneDNN's verbose mode on and sums the execution time of every oneDNN primitive by problem
(shape, data types, post-ops), per training step, as a Markdown table (docs/history/benchmarks.md, "Where
the bf16 step goes").

    /usr/bin/python3 tests/reference/onednn_profile.py --npe build/app/npe/npe \
        --model tetnp --precision bf16 --threads 1

Verbose mode times each primitive's execution alone, so the table says what the products cost
and how fast each runs; the step time printed beside it (a second process without verbose mode)
says what everything else costs. Only the tile products of the TE attention kernel and of
BSA-TNP go through oneDNN; the model's other linear layers run in libtorch.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

TUNED_ALLOCATOR = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184"


def bench_command(args, steps, warmup):
    return [args.npe, "bench", "train", "--workload", "reference", "--models", args.model,
            "--threads", str(args.threads), "--precision", args.precision, "--steps", str(steps),
            "--warmup", str(warmup), "--json"]


def environment(args, verbose):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), GLIBC_TUNABLES=TUNED_ALLOCATOR)
    if verbose:
        env["ONEDNN_VERBOSE"] = "1"
        env["DNNL_VERBOSE"] = "1"  # oneDNN 2.x reads either name
    return env


def parse_exec_lines(text):
    """Yields (implementation, data types, post-ops, problem, milliseconds) per execution."""
    for line in text.splitlines():
        if not re.match(r"^(onednn|dnnl)_verbose,exec,", line):
            continue
        fields = line.split(",")
        # exec,engine,primitive,implementation,prop_kind,memory descriptors,attributes,
        # auxiliary,problem,time
        implementation, descriptors, attributes = fields[4], fields[6], fields[7]
        types = " ".join(d.split("::")[0] for d in descriptors.split())
        post_ops = re.findall(r"attr-post-ops:(\S+)", attributes)
        yield implementation, types, (post_ops[0] if post_ops else ""), fields[-2], float(
            fields[-1])


def gflops(problem):
    """Arithmetic of a matmul problem 'MxK:KxN:MxN' (2 M K N), in GFLOP."""
    match = re.match(r"^(\d+)x(\d+):(\d+)x(\d+)", problem)
    if not match:
        return None
    m, k, _, n = (int(g) for g in match.groups())
    return 2.0 * m * k * n / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npe", required=True)
    parser.add_argument("--model", default="tetnp")
    parser.add_argument("--precision", default="bf16", choices=["fp32", "bf16"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=3, help="timed steps under verbose mode")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--rows", type=int, default=25, help="problems listed, slowest first")
    args = parser.parse_args()

    verbose = subprocess.run(bench_command(args, args.steps, args.warmup),
                             env=environment(args, True), capture_output=True, text=True,
                             check=True)
    steps = args.steps + args.warmup  # verbose mode reports the warm-up steps too
    totals = collections.defaultdict(lambda: [0, 0.0])
    for implementation, types, post_ops, problem, ms in parse_exec_lines(verbose.stdout):
        entry = totals[(problem, types, post_ops, implementation)]
        entry[0] += 1
        entry[1] += ms
    if not totals:
        sys.exit("no oneDNN executions reported: is npe built with oneDNN (NPE_HAVE_ONEDNN)?")

    plain = subprocess.run(bench_command(args, 10, 2), env=environment(args, False),
                           capture_output=True, text=True, check=True)
    step_ms = json.loads(plain.stdout.strip().splitlines()[-1])[0]["median_ms"]

    onednn_ms = sum(ms for _, ms in totals.values()) / steps
    print(f"{args.model}, {args.precision}, {args.threads} thread(s): training step "
          f"{step_ms:.0f} ms (median of 10, no verbose mode); oneDNN products "
          f"{onednn_ms:.0f} ms per step ({100 * onednn_ms / step_ms:.0f} %)\n")
    print("| problem (M×K : K×N) | types (src wei [bias] dst) | post-ops | calls per step |"
          " ms per step | µs per call | GFLOP/s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = sorted(totals.items(), key=lambda kv: -kv[1][1])
    for (problem, types, post_ops, _), (calls, ms) in rows[:args.rows]:
        work = gflops(problem)
        rate = f"{work * calls / (ms / 1e3):.0f}" if work else "-"
        print(f"| {problem} | {types} | {post_ops or '-'} | {calls / steps:g} |"
              f" {ms / steps:.1f} | {1e3 * ms / calls:.0f} | {rate} |")


if __name__ == "__main__":
    main()
