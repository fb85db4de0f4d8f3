#!/usr/bin/env python3
"""Table of gpuperf vs the PyTorch peer from a side_by_side.sh output folder: per workload, the
median over repeats of each run's median window throughput, the spread over repeats, the ratio
of those medians, and peak memory; then, per model and precision, gpuperf's best row against the
best PyTorch variant measured in the same call."""
import glob
import json
import os
import statistics
import sys

from headline import invalid_reason


def best_variant_table(ours, peer):
    """Per model and precision: gpuperf's best row against the best PyTorch variant measured in
    the same call (eager, manual CUDA graph, torch.compile...), whatever row it came from. A
    ratio against PyTorch eager alone flatters on hosts where eager is host-bound."""
    groups = {}  # (model, precision) -> {"gpuperf": [(median, label)], "pytorch": [...]}
    for label, records in ours.items():
        c = records[0]["config"]
        med = statistics.median(r["throughput"]["median"] for r in records)
        groups.setdefault((c["model"], c["precision"]), {}).setdefault("gpuperf", []).append(
            (med, label))
    for label, rows in peer.items():
        med = statistics.median(r["median"] for r in rows)
        key = (rows[0]["model"], rows[0]["precision"])
        variant = f'{label} (fused {rows[0].get("fused", "off")}, graph {rows[0].get("graph", "off")}'
        compiled = rows[0].get("compile", "off") != "off"
        compile_s = [r["compile_s"] for r in rows if r.get("compile_s") is not None]
        variant += (f', compile {rows[0]["compile"]}, {statistics.median(compile_s):.0f} s to '
                    f'compile)' if compiled and compile_s else ")")
        groups.setdefault(key, {}).setdefault("pytorch", []).append((med, variant))
    print()
    print("Against the best PyTorch variant measured in this call, per model and precision:")
    print()
    print("| model | precision | best gpuperf (row) | best PyTorch (variant) | ratio |")
    print("|---|---|---|---|---|")
    for (model, precision), sides in sorted(groups.items()):
        if "gpuperf" not in sides or "pytorch" not in sides:
            continue
        g, p = max(sides["gpuperf"]), max(sides["pytorch"])
        print(f"| {model} | {precision} | {g[0]:,.0f} ({g[1]}) | {p[0]:,.0f} ({p[1]}) | "
              f"{g[0] / p[0]:.3f} |")


def main(folder):
    """Prints the tables; returns 1 when a row's gpuperf or PyTorch side has no run that trained
    (a final loss finite and below the first, as headline.py judges it), else 0. Runs that did
    not train are listed and left out of every figure."""
    invalid = []
    peer = {}
    with open(os.path.join(folder, "peer.jsonl")) as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                why = invalid_reason(row.get("first_loss"), row.get("final_loss"))
                if why:
                    invalid.append(f"{row['label']} PyTorch: {why} (first {row.get('first_loss')}, "
                                   f"final {row.get('final_loss')})")
                    peer.setdefault(row["label"], [])
                    continue
                peer.setdefault(row["label"], []).append(row)
    ours = {}
    for path in sorted(glob.glob(os.path.join(folder, "*-gpuperf-*.json"))):
        label = os.path.basename(path).split("-gpuperf-")[0]
        with open(path) as f:
            record = json.load(f)
        why = invalid_reason(record.get("first_loss"), record.get("final_loss"))
        if why:
            invalid.append(f"{os.path.basename(path)}: {why} (first {record.get('first_loss')}, "
                           f"final {record.get('final_loss')})")
            ours.setdefault(label, [])
            continue
        ours.setdefault(label, []).append(record)
    for line in invalid:
        print(f"INVALID {line}")
    empty = sorted([f"{label} gpuperf" for label, runs in ours.items() if not runs] +
                   [f"{label} PyTorch" for label, runs in peer.items() if not runs])
    ours = {label: runs for label, runs in ours.items() if runs}
    peer = {label: runs for label, runs in peer.items() if runs}
    print("| row | gpuperf (optimizer, mode) | gpuperf median (min-max) | PyTorch (fused, graph) | PyTorch median (min-max) | ratio | peak mem gpuperf / PyTorch |")
    print("|---|---|---|---|---|---|---|")
    for label in sorted(ours):
        g = [r["throughput"]["median"] for r in ours[label]]
        p = [r["median"] for r in peer.get(label, [])]
        gm = statistics.median(g)
        pm = statistics.median(p) if p else float("nan")
        gmem = max(r["peak_memory_bytes"] or 0 for r in ours[label]) / 2**30
        pmem = max(((r["peak_memory_bytes"] or 0) for r in peer.get(label, [])), default=0) / 2**30
        c = ours[label][0]["config"]
        mode = f'{c.get("optimizer_impl", "torch::optim")}, {c["graph_mode"]}'
        peer_rows = peer.get(label, [])
        peer_mode = f'{peer_rows[0].get("fused", "off")}, {peer_rows[0].get("graph", "off")}' if peer_rows else "n/a"
        p_range = f"({min(p):,.0f}-{max(p):,.0f})" if p else ""
        print(f"| {label} | {mode} | {gm:,.0f} ({min(g):,.0f}-{max(g):,.0f}) | {peer_mode} | {pm:,.0f} "
              f"{p_range} | {gm / pm:.3f} | {gmem:.2f} / {pmem:.2f} GiB |")

    best_variant_table(ours, peer)
    if empty:
        print(f"\nNo run that trained: {', '.join(empty)}", file=sys.stderr)

    print()
    print("| gpuperf run | mean power W | energy J (counter) | mean power x time J | difference | samples/J | % of datasheet peak |")
    print("|---|---|---|---|---|---|---|")
    for label in sorted(ours):
        for i, r in enumerate(ours[label], 1):
            t = r.get("telemetry", {})
            if not t.get("available"):
                print(f"| {label} #{i} | telemetry unavailable: {t.get('unavailable_reason', '')} | | | | | |")
                continue
            product = t["power_mean_watts"] * t["duration_seconds"]
            peak = r["metrics"].get("fraction_of_datasheet_peak")
            peak_text = f"{100 * peak:.1f}%" if peak else "n/a"
            print(f"| {label} #{i} | {t['power_mean_watts']:.0f} | {t['energy_joules']:.1f} "
                  f"({t['energy_source']}) | {product:.1f} | {100 * (t['energy_joules'] / product - 1):+.2f}% "
                  f"| {t['samples_per_joule']:.1f} | {peak_text} |")
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
