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
import glob
import json
import math
import os
import re
import signal
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

    def raises_only(self, error, call, what, message_ok=lambda e: True):
        """`call` raises `error` (with a message message_ok() likes), and nothing else."""
        try:
            call()
        except error as e:
            if message_ok(e):
                self.passed += 1
                print(f"ok: {what}: {e}")
            else:
                self.failed.append(what)
                print(f"FAIL: {what}: message '{e}'")
            return
        except Exception as e:  # noqa: BLE001 - exactly what is checked
            self.failed.append(what)
            print(f"FAIL: {what}: {type(e).__name__} instead of {error.__name__}: {e}")
            return
        self.failed.append(what)
        print(f"FAIL: {what}: no {error.__name__}")

    def raises(self, error, call, what):
        try:
            call()
        except error as e:
            self.passed += 1
            print(f"ok: {what}: {e}")
            return
        self.failed.append(what)
        print(f"FAIL: {what}: no {error.__name__}")


DELETE = object()  # set_pointer(): remove the field


def on_alarm(signum, frame):
    raise TimeoutError("gave up after 20 s")


def set_pointer(document, pointer, value):
    """Sets (or, with DELETE, removes) the field at a JSON pointer ("/batches/0/latency")."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    for part in parts[:-1]:
        document = document[int(part)] if isinstance(document, list) else document[part]
    last = int(parts[-1]) if isinstance(document, list) else parts[-1]
    if value is DELETE:
        del document[last]
    else:
        document[last] = value


def pointers(document, prefix=""):
    """JSON pointers of every field of `document` and of the first element of each array."""
    if isinstance(document, dict):
        items = document.items()
    elif isinstance(document, list):
        items = [(0, document[0])] if document else []
    else:
        return
    for key, value in items:
        pointer = f"{prefix}/{str(key).replace('~', '~0').replace('/', '~1')}"
        yield pointer
        yield from pointers(value, pointer)


def edited_text(root, case):
    """The text of a case of tests/fixtures/refused_records.json: its base record edited."""
    with open(os.path.join(root, case["base"]), encoding="utf-8") as f:
        text = f.read()
    if "set" in case or "remove" in case:
        document = json.loads(text)
        for pointer, value in case.get("set", {}).items():
            set_pointer(document, pointer, value)
        for pointer in case.get("remove", []):
            set_pointer(document, pointer, DELETE)
        text = json.dumps(document, indent=2)
    if "replace" in case:
        old, new = case["replace"]
        assert old in text, f"{case['what']}: '{old}' is not in {case['base']}"
        text = text.replace(old, new, 1)
    return text


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
    golden = os.path.join(args.root, "tests", "fixtures", "golden")
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
    v2 = inference
    if inference["schema"].endswith("/3"):
        v2 = check_schemas.inference_v3_to_v2(inference)
    v1 = check_schemas.inference_v2_to_v1(v2)
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
    # Unlabelled, a loaded document's rows name its file; a dict built in Python its position.
    paths = [os.path.join(golden, n) for n in ("seed.json", "inference.json", "micro.json")]
    t.that({r["source"] for r in gr.to_rows(many)} == set(paths),
           "to_rows(): the source of a loaded file is its path")
    t.that(gr.to_rows([dict(many[0])])[0]["source"] == 0,
           "to_rows(): the source of a dict with no file is its index")
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
        t.that(set(frame["source"]) == set(paths), "to_dataframe(): source is the file's path")
        t.that(str(frame["throughput_median_samples_per_s"].dtype) == "float64",
               "to_dataframe(): numeric columns are float64")

    with tempfile.TemporaryDirectory(prefix="gpuperf-python-") as work:
        # A training record from a timing loop, in the golden seed record's configuration.
        writer = gr.RunRecordWriter(
            model="simple", batch_size=4, precision="fp32", input_shape=(3, 32, 32),
            num_classes=10, warmup_steps=1, steps_per_window=1, device="cpu",
            command="test_gpuperf_results.py")
        for seconds in (0.0160, 0.0166, 0.0158, 0.0171):
            writer.add_window(seconds)
        writer.finish(first_loss=2.3, final_loss=0.5, final_loss_scale=1.0,
                      peak_memory_bytes=float("nan"), window_losses=[1.9, float("nan"), 0.9, 0.5])
        peer = os.path.join(work, "peer.json")
        record = writer.write(peer)
        errors = schemas.errors(gr.load(peer), "run-1", strict=True)
        t.that(not errors, f"the module's run record validates (strict): {errors[:3]}")
        keys = list(record)
        t.that(record["first_loss"] == 2.3 and keys.index("first_loss") + 1 ==
               keys.index("final_loss"), "first_loss is written, right before final_loss")
        t.that(record["window_losses"] == [1.9, None, 0.9, 0.5],
               "each window's loss is written, one that was not finite as null")
        older = dict(record)
        del older["first_loss"]
        del older["window_losses"]
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
        errors = schemas.errors(gr.load(result_path), "inference-3", strict=True)
        t.that(not errors, f"the module's inference result validates (strict): {errors[:3]}")
        t.that(result["schema"] == "gpuperf.inference/3" and result["graph_mode"] == "eager"
               and "cuda_graph" not in result, "the writer names the graph mode graph_mode")
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

        # One name for the graph mode: version 3 reads back with graph_mode, version 2 with its
        # boolean cuda_graph (tables say graph_mode either way), and a file holding the other
        # version's field is refused naming it, as gpuperf's reader refuses it.
        t.raises(ValueError, lambda: gr.InferenceResultWriter(
            model="simple", precision="fp32", device="cpu", graph_mode="graph"),
            "an unknown graph mode")
        graph_writer = gr.InferenceResultWriter(model="simple", precision="fp32", device="cpu",
                                                command="test", graph_mode="cuda-graph")
        graph_writer.add_batch(1, [0.0025, 0.0024, 0.0026])
        graph_path = os.path.join(work, "graph.json")
        graph = graph_writer.write(graph_path)
        back = gr.load(graph_path)
        t.that(back["graph_mode"] == "cuda-graph" and "cuda_graph" not in back and
               gr.graph_mode_of(back) == "cuda-graph",
               "an inference/3 result reads back with graph_mode")
        t.that({r["graph_mode"] for r in gr.to_rows([back])} == {"cuda-graph"},
               "to_rows(): an inference/3 row's graph_mode")
        old = check_schemas.inference_v3_to_v2(graph)
        t.that(old["cuda_graph"] is True and "graph_mode" not in old, "the version 2 form")
        old_path = write("v2-graph.json", old)
        t.that(gr.kind_of(gr.load(old_path)) == "inference" and
               gr.graph_mode_of(old) == "cuda-graph" and gr.graph_mode_of(v2) == "eager",
               "an inference/2 result with cuda_graph still loads, its graph mode named as now")
        t.that({r["graph_mode"] for r in gr.to_rows([old])} == {"cuda-graph"},
               "to_rows(): an inference/2 row's graph_mode")
        errors = schemas.errors(old, "inference-2", strict=False)
        t.that(not errors, f"the version 2 form validates against inference-2: {errors[:3]}")
        code, out = run([args.compare, graph_path, old_path])
        t.that(code == 0 and "cuda-graph" in out,
               f"gpuperf_compare reads an inference/3 and an inference/2 result (exit {code})")
        without_mode = {k: v for k, v in graph.items() if k != "graph_mode"}
        for name, bad, field in (
                ("v3-cuda-graph.json", dict(graph, cuda_graph=True), "cuda_graph"),
                ("v3-only-cuda-graph.json", dict(old, schema=gr.INFERENCE_SCHEMA), "cuda_graph"),
                ("v2-graph-mode.json", dict(old, graph_mode="cuda-graph"), "graph_mode"),
                ("v2-only-graph-mode.json", dict(graph, schema=gr.INFERENCE_SCHEMA_V2),
                 "graph_mode"),
                ("v3-bad-graph-mode.json", dict(graph, graph_mode="graph"), "graph_mode"),
                ("v3-boolean-graph-mode.json", dict(graph, graph_mode=True), "graph_mode"),
                ("v3-no-graph-mode.json", without_mode, "graph_mode")):
            path = write(name, bad)
            t.raises_only(gr.FormatError, lambda: gr.load(path), f"{name} is refused",
                          lambda e, p=path, f=field: str(e).startswith(p + ": ") and
                          f"field '{f}'" in str(e))
            code, out = run([args.compare, path])
            t.that(code != 0 and f"field '{field}'" in out,
                   f"gpuperf_compare refuses {name} naming '{field}' (exit {code}): "
                   f"{out.strip()[-200:]}")

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
                 "an inference/3 result with a version 1 device string")
        t.raises(gr.FormatError, lambda: gr.load(peer, kinds={"inference"}), "a kind not asked for")

        # The bad records of the C++ readers' test (core/test_report.cpp), refused alike:
        # FormatError naming the file and the field.
        with open(os.path.join(args.root, "tests", "fixtures", "refused_records.json"),
                  encoding="utf-8") as f:
            fixtures = json.load(f)["cases"]
        for case in fixtures:
            path = write("shared.json", None, edited_text(args.root, case))
            expected = f"field '{case['field']}'" if "field" in case else case["error"]
            t.raises_only(gr.FormatError, lambda: gr.load(path), f"shared fixture: {case['what']}",
                          lambda e: str(e).startswith(path + ": ") and expected in str(e))

        # Every committed record still reads, with the module and with gpuperf's readers (the
        # consistency checks must never refuse a real measurement).
        committed = []
        for pattern in (("tests", "fixtures", "**", "*.json"), ("docs", "examples", "*.json"),
                        ("docs", "results", "**", "*.json")):
            for path in sorted(glob.glob(os.path.join(args.root, *pattern), recursive=True)):
                with open(path, encoding="utf-8") as f:
                    tag = json.load(f).get("schema")
                if tag in gr.KINDS:
                    committed.append((path, gr.KINDS[tag]))
        refused = []
        for path, _ in committed:
            try:
                gr.load(path)
            except gr.FormatError as e:
                refused.append(str(e))
        t.that(len(committed) > 300 and not refused,
               f"{len(committed)} committed documents load: {refused[:3]}")
        measured = [path for path, kind in committed if kind in ("train", "inference")]
        code, out = run([args.report, *measured, "-o", os.path.join(work, "committed.html")])
        t.that(code == 0, f"gpuperf_report reads the {len(measured)} committed training records "
                          f"and inference results (exit {code}): {out.strip()[-300:]}")

        # Whatever a malformed record holds, FormatError is the only error: every field of the
        # golden records (and of their first array elements) replaced by values of other types,
        # or deleted, through check() and to_rows() (what load() and tables do).
        strangers = (None, [], {}, "x", -1, 2 ** 70, 1e300, True, [[]], {"a": {}})
        tried = 0
        unexpected = []
        # A data-parallel record (tests/fixtures/README.md says where it comes from).
        dp4 = os.path.join(args.root, "tests", "fixtures", "records", "cpu-gloo-dp4.json")
        for base in (seed, inference, micro, gr.load(dp4), v2, v1):
            for pointer in pointers(base):
                for value in strangers + (DELETE,):
                    document = json.loads(json.dumps(base))
                    set_pointer(document, pointer, value)
                    tried += 1
                    try:
                        gr.to_rows([document])
                    except gr.FormatError:
                        pass
                    except Exception as e:  # noqa: BLE001 - exactly what is checked
                        unexpected.append(f"{pointer} = {value!r}: {type(e).__name__}: {e}")
        t.that(not unexpected, f"{tried} malformed records raise FormatError only: "
                               f"{unexpected[:5]}")
        for name, raw in (("deep.json", "[" * 100000 + "]" * 100000),
                          ("deep-object.json", '{"a":' * 300 + "1" + "}" * 300),
                          ("latin1.json", None), ("digits.json", '{"schema": ' + "9" * 5000 + "}"),
                          ("text.json", '"gpuperf.run/1"'), ("list.json", "[1, 2]"),
                          ("schema-list.json", '{"schema": ["gpuperf.run/1"]}')):
            path = write(name, None, raw if raw is not None else "")
            if raw is None:
                with open(path, "wb") as f:
                    f.write(b'{"schema": "gpuperf.run/1", "command": "\xff"}')
            t.raises_only(gr.FormatError, lambda: gr.load(path), f"{name} is a FormatError")
        t.raises_only(gr.FormatError, lambda: gr.check([1]), "check() of a list")
        t.raises_only(gr.FormatError, lambda: gr.to_rows([{"schema": []}]), "to_rows() of junk")
        t.that(gr.device_of("junk") == {} and gr.kind_of({"schema": []}) is None,
               "device_of() and kind_of() of junk")

        # Files that are not regular: FormatError at once (a FIFO must not wait for a writer),
        # never a hang; a missing file is an OSError.
        fifo = os.path.join(work, "fifo.json")
        os.mkfifo(fifo)
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(20)
        try:
            t.raises_only(gr.FormatError, lambda: gr.load(fifo), "a FIFO")
        finally:
            signal.alarm(0)
        t.raises_only(gr.FormatError, lambda: gr.load(work), "a directory")
        t.raises_only(OSError, lambda: gr.load(os.path.join(work, "missing.json")),
                      "a missing file")
        sparse = os.path.join(work, "sparse.json")
        with open(sparse, "wb") as f:
            f.truncate((64 << 20) + 1)
        t.raises_only(gr.FormatError, lambda: gr.load(sparse), "a file over 64 MiB",
                      lambda e: "64 MiB" in str(e))

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
        # ... and never write what gpuperf_compare refuses.
        t.raises(ValueError, lambda: writer_with(batch_size=2 ** 31), "a batch size beyond an int")
        t.raises(ValueError, lambda: writer_with(seed=2 ** 70), "a seed beyond 64 bits")
        t.raises(ValueError, lambda: writer_with(learning_rate=1e300), "a learning rate of 1e300")
        t.raises(ValueError, lambda: writer_with(input_shape=(3, 2 ** 31)), "an extent of 2^31")
        t.raises(ValueError, lambda: writer_with(device={"kind": "cpu", "memory_bytes": 1e300}),
                 "a device memory of 1e300 bytes")
        t.raises(ValueError, lambda: writer_with(device={"kind": "cpu", "name": 7}),
                 "a device name that is not a string")
        t.raises(ValueError, lambda: writer_with().add_window_throughput(1e-20),
                 "a window of 1e-20 samples/s (over 1e15 s)")
        t.raises(ValueError, lambda: writer_with().finish(final_loss=1e300), "a final loss of 1e300")
        diverged = writer_with(command="diverged")
        diverged.add_window(0.01)
        diverged.finish(final_loss=float("inf"), first_loss=2.3)
        t.that(diverged.record()["final_loss"] is None and
               any("not finite" in w for w in diverged.record()["warnings"]),
               "a loss that diverged is written as null, with a warning")
        one_window = writer_with(command="one window")
        one_window.add_window(0.01)
        t.raises(ValueError, lambda: one_window.finish(window_losses=[1.0, 0.5]).record(),
                 "two window losses for one window")
        t.raises(ValueError, lambda: writer_with().finish(window_losses=[1e300]),
                 "a window loss of 1e300")
        t.raises(ValueError, lambda: writer_with().finish(peak_memory_bytes=-1),
                 "a negative peak memory")
        t.raises(ValueError, lambda: writer_with().finish(metrics={"x": "fast"}),
                 "a metric that is not a number")
        t.raises(ValueError, lambda: gr.InferenceResultWriter(
            model="m", precision="fp32", device="cpu", cudnn_benchmark_from_batch=0),
            "cuDNN benchmark from batch 0")
        t.raises(ValueError, lambda: gr.InferenceResultWriter(
            model="m", precision="fp32", device="cpu").add_batch(1, [0.0, 0.0, 0.0]),
            "calls of 0 s (no median throughput)")
        # Limits reached but not passed, and a command line that is not UTF-8 (its bytes arrive
        # as lone surrogates, which JSON cannot hold): written, and gpuperf_compare reads it.
        edge = writer_with(batch_size=2 ** 31 - 1, learning_rate=1e15, seed=-2 ** 63,
                           command="peer --json r\udcff.json")
        edge.add_window_throughput(9.0e14)
        edge.add_window_throughput(8.99e14)
        edge.finish(final_loss=-1e15, final_loss_scale=3.4e38, metrics={"m\udcfe": 1e18})
        edge_path = os.path.join(work, "edge.json")
        edge.write(edge_path)
        # Windows so far apart that the interval leaves [-1e15, 1e15]: refused, nothing written.
        wild = writer_with()
        wild.add_window_throughput(9.9e14)
        wild.add_window_throughput(1e-3)
        wild_path = os.path.join(work, "wild.json")
        t.raises(ValueError, lambda: wild.write(wild_path), "an interval beyond 1e15 samples/s")
        t.that(not os.path.exists(wild_path), "a refused record is not written")
        code, out = run([args.compare, edge_path])
        t.that(code == 0, f"gpuperf_compare reads a record at the writer's limits (exit {code}): "
                          f"{out.strip()[-300:]}")

    print(f"{t.passed} checks passed, {len(t.failed)} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
