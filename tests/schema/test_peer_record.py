#!/usr/bin/env python3
"""The Python peers' --record files (CTest: schema_python_peer_record).

  test_peer_record.py --root SRC --compare GPUPERF_COMPARE

Runs benchmarks/python/train_peer.py and infer_peer.py against the stand-in for torch in
tests/schema/stub_torch (no PyTorch here; with STUB_TORCH_CUDA=1 it pretends to have a GPU), so
their figures measure nothing: what is checked is the record path. Each peer still prints what it
printed before; with --record it writes a file that validates against docs/schema/ (strictly),
holds the printed figures and the settings as they ran, and that the real gpuperf_compare reads
beside the golden records. Exit 1 listing the failed checks, 77 without jsonschema."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import check_schemas  # noqa: E402 - exits 77 without jsonschema
from test_gpuperf_results import Checks, compare_row, run  # noqa: E402

# What train_peer.py printed before --record existed, plus the torch.compile fields (compile,
# compile_s), the proof that it trained (first_loss, skipped_steps), --rewrite and the JPEG
# input (data, loader, loader_workers; null without --data): the line's keys must stay these,
# whatever --record does.
TRAIN_KEYS = {"peer", "torch", "model", "batch_size", "precision", "memory_format", "rewrite",
              "optimizer", "fused", "graph", "compile", "compile_s", "median", "windows",
              "peak_memory_bytes", "first_loss", "final_loss", "skipped_steps", "time", "data",
              "loader", "loader_workers"}
INFER_KEYS = {"model", "precision", "memory_format", "mode", "batch_size", "iterations", "p50_s",
              "p90_s", "p95_s", "p99_s", "max_s", "throughput_median", "throughput_overall",
              "compile_s", "peak_memory_bytes", "torch", "gpu"}


def peer(root, script, args, cwd, cuda=False):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "stub_torch")] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["STUB_TORCH_CUDA"] = "1" if cuda else "0"
    command = [sys.executable, os.path.join(root, "benchmarks", "python", script)] + args
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        print(proc.stderr)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--compare", required=True, help="the gpuperf_compare program")
    args = parser.parse_args()
    schemas = check_schemas.Schemas(os.path.join(args.root, "docs", "schema"))
    golden = os.path.join(args.root, "tests", "fixtures", "golden")
    t = Checks()

    with tempfile.TemporaryDirectory(prefix="gpuperf-peers-") as work:
        # Without --record: the line as before, and no file (in bf16, which skips no step).
        tiny_run = ["--device", "cpu", "--batch-size", "4", "--warmup", "1",
                    "--steps-per-window", "2", "--windows", "3"]
        seed_settings = tiny_run + ["--precision", "fp32"]  # the golden seed record's
        code, lines = peer(args.root, "train_peer.py", tiny_run + ["--precision", "bf16"], work)
        t.that(code == 0 and len(lines) == 1 and set(lines[0]) == TRAIN_KEYS and
               (lines[0]["precision"], lines[0]["skipped_steps"]) == ("bf16", 0),
               f"train_peer.py prints its one line as before, bf16 skipping no step: {lines}")
        t.that(os.listdir(work) == [], "train_peer.py without --record writes no file")

        # The golden seed record's configuration, recorded.
        record = os.path.join(work, "train-cpu.json")
        code, lines = peer(args.root, "train_peer.py", seed_settings + ["--record", record], work)
        t.that(code == 0 and len(lines) == 1 and set(lines[0]) == TRAIN_KEYS,
               "train_peer.py --record prints the same line")
        with open(record, encoding="utf-8") as f:
            doc = json.load(f)
        errors = schemas.errors(doc, "run-1", strict=True)
        t.that(not errors, f"train_peer.py's record validates (strict): {errors[:3]}")
        if lines:
            t.that(doc["window_throughput"] == lines[0]["windows"],
                   "the record holds the printed windows")
            t.that(math.isclose(doc["throughput"]["median"], lines[0]["median"], rel_tol=1e-12),
                   "the record's median is the printed one")
        c = doc["config"]
        t.that((c["model"], c["batch_size"], c["precision"], c["optimizer_impl"], c["graph_mode"],
                c["warmup_steps"], c["steps_per_window"], doc["timer"], doc["total_steps"]) ==
               ("simple", 4, "fp32", "torch.optim", "eager", 1, 2, "steady-clock", 7),
               f"the record's settings are the run's: {c}")
        t.that(lines and (doc["first_loss"], doc["final_loss"], doc["skipped_steps"]) ==
               (lines[0]["first_loss"], lines[0]["final_loss"], 0) == (0.25, 0.25, 0),
               "the record holds the printed first and final losses and no skipped step")
        code, _ = peer(args.root, "train_peer.py", ["--model", "resnet50", "--rewrite", "on"], work)
        t.that(code == 2, f"--rewrite on with another model than the seed's: exit 2, got {code}")
        t.that(lines and (lines[0]["data"], lines[0]["loader"], lines[0]["loader_workers"]) ==
               (None, None, None), "without --data the line says no files fed it")
        missing = os.path.join(work, "no-such-folder")
        for bad, what in ((["--model", "resnet50", "--data", missing], "a --data that is no folder"),
                          (["--data", work], "--data with the seed model (32x32 inputs)"),
                          (["--model", "resnet50", "--data", work, "--loader-workers", "-1"],
                           "--loader-workers -1")):
            code, _ = peer(args.root, "train_peer.py", bad, work)
            t.that(code == 2, f"{what}: exit 2, got {code}")
        code, out = run([args.compare, os.path.join(golden, "seed.json"), record])
        row = compare_row(out, record)
        t.that(code == 0 and row is not None and row[-1] in ("faster", "slower", "same"),
               f"gpuperf_compare judges train_peer.py's record against the golden one "
               f"(exit {code}): {row}")

        # On a (pretended) GPU: fp16 with the GradScaler, CUDA graph, fused optimizer.
        record = os.path.join(work, "train-cuda.json")
        code, lines = peer(args.root, "train_peer.py", ["--device", "cuda", "--batch-size", "4",
                                                        "--precision", "fp16", "--warmup", "2",
                                                        "--steps-per-window", "2", "--windows", "3",
                                                        "--graph", "on", "--fused", "on",
                                                        "--record", record], work, cuda=True)
        t.that(code == 0, "train_peer.py --graph on --fused on --record runs")
        if code == 0:
            with open(record, encoding="utf-8") as f:
                doc = json.load(f)
            errors = schemas.errors(doc, "run-1", strict=True)
            t.that(not errors, f"its record validates (strict): {errors[:3]}")
            c = doc["config"]
            t.that((c["graph_mode"], c["optimizer_impl"], c["grad_scaler"], c["warmup_steps"],
                    doc["timer"], doc["device"]["kind"], doc["device"]["name"],
                    doc["device"]["compute_capability"], doc["peak_memory_bytes"]) ==
                   ("cuda-graph", "fused", True, 5, "cuda-event", "cuda", "Stub GPU", "9.0",
                    1 << 30),
                   f"the record's settings and device are the run's: {c} {doc['device']}")

        # infer_peer.py: one line per batch size as before; the sweep as gpuperf.inference/3.
        record = os.path.join(work, "infer.json")
        code, lines = peer(args.root, "infer_peer.py", ["--model", "simple", "--precision", "fp32",
                                                        "--memory-format", "contiguous",
                                                        "--batch-sizes", "1,2", "--warmup", "1",
                                                        "--iterations", "5", "--mode", "graph",
                                                        "--record", record], work, cuda=True)
        t.that(code == 0 and len(lines) == 2 and all(set(line) == INFER_KEYS for line in lines),
               f"infer_peer.py prints one line per batch size as before: {lines}")
        if code == 0:
            with open(record, encoding="utf-8") as f:
                doc = json.load(f)
            errors = schemas.errors(doc, "inference-3", strict=True)
            t.that(not errors, f"infer_peer.py's result validates (strict): {errors[:3]}")
            t.that([b["batch_size"] for b in doc["batches"]] == [1, 2] and
                   all(math.isclose(b["latency"]["p50_s"], line["p50_s"], rel_tol=1e-12)
                       for b, line in zip(doc["batches"], lines)),
                   "the result holds the printed p50s")
            # The stub's peak grows by 1 MiB a reset: one reset per batch size, read after it.
            peaks = [line["peak_memory_bytes"] for line in lines]
            t.that(peaks == [(1 << 30) + (1 << 20), (1 << 30) + (2 << 20)] and
                   [b["peak_memory_bytes"] for b in doc["batches"]] == peaks,
                   f"each batch size's peak memory, after its own reset, printed and recorded: "
                   f"{peaks}")
            t.that((doc["graph_mode"], doc["warmup"], doc["iterations"], doc["timer"]) ==
                   ("cuda-graph", 1 + 1 + 3, 5, "cuda-event"),
                   "the result's settings are the run's")
            code, out = run([args.compare, os.path.join(golden, "inference.json"), record])
            t.that(code == 0 and compare_row(out, record) is not None,
                   f"gpuperf_compare reads infer_peer.py's result (exit {code})")

    print(f"{t.passed} checks passed, {len(t.failed)} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
