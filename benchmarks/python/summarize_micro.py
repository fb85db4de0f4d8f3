#!/usr/bin/env python3
"""Summarizes a micro_side_by_side.sh output folder: one Markdown row per measurement with the
median over repeats of gpuperf's and PyTorch's per-run medians and their ratio (gpuperf / PyTorch),
then gpuperf's seeds' table from its last run.

    python3 summarize_micro.py <output dir>

load() and print_rows() are shared with summarize_interconnect.py.
"""
import glob
import json
import os
import statistics
import sys


def load(out):
    """gpuperf's per-run medians, PyTorch's, statuses of what did not run, units, run files."""
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
    unit = {}
    if runs:
        with open(runs[-1]) as f:
            unit = {r["name"]: r["unit"] for r in json.load(f)["results"]}
    return ours, theirs, status, unit, runs


def print_rows(ours, theirs, status, unit, runs, reference=None):
    """The side-by-side table; `reference(name)` may add a last column (e.g. the link figure)."""
    names = list(dict.fromkeys(list(ours) + list(theirs) + list(status)))
    print(f"{len(runs)} gpuperf runs, {max((len(v) for v in theirs.values()), default=0)} PyTorch runs\n")
    extra = " expected |" if reference else ""
    print("| measurement | unit | gpuperf median | PyTorch median | ratio |" + extra)
    print("|---|---|---:|---:|---:|" + ("---:|" if reference else ""))
    for name in names:
        a = statistics.median(ours[name]) if name in ours else None
        b = statistics.median(theirs[name]) if name in theirs else None
        ratio = f"{a / b:.3f}" if a and b else status.get(name, "-")
        fa = f"{a:.1f}" if a is not None else "-"
        fb = f"{b:.1f}" if b is not None else "-"
        tail = f" {reference(name)} |" if reference else ""
        print(f"| {name} | {unit.get(name, '')} | {fa} | {fb} | {ratio} |" + tail)


def print_last_markdown(runs, intro="gpuperf's table (last run):"):
    if runs:
        md = runs[-1][:-len(".json")] + ".md"
        if os.path.exists(md):
            print(f"\n{intro}\n")
            with open(md) as f:
                print(f.read())


def main():
    ours, theirs, status, unit, runs = load(sys.argv[1])
    print_rows(ours, theirs, status, unit, runs)
    print_last_markdown(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
