#!/usr/bin/env python3
"""Does a headline reproduce? Sets two headline.json files (headline.py's output, e.g. from two
machines) side by side: per row, every side's median and the gpuperf-vs-best ratio, with the
change from the first to the second. A change above --tolerance (default 3%) is flagged, except
for the peers headline.py marks host-bound (their figures follow the host CPU, not the GPU); those
are listed but not judged. Exit 1 when anything is flagged, 2 for unreadable input.

    python3 compare_headlines.py first/headline.json second/headline.json [--tolerance 0.03]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headline import HOST_SENSITIVE  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            table = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"compare_headlines.py: cannot read {path}: {e}")
    if not str(table.get("schema", "")).startswith("gpuperf.headline/"):
        raise SystemExit(f"compare_headlines.py: {path} is not a gpuperf.headline file")
    return {(r["section"], r["batch_size"], r["unit"]): r for r in table["rows"]}, table["meta"]


def figure(value, unit):
    if unit == "s":
        return f"{value * 1e3:.3f} ms"
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3f}"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--tolerance", type=float, default=0.03,
                   help="largest relative change that counts as reproduced (default 0.03)")
    a = p.parse_args(argv)
    if not 0 < a.tolerance < 1:
        p.error(f"--tolerance: must be > 0 and < 1, got {a.tolerance}")
    first, meta1 = load(a.first)
    second, meta2 = load(a.second)
    print(f"first: {meta1.get('date')}, commit {meta1.get('commit')}; "
          f"second: {meta2.get('date')}, commit {meta2.get('commit')}\n")
    print("| workload | side | first | second | change | |")
    print("|---|---|---|---|---|---|")
    flagged = 0
    for key in [k for k in first if k in second]:
        r1, r2 = first[key], second[key]
        unit = r1["unit"]
        # A side headline.py marked INVALID (no run proved it trained) has no figure: null
        # gpuperf and ratio, a variant left out of "pytorch". It is listed, not compared.
        cells = [("gpuperf", r1["gpuperf"] and r1["gpuperf"]["median"],
                  r2["gpuperf"] and r2["gpuperf"]["median"], False)]
        for variant in r1["pytorch"]:
            if variant in r2["pytorch"]:
                cells.append((variant, r1["pytorch"][variant]["median"],
                              r2["pytorch"][variant]["median"],
                              (r1["section"], variant) in HOST_SENSITIVE))
        cells.append(("gpuperf vs best", r1["gpuperf_vs_best"], r2["gpuperf_vs_best"], False))
        for i, (side, v1, v2, host_bound) in enumerate(cells):
            shown = "ratio" if i == len(cells) - 1 else unit
            if v1 is None or v2 is None:
                print(f"| {r1['workload']} | {side} | "
                      f"{'INVALID' if v1 is None else figure(v1, shown)} | "
                      f"{'INVALID' if v2 is None else figure(v2, shown)} | - | not compared |")
                continue
            change = v2 / v1 - 1
            if host_bound:
                verdict = "host-bound, not judged"
            elif abs(change) > a.tolerance:
                verdict = "FLAG"
                flagged += 1
            else:
                verdict = "ok"
            print(f"| {r1['workload']} | {side} | {figure(v1, shown)} | {figure(v2, shown)} | "
                  f"{100 * change:+.1f}% "
                  f"| {verdict} |")
    missing = sorted(set(first) ^ set(second))
    for key in missing:
        print(f"- only in {'the first' if key in first else 'the second'}: {key[0]}"
              f"{'' if key[1] is None else f' batch {key[1]}'} ({key[2]})")
    print(f"{flagged} change(s) above {100 * a.tolerance:g}%")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
