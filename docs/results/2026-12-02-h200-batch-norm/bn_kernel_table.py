#!/usr/bin/env python3
"""Per batch norm of one ResNet-50 training step (the first traced step), forward and backward GPU
time on cuDNN's kernels (a trace of the baseline) against gpuperf's (a trace of the new tree):
kernels matched by their order in the step. Usage: bn_kernel_table.py <cuDNN trace> <own trace>"""
import gzip
import json
import sys


def kernels(path):
    d = json.load(gzip.open(path))
    return sorted((e for e in d["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])


def cudnn_calls(path, step_kernels):
    fwd, bwd = [], []
    for e in step_kernels:
        if "batchnorm" in e["name"]:
            (bwd if "bwtr" in e["name"] else fwd).append(e["dur"])
    return fwd, bwd


def own_calls(step_kernels):
    fwd, bwd, current = [], [], None
    for e in step_kernels:
        n = e["name"]
        if "gpuperf::detail" not in n:
            continue
        if "statistics_kernel" in n:
            current = [e["dur"]]
            fwd.append(current)
        elif "backward_reduce_kernel" in n:
            current = [e["dur"]]
            bwd.append(current)
        elif current is not None and ("finalize_kernel" in n or "apply_kernel" in n):
            current.append(e["dur"])
    return [sum(c) for c in fwd], [sum(c) for c in bwd]


def first_step(ks, marker):
    # The trace holds 5 steps; a step starts at the stem's pad kernel.
    starts = [i for i, e in enumerate(ks) if marker in e["name"]]
    return ks[starts[0]:starts[1]] if len(starts) > 1 else ks


base = first_step(kernels(sys.argv[1]), "pad_channels_kernel")
new = first_step(kernels(sys.argv[2]), "pad_channels_kernel")
bf, bb = cudnn_calls(sys.argv[1], base)
of, ob = own_calls(new)
bb.reverse()  # the backward runs the batch norms in reverse order
ob.reverse()
print("| batch norm (forward order) | cuDNN fwd us | gpuperf fwd us | cuDNN bwd us | gpuperf bwd us |")
print("|---|---|---|---|---|")
for i in range(min(len(bf), len(of))):
    print(f"| {i} | {bf[i]:.1f} | {of[i]:.1f} | {bb[i]:.1f} | {ob[i]:.1f} |")
print(f"| all {min(len(bf), len(of))} | {sum(bf):.0f} | {sum(of):.0f} | {sum(bb):.0f} | {sum(ob):.0f} |")
