#!/usr/bin/env python3
"""Summarizes a micro_side_by_side.sh output folder: one Markdown row per measurement with the
median over repeats of gpuperf's and PyTorch's per-run medians and their ratio (gpuperf / PyTorch),
then gpuperf's seeds' table from its last run.

    python3 summarize_micro.py <output dir>
"""
import glob
import json
import os
import statistics
import sys


def main():
    out = sys.argv[1]
    ours, theirs, status = {}, {}, {}
    runs = sorted(glob.glob(os.path.join(out, "gpuperf-*.json")))
    for path in runs:
        with open(path) as f:
            record = json.load(f)
        for r in record["results"]:
            if r["median"] is not None:
                ours.setdefault(r["name"], []).append(r["median"])
            else:
                status[r["name"]] = r["status"]
    with open(os.path.join(out, "peer.jsonl")) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r.get("median") is not None:
                theirs.setdefault(r["name"], []).append(r["median"])
            else:
                status.setdefault(r["name"], "PyTorch " + r.get("status", "no result"))
    names = list(dict.fromkeys(list(ours) + list(theirs) + list(status)))
    unit = {}
    if runs:
        with open(runs[-1]) as f:
            unit = {r["name"]: r["unit"] for r in json.load(f)["results"]}
    print(f"{len(runs)} gpuperf runs, {max((len(v) for v in theirs.values()), default=0)} PyTorch runs\n")
    print("| measurement | unit | gpuperf median | PyTorch median | ratio |")
    print("|---|---|---:|---:|---:|")
    for name in names:
        a = statistics.median(ours[name]) if name in ours else None
        b = statistics.median(theirs[name]) if name in theirs else None
        ratio = f"{a / b:.3f}" if a and b else status.get(name, "-")
        fa = f"{a:.1f}" if a is not None else "-"
        fb = f"{b:.1f}" if b is not None else "-"
        print(f"| {name} | {unit.get(name, '')} | {fa} | {fb} | {ratio} |")
    if runs:
        md = runs[-1][:-len(".json")] + ".md"
        if os.path.exists(md):
            print("\ngpuperf's table (last run):\n")
            with open(md) as f:
                print(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
