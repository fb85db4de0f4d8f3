#!/usr/bin/env python3
"""Summarises dp_side_by_side.sh's runs: per configuration the median over repeats of gpuperf's
and DDP's throughput (per GPU on 1 GPU, global on 2), scaling against each side's own 1-GPU
median, and the ratio gpuperf / DDP (ratio of medians). Prints a Markdown table.

    summarize_dp.py <out dir>
"""
import glob
import json
import os
import re
import statistics
import sys


def load(path):
    try:
        with open(path) as f:
            text = f.read().strip()
        return json.loads(text.splitlines()[-1]) if path.endswith(".json") else None
    except (OSError, ValueError, IndexError):
        return None


def main():
    out = sys.argv[1]
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        m = re.match(r"(gpuperf|ddp)-(1gpu|2gpu)(?:-(\w+))?-(\d+)\.json$", os.path.basename(path))
        doc = load(path)
        if not m or doc is None:
            continue
        side, gpus, variant, _ = m.groups()
        variant = variant or "default"
        if side == "gpuperf":
            dist = doc.get("distributed")
            value = dist["global_throughput"] if dist else doc["throughput"]["median"]
        else:
            value = doc["global_median"]
        rows.setdefault((gpus, variant), {}).setdefault(side, []).append(value)
    base = {side: statistics.median(rows.get(("1gpu", "default"), {}).get(side, [float("nan")]))
            for side in ("gpuperf", "ddp")}
    print("| GPUs | NCCL links | gpuperf samples/s | DDP samples/s | gpuperf / DDP | gpuperf scaling | DDP scaling | repeats |")
    print("|---|---|---|---|---|---|---|---|")
    for (gpus, variant), sides in sorted(rows.items()):
        g = statistics.median(sides.get("gpuperf", [float("nan")]))
        d = statistics.median(sides.get("ddp", [float("nan")]))
        n = 2 if gpus == "2gpu" else 1
        gs = g / (n * base["gpuperf"]) if base["gpuperf"] == base["gpuperf"] else float("nan")
        ds = d / (n * base["ddp"]) if base["ddp"] == base["ddp"] else float("nan")
        reps = f"{len(sides.get('gpuperf', []))}/{len(sides.get('ddp', []))}"
        print(f"| {n} | {variant} | {g:,.0f} | {d:,.0f} | {g / d:.3f}x | {100 * gs:.1f}% | {100 * ds:.1f}% | {reps} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
