#!/usr/bin/env python3
"""Batch norm GPU time of one ResNet-50 training step (the second traced step), by pass, in two
kernel traces: the reducing passes (statistics / backward reduce, with the totals kernels where
there are any) and the elementwise passes, forward and backward, summed over the 53 batch norms.
Usage: pass_table.py <trace A> <trace B> (names the columns by the file names)"""
import gzip
import json
import os
import sys


def step(path):
    d = json.load(gzip.open(path))
    ks = sorted((e for e in d["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    starts = [i for i, e in enumerate(ks) if "pad_channels_kernel" in e["name"]]
    return ks[starts[1]:starts[2]]


def passes(kernels):
    t = {"forward reduce": 0.0, "forward totals": 0.0, "forward apply": 0.0,
         "backward reduce": 0.0, "backward totals": 0.0, "backward apply": 0.0}
    counts = {"launches": 0}
    for e in kernels:
        n = e["name"]
        if "gpuperf::detail" not in n:
            continue
        side = "backward" if "backward" in n else "forward"
        if "statistics_kernel" in n or "backward_reduce_kernel" in n:
            key = side + " reduce"
        elif "finalize_kernel" in n:
            key = side + " totals"
        elif "apply_kernel" in n:
            key = side + " apply"
        else:
            continue
        t[key] += e["dur"]
        counts["launches"] += 1
    return t, counts["launches"]


cols = [(os.path.basename(p).split(".")[0], *passes(step(p))) for p in sys.argv[1:3]]
print("| pass (us per step, 53 batch norms) | " + " | ".join(c[0] for c in cols) + " |")
print("|---|" + "---|" * len(cols))
for key in cols[0][1]:
    print(f"| {key} | " + " | ".join(f"{c[1][key]:,.0f}" for c in cols) + " |")
print("| all | " + " | ".join(f"{sum(c[1].values()):,.0f}" for c in cols) + " |")
print("| launches | " + " | ".join(str(c[2]) for c in cols) + " |")
