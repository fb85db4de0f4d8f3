#!/usr/bin/env python3
"""Which operator launched a kernel, with its input shapes and dtypes, from a Kineto Chrome trace.

gpuperf's programs write the trace with --kernel-trace (operators' input shapes included); run the
step eagerly (--graph off) so that kernels carry their operator's "External id" (a replayed CUDA
graph launches its kernels without one):

    lm_benchmark --model gpt2 --graph off --warmup 3 --steps-per-window 2 --windows 1 \\
        --kernel-trace step.json
    python3 trace_ops.py step.json "CUDAFunctor_add"

Prints, most frequent first: how many kernels matched, the operator(s) that launched them with
their input dimensions and types, the launch grid and the kernel's duration in microseconds.
"""
import argparse
import collections
import sys

from profile_step import read_trace_events


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace", help="a Chrome trace (.json or .json.gz) from --kernel-trace")
    p.add_argument("pattern", help="a substring of the kernel names to explain")
    p.add_argument("--top", type=int, default=30, help="rows to print (default 30)")
    a = p.parse_args()
    try:
        events = read_trace_events(a.trace)
    except (OSError, ValueError) as e:
        print(f"trace_ops.py: cannot read {a.trace}: {e}", file=sys.stderr)
        return 2
    ops = collections.defaultdict(list)
    for e in events:
        args = e.get("args") or {}
        if e.get("cat") in ("cpu_op", "user_annotation") and "External id" in args:
            ops[args["External id"]].append(e)
    count = collections.Counter()
    for e in events:
        if e.get("cat") != "kernel" or a.pattern not in e.get("name", ""):
            continue
        args = e.get("args") or {}
        names = [o["name"] + str(o["args"].get("Input Dims", "")) + str(o["args"].get("Input type", ""))
                 for o in ops.get(args.get("External id"), [])]
        count[(" | ".join(names) or "? (no operator: a graph replay?)", str(args.get("grid")),
               round(e.get("dur", 0)))] += 1
    if not count:
        print(f"trace_ops.py: no kernel in {a.trace} matches '{a.pattern}'", file=sys.stderr)
        return 1
    for (op, grid, us), n in count.most_common(a.top):
        print(f"{n:6d}  {op}  grid {grid}  {us} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
