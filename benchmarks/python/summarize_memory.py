#!/usr/bin/env python3
"""Predicted vs measured peak memory of benchmarks/memory_validation.sh's records.

Usage: summarize_memory.py <dir>   (writes <dir>/memory.md and <dir>/memory.json)

Each record carries the planner's prediction (predicted_peak_allocated_bytes,
predicted_peak_reserved_bytes) and the caching allocator's measured peaks (peak_memory_bytes,
peak_reserved_bytes); a row's error is predicted / measured - 1. A run whose loss is not finite or
did not fall is marked INVALID. The batch searches (--batch-size max) give the largest batch that
trained and the smallest that did not.
"""
import json
import math
import pathlib
import sys

GIB = 1024.0 ** 3


def gib(value):
    return "-" if value is None or not math.isfinite(value) else f"{value / GIB:.2f}"


def pct(value):
    return "-" if value is None or not math.isfinite(value) else f"{100 * value:+.1f}%"


def load(path):
    record = json.loads(path.read_text())
    m = record.get("metrics", {})
    c = record["config"]

    def metric(name):
        v = m.get(name)
        return float("nan") if v is None else float(v)

    first, final = record.get("first_loss"), record.get("final_loss")
    trained = (final is not None and first is not None and math.isfinite(final)
               and final < first)
    row = {
        "name": path.stem,
        "model": c["model"],
        "batch_size": c["batch_size"],
        "sequence": int(metric("sequence_length")) if math.isfinite(metric("sequence_length")) else None,
        "precision": c["precision"],
        "graph_mode": c["graph_mode"],
        "checkpointing": "ckpt" in path.stem,
        "measured_allocated": record.get("peak_memory_bytes"),
        "measured_reserved": metric("peak_reserved_bytes"),
        "predicted_allocated": metric("predicted_peak_allocated_bytes"),
        "predicted_reserved": metric("predicted_peak_reserved_bytes"),
        "activation_bytes_per_sample": metric("activation_bytes_per_sample"),
        "first_loss": first,
        "final_loss": final,
        "trained": trained,
        "command": record.get("command"),
    }
    for kind in ("allocated", "reserved"):
        p, q = row[f"predicted_{kind}"], row[f"measured_{kind}"]
        row[f"error_{kind}"] = p / q - 1 if q and math.isfinite(p) and math.isfinite(q) else float("nan")
    if "batch_search_largest_fitting" in m:
        row["largest_fitting"] = int(m["batch_search_largest_fitting"])
        row["smallest_failing"] = int(m["batch_search_smallest_failing"])
        row["tries"] = int(m["batch_search_tries"])
    return row


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = pathlib.Path(sys.argv[1])
    rows = [load(p) for p in sorted(folder.glob("*.json"))
            if p.name not in ("run.json", "memory.json")]
    run = json.loads((folder / "run.json").read_text()) if (folder / "run.json").exists() else {}
    lines = [f"# Predicted vs measured peak memory (commit {run.get('commit', '?')}, "
             f"{run.get('started_utc', '?')})", "",
             "| run | model | batch | seq | ckpt | measured alloc GiB | predicted GiB | error | "
             "measured reserved GiB | predicted GiB | error | loss |",
             "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    worst = 0.0
    for r in rows:
        if "largest_fitting" in r:
            continue
        loss = (f"{r['first_loss']:.3f} -> {r['final_loss']:.3f}" if r["trained"]
                else f"INVALID ({r['first_loss']} -> {r['final_loss']})")
        if r["trained"] and math.isfinite(r["error_allocated"]):
            worst = max(worst, abs(r["error_allocated"]))
        lines.append(
            f"| {r['name']} | {r['model']} | {r['batch_size']} | {r['sequence'] or '-'} | "
            f"{'yes' if r['checkpointing'] else 'no'} | {gib(r['measured_allocated'])} | "
            f"{gib(r['predicted_allocated'])} | {pct(r['error_allocated'])} | "
            f"{gib(r['measured_reserved'])} | {gib(r['predicted_reserved'])} | "
            f"{pct(r['error_reserved'])} | {loss} |")
    lines += ["", f"Largest allocated-peak error over the valid rows: {100 * worst:.1f}%", ""]
    searches = [r for r in rows if "largest_fitting" in r]
    if searches:
        lines += ["## --batch-size max", "",
                  "| run | model | largest batch that trained | smallest that did not | tries | "
                  "measured at it: alloc GiB | reserved GiB | loss |",
                  "|---|---|---:|---:|---:|---:|---:|---|"]
        for r in searches:
            loss = (f"{r['first_loss']:.3f} -> {r['final_loss']:.3f}" if r["trained"] else "INVALID")
            lines.append(f"| {r['name']} | {r['model']} | {r['largest_fitting']} | "
                         f"{r['smallest_failing'] or 'none up to the limit'} | {r['tries']} | "
                         f"{gib(r['measured_allocated'])} | {gib(r['measured_reserved'])} | {loss} |")
        lines.append("")
    (folder / "memory.md").write_text("\n".join(lines))
    (folder / "memory.json").write_text(json.dumps({"run": run, "rows": rows}, indent=2) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
