#!/usr/bin/env python3
"""Summarizes an inference_side_by_side.sh output folder: per batch size, the median over
repeats of the p50 latency (and of batch / p50) of gpuperf (graph, eager) and PyTorch (graph,
eager), the ratios, and the checks of issue #6's targets.

    python3 summarize_inference.py <output dir>
"""
import glob
import json
import os
import statistics
import sys


def main():
    out = sys.argv[1]
    p50 = {}   # (side, batch) -> [p50 seconds per repeat]
    tail = {}  # (side, batch) -> [p99/p50 per repeat]
    for mode in ("graph", "eager"):
        for path in sorted(glob.glob(os.path.join(out, f"gpuperf-{mode}-*.json"))):
            with open(path) as f:
                record = json.load(f)
            if mode == "graph" and not record["cuda_graph"]:
                print(f"warning: {path}: no CUDA graph ({record['graph_fallback_reason']})")
            for b in record["batches"]:
                key = (f"gpuperf-{mode}", b["batch_size"])
                p50.setdefault(key, []).append(b["latency"]["p50_s"])
                tail.setdefault(key, []).append(b["latency"]["p99_over_p50"])
    with open(os.path.join(out, "peer.jsonl")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                key = (f"pytorch-{r['mode']}", r["batch_size"])
                p50.setdefault(key, []).append(r["p50_s"])
                tail.setdefault(key, []).append(r["p99_s"] / r["p50_s"])
    sides = ["gpuperf-graph", "gpuperf-eager", "pytorch-graph", "pytorch-eager"]
    batches = sorted({b for _, b in p50})
    med = {k: statistics.median(v) for k, v in p50.items()}
    print("p50 latency, ms (median over repeats; repeats per cell: "
          f"{min(len(v) for v in p50.values())}-{max(len(v) for v in p50.values())})\n")
    print("| batch | " + " | ".join(sides) + " | gpuperf-graph / pytorch-graph | "
          "gpuperf-graph img/s | pytorch-graph img/s | pytorch-eager img/s |")
    print("|---:|" + "---:|" * (len(sides) + 4))
    for b in batches:
        cells = [f"{med[(s, b)] * 1e3:.3f}" if (s, b) in med else "-" for s in sides]
        g, pg, pe = (med.get((s, b)) for s in ("gpuperf-graph", "pytorch-graph", "pytorch-eager"))
        ratio = f"{g / pg:.3f}" if g and pg else "-"
        rates = [f"{b / v:,.0f}" if v else "-" for v in (g, pg, pe)]
        print(f"| {b} | " + " | ".join(cells) + f" | {ratio} | " + " | ".join(rates) + " |")

    print("\nTargets (issue #6):")
    g1, pg1, pe1 = (med.get((s, 1)) for s in ("gpuperf-graph", "pytorch-graph", "pytorch-eager"))
    if g1 and pg1 and pe1:
        print(f"- batch-1 p50: gpuperf {g1 * 1e3:.3f} ms vs PyTorch graph {pg1 * 1e3:.3f} ms "
              f"(ratio {g1 / pg1:.3f}, target <= 1): {'met' if g1 <= pg1 else 'MISSED'}")
        print(f"- batch-1 p50 vs PyTorch eager {pe1 * 1e3:.3f} ms: {g1 / pe1:.3f} of it "
              f"(target <= 1/3): {'met' if g1 <= pe1 / 3 else 'MISSED'}")
        t = statistics.median(tail[("gpuperf-graph", 1)])
        print(f"- batch-1 p99/p50 (gpuperf graph, median over repeats) {t:.3f} "
              f"(target <= 1.05): {'met' if t <= 1.05 else 'MISSED'}")
    best = {s: max(((b / med[(s, b)], b) for b in batches if (s, b) in med), default=None)
            for s in sides}
    ours = max(x for x in (best["gpuperf-graph"], best["gpuperf-eager"]) if x)
    theirs = max(x for x in (best["pytorch-graph"], best["pytorch-eager"]) if x)
    print(f"- best throughput: gpuperf {ours[0]:,.0f} img/s (batch {ours[1]}) vs PyTorch "
          f"{theirs[0]:,.0f} img/s (batch {theirs[1]}): ratio {ours[0] / theirs[0]:.3f} "
          f"(target >= 1.0): {'met' if ours[0] >= theirs[0] else 'MISSED'}")


if __name__ == "__main__":
    sys.exit(main())
