#!/usr/bin/env python3
"""Summarizes an inference_side_by_side.sh output folder: per batch size, the median over
repeats of the p50 latency (and of batch / p50) of each gpuperf mode (gpuperf-<mode>-<r>.json:
default, graph, eager) and each PyTorch mode (peer.jsonl: graph, eager), gpuperf's default against
PyTorch's CUDA graph, and the checks of issue #6's targets.

    python3 summarize_inference.py <output dir>
"""
import glob
import json
import os
import re
import statistics
import sys


def latency_inversions(med, sides, batches):
    """FLAG lines for every side and batch size whose median p50 is above a larger batch
    size's: a batch of 1 should never take longer per call than a batch of 2."""
    lines = []
    for s in sides:
        measured = [b for b in batches if (s, b) in med]
        for i, b in enumerate(measured):
            for larger in measured[i + 1:]:
                if med[(s, b)] > med[(s, larger)]:
                    lines.append(f"- FLAG {s}: batch {b} p50 {med[(s, b)] * 1e3:.3f} ms is above "
                                 f"batch {larger}'s {med[(s, larger)] * 1e3:.3f} ms")
    return lines


def main():
    out = sys.argv[1]
    p50 = {}   # (side, batch) -> [p50 seconds per repeat]
    tail = {}  # (side, batch) -> [p99/p50 per repeat]
    notes = {}
    for path in sorted(glob.glob(os.path.join(out, "gpuperf-*-*.json"))):
        mode = re.match(r"gpuperf-(.+)-\d+\.json", os.path.basename(path)).group(1)
        with open(path) as f:
            record = json.load(f)
        side = f"gpuperf-{mode}"
        # gpuperf.inference/3 names the graph mode; /1 and /2 wrote the boolean cuda_graph.
        graph = (record["graph_mode"] == "cuda-graph" if "graph_mode" in record
                 else record["cuda_graph"])
        notes[side] = (f"{'CUDA graph' if graph else 'eager'}, fusion "
                       f"{record.get('kernel_fusion', 'none')}")
        if record["graph_fallback_reason"]:
            print(f"warning: {path}: {record['graph_fallback_reason']}")
        for b in record["batches"]:
            p50.setdefault((side, b["batch_size"]), []).append(b["latency"]["p50_s"])
            tail.setdefault((side, b["batch_size"]), []).append(b["latency"]["p99_over_p50"])
    with open(os.path.join(out, "peer.jsonl")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                side = f"pytorch-{r['mode']}"
                notes[side] = f"PyTorch {r['torch']}, {r['mode']}"
                p50.setdefault((side, r["batch_size"]), []).append(r["p50_s"])
                tail.setdefault((side, r["batch_size"]), []).append(r["p99_s"] / r["p50_s"])
    order = ["gpuperf-default", "gpuperf-graph", "gpuperf-eager", "pytorch-frozen-graph",
             "pytorch-graph", "pytorch-eager"]
    sides = [s for s in order if s in notes] + sorted(s for s in notes if s not in order)
    ours = "gpuperf-default" if "gpuperf-default" in notes else "gpuperf-graph"
    batches = sorted({b for _, b in p50})
    med = {k: statistics.median(v) for k, v in p50.items()}
    counts = [len(v) for v in p50.values()]
    print(f"p50 latency, ms (median over repeats; repeats per cell: {min(counts)}-{max(counts)})")
    for s in sides:
        print(f"- {s}: {notes[s]}")
    print("\n| batch | " + " | ".join(sides) + f" | {ours} / pytorch-graph | " +
          " | ".join(f"{s} img/s" for s in sides) + " |")
    print("|---:|" + "---:|" * (2 * len(sides) + 1))
    for b in batches:
        cells = [f"{med[(s, b)] * 1e3:.3f}" if (s, b) in med else "-" for s in sides]
        g, pg = med.get((ours, b)), med.get(("pytorch-graph", b))
        ratio = f"{g / pg:.3f}" if g and pg else "-"
        rates = [f"{b / med[(s, b)]:,.0f}" if (s, b) in med else "-" for s in sides]
        print(f"| {b} | " + " | ".join(cells) + f" | {ratio} | " + " | ".join(rates) + " |")

    inversions = latency_inversions(med, sides, batches)
    print("\nLatency guard (a batch size slower per call than a larger one points at a bad kernel "
          "choice):")
    for line in inversions or ["- none: p50 grows with the batch size on every side"]:
        print(line)

    print(f"\nTargets (issue #6), gpuperf = {ours}:")
    g1, pg1, pe1 = (med.get((s, 1)) for s in (ours, "pytorch-graph", "pytorch-eager"))
    if g1 and pg1 and pe1:
        print(f"- batch-1 p50: gpuperf {g1 * 1e3:.3f} ms vs PyTorch graph {pg1 * 1e3:.3f} ms "
              f"(ratio {g1 / pg1:.3f}, target <= 1): {'met' if g1 <= pg1 else 'MISSED'}")
        print(f"- batch-1 p50 vs PyTorch eager {pe1 * 1e3:.3f} ms: {g1 / pe1:.3f} of it "
              f"(target <= 1/3): {'met' if g1 <= pe1 / 3 else 'MISSED'}")
        t = statistics.median(tail[(ours, 1)])
        print(f"- batch-1 p99/p50 (median over repeats) {t:.3f} "
              f"(target <= 1.05): {'met' if t <= 1.05 else 'MISSED'}")

    def best(prefix):
        return max(((b / med[(s, b)], b, s) for (s, b) in med if s.startswith(prefix)),
                   default=None)

    mine, theirs = best(ours), best("pytorch-")
    if mine and theirs:
        print(f"- best throughput: gpuperf {mine[0]:,.0f} img/s (batch {mine[1]}) vs PyTorch "
              f"{theirs[0]:,.0f} img/s (batch {theirs[1]}, {theirs[2]}): ratio "
              f"{mine[0] / theirs[0]:.3f} (target >= 1.0): "
              f"{'met' if mine[0] >= theirs[0] else 'MISSED'}")


if __name__ == "__main__":
    sys.exit(main())
