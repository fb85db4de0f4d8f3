#!/usr/bin/env python3
"""Tests of libgpuperf/python/gpuperf_results.py (CTest: schema_python_module).

  test_gpuperf_results.py --root SRC --compare GPUPERF_COMPARE --report GPUPERF_REPORT

A training record and an inference result written with the module validate against
docs/schema/ (strictly: every field the C++ writers always write), and the real gpuperf_compare
and gpuperf_report read them beside the golden records (exit 0, the module's record compared
with the golden one). The golden records load, tabulate and match the module's statistics;
load() and the writers refuse what gpuperf's readers refuse. Exit 1 listing the failed checks,
77 when jsonschema is missing (checks against the schemas cannot run)."""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import check_schemas  # noqa: E402 - exits 77 without jsonschema


class Checks:
    def __init__(self):
        self.failed = []
        self.passed = 0

    def that(self, condition, what):
        if condition:
            self.passed += 1
        else:
            self.failed.append(what)
            print(f"FAIL: {what}")

    def raises(self, error, call, what):
        try:
            call()
        except error as e:
            self.passed += 1
            print(f"ok: {what}: {e}")
            return
        self.failed.append(what)
        print(f"FAIL: {what}: no {error.__name__}")


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def run(command):
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          check=False)
    return proc.returncode, proc.stdout + proc.stderr


def compare_row(output, path):
    """The gpuperf_compare table row of `path` (Markdown cells), or None."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if path in cells:
            return cells
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--compare", required=True, help="the gpuperf_compare program")
    parser.add_argument("--report", required=True, help="the gpuperf_report program")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.root, "libgpuperf", "python"))
    import gpuperf_results as gr

    schemas = check_schemas.Schemas(os.path.join(args.root, "docs", "schema"))
    golden = os.path.join(args.root, "tests", "golden")
    t = Checks()

    # The module says the project's version.
    with open(os.path.join(args.root, "CMakeLists.txt"), encoding="utf-8") as f:
        project = re.search(r"project\(gpuperf VERSION ([0-9.]+)", f.read()).group(1)
    t.that(gr.__version__ == project, f"__version__ {gr.__version__} is the project's {project}")

    # Golden records: load, kinds, device objects, rows, the statistics gpuperf computed.
    seed = gr.load(os.path.join(golden, "seed.json"))
    inference = gr.load(os.path.join(golden, "inference.json"))
    micro = gr.load(os.path.join(golden, "micro.json"))
    resnet = gr.load(os.path.join(golden, "resnet50.json"), kinds={"train"})
    t.that([gr.kind_of(d) for d in (seed, inference, micro, resnet)] ==
           ["train", "inference", "micro", "train"], "golden records' kinds")
    t.that(gr.device_of(seed)["name"] == seed["device"]["name"], "device_of(run record)")
    t.that(gr.device_of(inference)["kind"] == "cpu", "device_of(inference result)")
    v1 = inference
    if inference["schema"].endswith("/2"):
        v1 = check_schemas.inference_v2_to_v1(inference)
    t.that(gr.device_of(v1)["name"] == gr.device_of(inference)["name"], "device_of(inference/1)")
    oldest = {k: v for k, v in v1.items() if k != "fingerprint"}
    t.that(gr.device_of(oldest) == {"kind": "cpu", "name": v1["device_name"]},
           "device_of(an inference/1 file without fingerprint)")
    summary = gr.summarize(seed["window_throughput"])
    t.that(all(close(summary[k], v) for k, v in seed["throughput"].items()),
           "summarize() gives the golden seed record's throughput statistics")
    for b in inference["batches"]:
        if len(b.get("latencies_s", [])) == b["latency"]["count"]:
            mine = gr.latency_summary(b["latencies_s"])
            t.that(all(close(mine[k], v) for k, v in b["latency"].items()),
                   f"latency_summary() gives batch {b['batch_size']}'s golden latency")
    many = gr.load_many([os.path.join(golden, n) for n in
                         ("seed.json", "inference.json", "micro.json")])
    rows = gr.to_rows(dict(zip(("seed", "inference", "micro"), many)))
    t.that(len(rows) == 1 + len(inference["batches"]) + len(micro["results"]),
           "to_rows(): one row per measurement")
    t.that([r["source"] for r in rows[:2]] == ["seed", "inference"], "to_rows(): sources")
    t.that(close(rows[0]["throughput_median_samples_per_s"], seed["throughput"]["median"]),
           "to_rows(): the training row's median samples/s")
    t.that(close(rows[1]["latency_p50_s"], inference["batches"][0]["latency"]["p50_s"]),
           "to_rows(): an inference row's p50")
    gemm = next(r for r in rows if r.get("measurement") == micro["results"][0]["name"])
    t.that(close(gemm["rate_flop_per_s"], micro["results"][0]["median"] * 1e12),
           "to_rows(): a GEMM row in FLOP/s")
    try:
        import pandas  # noqa: F401
    except ImportError:
        print("note: pandas is not installed; to_dataframe() not exercised (to_rows() is)")
    else:
        frame = gr.to_dataframe(many)
        t.that(len(frame) == len(rows), "to_dataframe(): a row per measurement")
        t.that(str(frame["throughput_median_samples_per_s"].dtype) == "float64",
               "to_dataframe(): numeric columns are float64")

    with tempfile.TemporaryDirectory(prefix="gpuperf-python-") as work:
        # A training record from a timing loop, in the golden seed record's configuration.
        writer = gr.RunRecordWriter(
            model="simple", batch_size=4, precision="bf16", input_shape=(3, 32, 32),
            num_classes=10, warmup_steps=1, steps_per_window=1, device="cpu",
            command="test_gpuperf_results.py")
        for seconds in (0.0160, 0.0166, 0.0158, 0.0171):
            writer.add_window(seconds)
        writer.finish(first_loss=2.3, final_loss=0.5, final_loss_scale=1.0,
                      peak_memory_bytes=float("nan"))
        peer = os.path.join(work, "peer.json")
        record = writer.write(peer)
        errors = schemas.errors(gr.load(peer), "run-1", strict=True)
        t.that(not errors, f"the module's run record validates (strict): {errors[:3]}")
        keys = list(record)
        t.that(record["first_loss"] == 2.3 and keys.index("first_loss") + 1 ==
               keys.index("final_loss"), "first_loss is written, right before final_loss")
        older = dict(record)
        del older["first_loss"]
        row = gr.to_rows([older])[0]
        t.that(math.isnan(row["first_loss"]) and row["final_loss"] == 0.5,
               "a record written before first_loss was kept reads, its first loss NaN")
        t.that(record["peak_memory_bytes"] is None, "NaN is written as null")
        t.that(close(record["overall_throughput"], 4 * 4 / (0.0160 + 0.0166 + 0.0158 + 0.0171)),
               "overall throughput: all samples / all seconds")
        t.that(close(record["window_throughput"][0], 4 / 0.0160), "window throughput from seconds")
        t.that(record["total_steps"] == 5 and record["timed_steps"] == 4, "step counts")
        t.that(any("not counted" in w for w in record["warnings"]),
               "uncounted skipped steps are said to be so")

        code, out = run([args.compare, os.path.join(golden, "seed.json"), peer])
        print(out)
        t.that(code == 0, f"gpuperf_compare reads the module's record (exit {code})")
        row = compare_row(out, peer)
        t.that(row is not None and row[-1] in ("faster", "slower", "same"),
               f"gpuperf_compare judges it against the golden record: {row}")
        code, out = run([args.report, os.path.join(golden, "seed.json"), peer,
                         os.path.join(golden, "inference.json"),
                         "-o", os.path.join(work, "report.html")])
        t.that(code == 0 and "2 training run(s)" in out, f"gpuperf_report reads it: {out.strip()}")

        # write_run_record(), one call.
        short = os.path.join(work, "short.json")
        one = gr.write_run_record(short, window_throughput=[250.0, 240.0], model="resnet50",
                                  batch_size=2, precision="fp16", memory_format="channels_last",
                                  optimizer="sgd", learning_rate=0.1, input_shape=(3, 224, 224),
                                  num_classes=1000, device={"kind": "cuda", "name": "NVIDIA H200"},
                                  final_loss=6.9, skipped_steps=0)
        errors = schemas.errors(gr.load(short), "run-1", strict=True)
        t.that(not errors, f"write_run_record() validates (strict): {errors[:3]}")
        t.that(one["timer"] == "cuda-event" and one["config"]["grad_scaler"],
               "a CUDA device's timer is cuda-event; fp16 has a GradScaler")
        t.that("imagenet_90_epochs_seconds" in one["metrics"], "the ImageNet projection of 224x224")

        # An inference result from per-call latencies, beside the golden one.
        infer = gr.InferenceResultWriter(model="simple", precision="fp32", warmup=1, iterations=5,
                                         input_shape=(3, 32, 32), device="cpu", command="test")
        infer.add_batch(1, [0.0025, 0.0024, 0.0026, 0.0023, 0.0025],
                        peak_memory_bytes=123456789)
        infer.add_batch(2, [0.0045, 0.0046, 0.0044, 0.0047, 0.0045], keep_latencies=False)
        t.raises(ValueError, lambda: infer.add_batch(4, [0.01], peak_memory_bytes=-1),
                 "a negative peak memory")
        t.raises(ValueError, lambda: infer.add_batch(4, [0.01], peak_memory_bytes="1 GiB"),
                 "a peak memory that is not a number")
        result_path = os.path.join(work, "infer.json")
        result = infer.write(result_path)
        errors = schemas.errors(gr.load(result_path), "inference-2", strict=True)
        t.that(not errors, f"the module's inference result validates (strict): {errors[:3]}")
        t.that(result["headline"]["best_batch_size"] == 2 and "batch1_p50_s" in result["headline"],
               "the inference headline")
        t.that([b["peak_memory_bytes"] for b in result["batches"]] == [123456789.0, None],
               "peak memory per batch size, null where not given")
        peaks = [r["peak_memory_bytes"] for r in gr.to_rows([result])]
        t.that(peaks[0] == 123456789.0 and math.isnan(peaks[1]),
               f"to_rows(): an inference row's peak memory, NaN where not measured: {peaks}")
        code, out = run([args.compare, os.path.join(golden, "inference.json"), result_path])
        print(out)
        row = compare_row(out, result_path)
        t.that(code == 0 and row is not None and row[-1] in ("faster", "slower", "same"),
               f"gpuperf_compare reads the module's inference result (exit {code}): {row}")

        # What gpuperf's readers refuse, load() refuses.
        def write(name, document, raw=None):
            path = os.path.join(work, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(raw if raw is not None else json.dumps(document))
            return path

        bad = dict(record, window_throughput=[0.0] + record["window_throughput"][1:])
        t.raises(gr.FormatError, lambda: gr.load(write("zero.json", bad)),
                 "a zero window throughput")
        bad = dict(record, window_seconds=record["window_seconds"][:1])
        t.raises(gr.FormatError, lambda: gr.load(write("windows.json", bad)),
                 "mismatched window arrays")
        t.raises(gr.FormatError, lambda: gr.load(write("other.json", {"schema": "other.tool/1"})),
                 "another tool's format")
        t.raises(gr.FormatError, lambda: gr.load(write("nan.json", None, '{"schema": NaN}')),
                 "NaN, which is not JSON")
        bad = dict(result, device="cpu")
        t.raises(gr.FormatError, lambda: gr.load(write("v2.json", bad)),
                 "an inference/2 result with a version 1 device string")
        t.raises(gr.FormatError, lambda: gr.load(peer, kinds={"inference"}), "a kind not asked for")

        # The writers refuse settings gpuperf refuses, naming them.
        def writer_with(**changes):
            settings = dict(model="simple", batch_size=4, precision="fp32", device="cpu")
            settings.update(changes)
            return gr.RunRecordWriter(**settings)

        t.raises(ValueError, lambda: writer_with(precision="fp8"), "precision fp8")
        t.raises(ValueError, lambda: writer_with(batch_size=0), "batch size 0")
        t.raises(ValueError, lambda: writer_with(device={"gpu": "H200"}), "an unknown device field")
        t.raises(ValueError, lambda: writer_with().record(), "a record without windows")
        t.raises(ValueError, lambda: writer.add_window(0.0), "a window of 0 s")

    print(f"{t.passed} checks passed, {len(t.failed)} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
