#!/usr/bin/env python3
"""The side-by-side summaries, run on committed H200 results (docs/results/2026-11-29-*):

  - summarize_inference.py flags a batch size whose p50 is above a larger batch size's (the
    committed PyTorch eager run has batch 1 at 6.304 ms above batch 64 at 5.017 ms), and stays
    quiet for a side whose latency grows with the batch size;
  - summarize_side_by_side.py sets each model and precision's best gpuperf row against the best
    PyTorch variant of the same call (bf16 seed: PyTorch's fused Adam in a CUDA graph, not eager).

  check_summaries.py <repository root>"""
import os
import subprocess
import sys


def run(root, script, folder):
    done = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "python", script),
                           os.path.join(root, "docs", "results", folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL: {script} exit {done.returncode}\n{done.stderr}")
        sys.exit(1)
    return done.stdout


def main():
    root = sys.argv[1]
    failures = []
    inference = run(root, "summarize_inference.py", "2026-11-29-h200-inference/side-by-side")
    guard = inference.split("Latency guard", 1)[-1].split("Targets", 1)[0]
    if "FLAG pytorch-eager: batch 1 p50 6.304 ms is above batch 64's 5.017 ms" not in guard:
        failures.append("the PyTorch eager batch-1 inversion is not flagged:\n" + guard)
    if "FLAG gpuperf-graph" in guard:
        failures.append("gpuperf-graph flagged although its p50 grows with the batch size")
    training = run(root, "summarize_side_by_side.py", "2026-11-29-h200/side-by-side")
    table = training.split("Against the best PyTorch variant", 1)[-1]
    bf16 = [line for line in table.splitlines() if line.startswith("| simple | bf16 |")]
    if not bf16 or "seed-bf16-graph (fused on, graph on)" not in bf16[0]:
        failures.append("the bf16 seed is not set against PyTorch's best (graph) variant:\n" +
                        table)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
