#!/usr/bin/env python3
"""The table of an A/B of the adaptive host decode share: ResNet-50 records on JPEG files named
j-<variant>-t<threads>-<round>.json (resnet50_benchmark --data ... --compare-synthetic
--decode gpu --host-decode-share auto --loader-threads <threads>), in one or more folders.

  python3 benchmarks/python/summarize_share_ab.py FOLDER [FOLDER...]

Per variant and thread count: the runs whose loss fell (a run whose final loss is not below its
first, or not finite, headline.invalid_reason(), is listed as INVALID and left out), the median [min, max] of
data_to_synthetic_ratio, the share that ran (mean over the run) and at the end, the share's
moves down/up (where the record has them), the warm-up steps added for it to settle and the late
batches; then, per thread count, each variant's median over variant "old"'s (or the first in name
order).
Exit 2 when a folder holds no such record."""
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict

from headline import invalid_reason


def span(values, digits):
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:.{digits}f}" if lo == hi else f"{lo:.{digits}f}-{hi:.{digits}f}"


def main(folders):
    groups = defaultdict(list)
    invalid = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "j-*-t*-*.json"))):
            match = re.match(r"j-(.+)-t(\d+)-(\d+)\.json$", os.path.basename(path))
            if not match:
                continue
            record = json.load(open(path))
            first, final = record.get("first_loss"), record.get("final_loss")
            key = (match.group(1), int(match.group(2)))
            reason = invalid_reason(first, final)
            if reason:
                invalid.append(f"{path}: {reason} ({first} -> {final})")
                continue
            groups[key].append(record["metrics"])
    if not groups and not invalid:
        print("no j-<variant>-t<threads>-<round>.json records in " + ", ".join(folders),
              file=sys.stderr)
        return 2
    print("| variant | loader threads | runs (loss fell) | files / synthetic, median [min, max] "
          "| share that ran | share at the end | moves down / up | settle steps | late batches |")
    print("|---|---|---|---|---|---|---|---|---|")
    medians = {}
    for (variant, threads), runs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ratios = [m["data_to_synthetic_ratio"] for m in runs]
        medians[(variant, threads)] = statistics.median(ratios)
        def values(name):
            return [m[name] for m in runs if name in m]

        downs = values("loader_host_decode_share_moves_down")
        moves = f"{span(downs, 0)} / {span(values('loader_host_decode_share_moves_up'), 0)}"
        # Records that count moves and added no settling step have no settle figure: 0.
        settle = [m.get("loader_host_decode_share_settle_steps", 0) for m in runs] if downs else []
        print(f"| {variant} | {threads} | {len(runs)} | **{medians[(variant, threads)]:.4f}** "
              f"[{min(ratios):.4f}, {max(ratios):.4f}] "
              f"| {span(values('loader_host_decode_share'), 3)} "
              f"| {span(values('loader_host_decode_share_last'), 3)} "
              f"| {moves if downs else '-'} | {span(settle, 0)} "
              f"| {span(values('loader_late_batches'), 0)} |")
    for threads in sorted({t for _, t in medians}):
        variants = sorted(v for v, t in medians if t == threads)
        base = "old" if "old" in variants else variants[0]
        for v in (v for v in variants if v != base):
            print(f"\n{threads} threads: {v} / {base} = "
                  f"{medians[(v, threads)] / medians[(base, threads)]:.4f} (ratio of medians)")
    for line in invalid:
        print(f"\nINVALID, left out: {line}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
