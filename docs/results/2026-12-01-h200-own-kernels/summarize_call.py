#!/usr/bin/env python3
"""Medians of the call's runs, by variant: training img/s (median window) and inference p50 per
batch size. Usage: summarize_call.py <logs folder>"""
import glob
import json
import os
import statistics
import sys

logs = sys.argv[1]
rows = {}
for path in sorted(glob.glob(os.path.join(logs, "*.json"))):
    name = os.path.basename(path)[:-5]
    variant, _, repeat = name.rpartition("-")
    try:
        d = json.load(open(path))
    except ValueError:
        continue
    if "throughput" in d:
        rows.setdefault(variant, []).append(
            (d["throughput"]["median"], d.get("peak_memory_bytes", 0) / 2**30))
    elif "batches" in d:
        rows.setdefault(variant, []).append(tuple(
            (b["batch_size"], 1e3 * statistics.median(b["latencies_s"])) for b in d["batches"]))
for variant, runs in rows.items():
    if isinstance(runs[0][0], tuple):  # inference: per batch size
        by_batch = {}
        for run in runs:
            for batch, p50 in run:
                by_batch.setdefault(batch, []).append(p50)
        cells = ", ".join(f"b{b} {statistics.median(v):.3f} ms ({min(v):.3f}-{max(v):.3f})"
                          for b, v in sorted(by_batch.items()))
        print(f"{variant:36s} p50 {cells}")
    else:
        rates = [r for r, _ in runs]
        print(f"{variant:36s} {statistics.median(rates):9,.0f} /s ({min(rates):,.0f}-{max(rates):,.0f}),"
              f" peak {max(m for _, m in runs):.2f} GiB, {len(runs)} runs")
