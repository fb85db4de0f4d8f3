#!/usr/bin/env python3
"""Summarizes an interconnect_side_by_side.sh output folder: per measurement (P2P copies, NCCL
collectives' bus bandwidth) the median over repeats of gpuperf's and PyTorch's per-run medians,
their ratio, and what the link should give: the datasheet's NVLink figure per direction (half the
quoted bidirectional total; H200 NVLink 4: 900 GB/s total, 450 GB/s per direction) for one-way
copies and bus bandwidths, the total for bidirectional copies.

    python3 summarize_interconnect.py <output dir>
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_micro import load, print_last_markdown, print_rows  # noqa: E402


def main():
    ours, theirs, status, unit, runs = load(sys.argv[1])
    total, links = None, []
    if runs:
        with open(runs[-1]) as f:
            record = json.load(f)
        total = record.get("datasheet", {}).get("link_gb_s")
        links = record.get("peer_links", [])
        print(f"Datasheet: {record.get('datasheet', {}).get('name') or 'no match'}; link "
              + (f"{total:.0f} GB/s bidirectional total, {total / 2:.0f} GB/s per direction"
                 if total else "figure unknown"))
        for link in links:
            print(f"- cuda:{link['src']} -> cuda:{link['dst']}: {link['detail'] or link['type']}, "
                  f"P2P access {'on' if link['p2p_access'] else 'off'}")
        print()

    def reference(name):
        if not total or name.startswith("p2p/latency"):
            return "-"
        figure = total if name.startswith("p2p/bidirectional") else total / 2
        values = ours.get(name)
        share = f" ({100 * statistics.median(values) / figure:.0f}%)" if values else ""
        return f"{figure:.0f}{share}"

    print_rows(ours, theirs, status, unit, runs, reference)
    print_last_markdown(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
