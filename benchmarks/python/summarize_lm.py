#!/usr/bin/env python3
"""Summarises benchmarks/lm_side_by_side.sh's folder: per row (model and settings), gpuperf's
lm_benchmark records and each PyTorch variant's lines of peer.jsonl -> medians over repeats of
tokens/s, MFU (the same 6N + 6LCT count and datasheet peak for both sides), peak memory, compile
time, first and final loss (and the loss at each window's end where the records have it), and
gpuperf's ratio to the best variant that trained. A run whose final
loss is not finite or not below its first is INVALID: listed, never in a median. Where
lm_side_by_side.sh left power samples (<row>-<side>-<repeat>.power.jsonl: gpu_info --watch's
lines, taken the same way for both sides), a second table gives each side's median power and SM
clock on the GPU run.json names over its busy samples (utilisation >= 90%: the timed steps, not
the start-up or a compile). Writes lm.md and lm.json into the folder and prints the Markdown; exits 1 when a whole
side is INVALID.

    python3 summarize_lm.py <folder>
"""

import glob
import json
import math
import os
import re
import statistics
import sys


def invalid(first, final):
    if not isinstance(final, (int, float)) or not math.isfinite(final):
        return f"final loss {final} is not finite"
    if first is not None and not final < first:
        return f"loss did not fall ({first:.4f} -> {final:.4f})"
    return None


BUSY_PERCENT = 90


def power_samples(path, gpu):
    """(power W, SM clock MHz) of GPU `gpu` (its NVML index or UUID) in the gpu_info --watch
    --json lines at path where its utilisation is >= BUSY_PERCENT, and the count of all its
    samples; ([], 0) where there is no file. A line that does not parse (cut short when the
    sampler was stopped) or lacks a reading is left out."""
    if not os.path.exists(path):
        return [], 0
    busy, total = [], 0
    with open(path) as f:
        for line in f:
            try:
                sample = json.loads(line)
            except ValueError:
                continue
            devices = sample.get("devices", []) if isinstance(sample, dict) else []
            for d in devices:
                readings = (d.get("utilization_gpu_percent"), d.get("power_draw_watts"),
                            d.get("sm_clock_mhz"))
                if gpu not in (str(d.get("index")), d.get("uuid")) or None in readings:
                    continue
                total += 1
                if readings[0] >= BUSY_PERCENT:
                    busy.append(readings[1:])
    return busy, total


def peak_gib(runs):
    """The largest peak memory of the runs in GiB; None where none was measured (the CPU)."""
    peaks = [x["peak_memory_bytes"] for x in runs if x["peak_memory_bytes"] is not None]
    return max(peaks) / 2**30 if peaks else None


def power_summary(runs):
    """Median, least and largest power and SM clock over the busy samples of every run of a side;
    None where no run has one."""
    busy = [x for r in runs for x in r["power"][0]]
    if not busy:
        return None
    watts = [w for w, _ in busy]
    mhz = [m for _, m in busy]
    return {"busy": len(busy), "samples": sum(r["power"][1] for r in runs),
            "watts": [min(watts), statistics.median(watts), max(watts)],
            "mhz": [min(mhz), statistics.median(mhz), max(mhz)]}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = sys.argv[1]
    run = {}
    if os.path.exists(os.path.join(folder, "run.json")):
        with open(os.path.join(folder, "run.json")) as f:
            run = json.load(f)
    gpu = str(run.get("gpu", "0"))  # the GPU the power samples are read for
    sides = {}  # (row, side) -> list of runs
    peak = {}   # row -> datasheet peak FLOP/s (from gpuperf's records)
    for path in sorted(glob.glob(os.path.join(folder, "*-gpuperf-*.json"))):
        row = re.sub(r"-gpuperf-\d+\.json$", "", os.path.basename(path))
        with open(path) as f:
            r = json.load(f)
        m = r.get("metrics", {})
        peak[row] = m.get("datasheet_peak_flops_per_second")
        sides.setdefault((row, "gpuperf"), []).append({
            "tokens_per_second": m.get("tokens_per_second"),
            "flops_per_token": m.get("model_flops_per_token"),
            "peak_memory_bytes": r.get("peak_memory_bytes"),
            "first_loss": r.get("first_loss"), "final_loss": r.get("final_loss"),
            "window_losses": r.get("window_losses") or [],
            "compile_s": None, "detail": f"{r['config'].get('graph_mode')}, "
                                         f"{r['config'].get('kernel_fusion')}",
            "power": power_samples(path[:-len(".json")] + ".power.jsonl", gpu)})
    peer_path = os.path.join(folder, "peer.jsonl")
    if os.path.exists(peer_path):
        with open(peer_path) as f:
            for line in f:
                if not line.strip():
                    continue
                p = json.loads(line)
                sides.setdefault((p["row"], "pytorch " + p["variant"]), []).append({
                    "tokens_per_second": p["tokens_per_second"],
                    "flops_per_token": p["flops_per_token"],
                    "peak_memory_bytes": p["peak_memory_bytes"],
                    "first_loss": p["first_loss"], "final_loss": p["final_loss"],
                    "window_losses": p.get("window_losses") or [],
                    "compile_s": p.get("compile_s"), "detail": "torch " + p.get("torch", "?"),
                    "power": power_samples(os.path.join(
                        folder, f"{p['row']}-{p['variant']}-{p.get('repeat')}.power.jsonl"),
                        gpu)})
    rows = sorted({row for row, _ in sides})
    out = {"run": run, "rows": {}}
    lines = [f"# Language-model training, gpuperf vs PyTorch (commit {run.get('commit', '?')}, "
             f"{run.get('started_utc', '?')}, {run.get('repeats', '?')} repeats)", ""]
    failed = False
    for row in rows:
        table = {}
        for (r, side), runs in sides.items():
            if r != row:
                continue
            for x in runs:
                x["invalid"] = invalid(x["first_loss"], x["final_loss"])
            valid = [x for x in runs if x["invalid"] is None]
            if not valid:
                failed = True
            med = statistics.median(x["tokens_per_second"] for x in valid) if valid else None
            mfu = None
            if med and peak.get(row):
                mfu = med * valid[0]["flops_per_token"] / peak[row]
            compiles = [x["compile_s"] for x in runs if x["compile_s"] is not None]
            table[side] = {
                "runs": len(runs), "valid": len(valid), "tokens_per_second": med,
                "spread": [min(x["tokens_per_second"] for x in valid),
                           max(x["tokens_per_second"] for x in valid)] if valid else None,
                "mfu": mfu,
                # None on the CPU (no caching allocator to ask).
                "peak_memory_gib": peak_gib(runs),
                "compile_s": statistics.median(compiles) if compiles else None,
                "loss": [runs[-1]["first_loss"], runs[-1]["final_loss"]],
                "window_losses": runs[-1]["window_losses"],
                "window_losses_per_run": [x["window_losses"] for x in runs],
                "final_losses": [x["final_loss"] for x in runs],
                "invalid": [x["invalid"] for x in runs if x["invalid"]],
                "detail": runs[-1]["detail"],
                "power": power_summary(runs)}
        peers = {s: t for s, t in table.items() if s != "gpuperf" and t["tokens_per_second"]}
        best = max(peers, key=lambda s: peers[s]["tokens_per_second"]) if peers else None
        ours = table.get("gpuperf", {}).get("tokens_per_second")
        ratio = ours / peers[best]["tokens_per_second"] if ours and best else None
        out["rows"][row] = {"sides": table, "best_pytorch": best, "ratio_to_best": ratio}
        lines += [f"## {row}", "",
                  "| side | runs (valid) | tokens/s median [min, max] | MFU | peak memory | "
                  "compile | loss first -> final | gpuperf / side |",
                  "|---|---|---|---|---|---|---|---|"]
        order = sorted(table, key=lambda s: (s != "gpuperf", s))  # gpuperf first
        for side in order:
            t = table[side]
            tps = (f"{t['tokens_per_second']:,.0f} [{t['spread'][0]:,.0f}, {t['spread'][1]:,.0f}]"
                   if t["tokens_per_second"] else "INVALID")
            mfu = f"{100 * t['mfu']:.1f}%" if t["mfu"] else "-"
            comp = f"{t['compile_s']:.0f} s" if t["compile_s"] else "-"
            memory = (f"{t['peak_memory_gib']:.1f} GiB" if t["peak_memory_gib"] is not None
                      else "-")
            rel = (f"{ours / t['tokens_per_second']:.3f}x"
                   if ours and t["tokens_per_second"] and side != "gpuperf" else "")
            lines.append(f"| {side} ({t['detail']}) | {t['runs']} ({t['valid']}) | {tps} | {mfu} | "
                         f"{memory} | {comp} | "
                         f"{t['loss'][0]:.3f} -> {t['loss'][1]:.3f} | {rel} |")
            for why in t["invalid"]:
                lines.append(f"|   INVALID run: {why} | | | | | | | |")
        if ratio:
            lines += ["", f"gpuperf / best PyTorch variant that trained ({best}): "
                          f"**{ratio:.3f}x**"]
        # Every run's trajectory: whether the two sides agree is judged against each side's own
        # run-to-run spread, which one run a side cannot show.
        trajectories = [(side, i + 1, losses)
                        for side in order
                        for i, losses in enumerate(table[side]["window_losses_per_run"])
                        if losses]
        sampled = [side for side in order if table[side]["power"]]
        if sampled:
            lines += ["", f"Power and SM clock of GPU {gpu} over each side's busy samples "
                          f"(gpuperf's gpu_info every 250 ms, utilisation >= {BUSY_PERCENT}%; "
                          f"every run of the side):", "",
                      "| side | busy samples (of all) | power median [min, max] | "
                      "SM clock median [min, max] |", "|---|---|---|---|"]
            for side in sampled:
                w = table[side]["power"]
                lines.append(f"| {side} | {w['busy']} ({w['samples']}) | {w['watts'][1]:.0f} W "
                             f"[{w['watts'][0]:.0f}, {w['watts'][2]:.0f}] | {w['mhz'][1]:.0f} MHz "
                             f"[{w['mhz'][0]:.0f}, {w['mhz'][2]:.0f}] |")
        if trajectories:
            lines += ["", "Loss at each timed window's end (every run):", ""]
            for side, i, losses in trajectories:
                shown = ", ".join("-" if v is None else f"{v:.3f}" for v in losses)
                lines.append(f"- {side}, run {i}: {shown}")
        lines.append("")
    text = "\n".join(lines)
    with open(os.path.join(folder, "lm.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(folder, "lm.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
