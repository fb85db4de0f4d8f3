#!/usr/bin/env python3
"""The formats other tools read, checked as those tools read them.

  check_exports.py csv <build/apps>      CSV from every benchmark and gpuperf_compare, read
                                          with Python's csv module: one header, rows of the
                                          header's length, numbers where the column's unit
                                          says so; '--json -' gives clean JSON on stdout
  check_exports.py gbench <build/apps>   Google Benchmark JSON from every benchmark, read by
                                          Google Benchmark's own tools/compare.py (Debian's
                                          libbenchmark-tools); SKIPPED (77) without it

Tiny CPU runs; exit 1 with the failures listed."""
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

COMPARE_PY = "/usr/share/benchmark/compare.py"
# Columns that hold text (everything else must be a number or empty).
TEXT_COLUMNS = {"timestamp_utc", "model", "device", "precision", "memory_format", "optimizer",
                "graph_mode", "kernel_fusion", "kind", "name", "category", "variant", "shape",
                "status", "unit", "gpu", "software", "file", "test", "verdict"}
BOOL_COLUMNS = {"saturated", "baseline"}

failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def run(args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        fail(f"{' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done


def programs(examples, work):
    """Each benchmark with tiny CPU settings, writing into `work` as <name>.<ext>."""
    return {
        "seed": [os.path.join(examples, "seed_benchmark"), "--device", "cpu", "--batch-size", "4",
                 "--warmup", "1", "--steps-per-window", "1", "--windows", "3", "--threads", "1",
                 "--quiet"],
        "resnet50": [os.path.join(examples, "resnet50_benchmark"), "--device", "cpu",
                     "--batch-size", "2", "--warmup", "1", "--steps-per-window", "1", "--windows",
                     "2", "--threads", "1", "--quiet"],
        "inference": [os.path.join(examples, "inference_benchmark"), "--device", "cpu",
                      "--batch-sizes", "1,2", "--warmup", "1", "--iterations", "12", "--threads",
                      "1", "--serve-rates", "100", "--serve-requests", "100", "--quiet"],
        "micro": [os.path.join(examples, "microbench"), "--device", "cpu", "--gemm-size", "64",
                  "--memory-size-mib", "1", "--host-size-mib", "1", "--warmup", "1",
                  "--calls-per-window", "1", "--windows", "3", "--quiet"],
    }


def check_csv_text(label, text, min_rows):
    if "\n\n" in text.replace("\r", ""):
        fail(f"{label}: a blank line inside the CSV")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if len(rows) < 1 + min_rows:
        fail(f"{label}: {len(rows) - 1} data rows, expected at least {min_rows}")
        return
    header = rows[0]
    if len(set(header)) != len(header):
        fail(f"{label}: repeated column names {header}")
    if "cuda_graph" in header:
        fail(f"{label}: a cuda_graph column (graph mode is graph_mode: cuda-graph or eager)")
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            fail(f"{label}: line {i} has {len(row)} cells, the header {len(header)}")
            continue
        for name, cell in zip(header, row):
            # One name and one vocabulary for graph mode, training and inference alike.
            if name == "graph_mode" and cell not in ("cuda-graph", "eager"):
                fail(f"{label}: line {i} column graph_mode: {cell!r} is not cuda-graph/eager")
            if name in TEXT_COLUMNS:
                continue
            if name in BOOL_COLUMNS:
                if cell not in ("true", "false"):
                    fail(f"{label}: line {i} column {name}: {cell!r} is not true/false")
                continue
            if cell == "":
                continue  # not available
            try:
                float(cell)
            except ValueError:
                fail(f"{label}: line {i} column {name}: {cell!r} is not a number")


def check_csv(examples):
    with tempfile.TemporaryDirectory() as work:
        jsons = []
        for name, command in programs(examples, work).items():
            out = os.path.join(work, name + ".json")
            csv_path = os.path.join(work, name + ".csv")
            run(command + ["--json", out, "--csv", csv_path])
            if os.path.exists(csv_path):
                with open(csv_path, newline="") as f:
                    check_csv_text(name, f.read(), 2)
            if name != "micro":
                jsons.append(out)
            # '--csv -': the CSV alone on stdout, the console text on stderr.
            piped = run(command + ["--json", "", "--csv", "-"])
            check_csv_text(name + " (--csv -)", piped.stdout, 2)
            if "written to" in piped.stdout:
                fail(f"{name}: console text mixed into --csv - output")
        # '--json -': stdout parses as one JSON document.
        piped = run(programs(examples, work)["seed"] + ["--json", "-"])
        try:
            doc = json.loads(piped.stdout)
            if doc.get("schema") != "gpuperf.run/1":
                fail(f"--json -: schema {doc.get('schema')!r}")
        except json.JSONDecodeError as e:
            fail(f"--json -: stdout is not JSON ({e})")
        if "Throughput" not in piped.stderr:
            fail("--json -: the console text did not go to stderr")
        # The comparison of training and inference results: one table of numbers.
        compared = run([os.path.join(examples, "gpuperf_compare"), *jsons, "--format", "csv"])
        check_csv_text("gpuperf_compare --format csv", compared.stdout, len(jsons))
        kinds = {r["kind"] for r in csv.DictReader(io.StringIO(compared.stdout, newline=""))}
        if kinds != {"train", "inference"}:
            fail(f"gpuperf_compare --format csv: kinds {kinds}, expected train and inference")


def check_gbench(examples):
    try:
        import scipy  # noqa: F401  (compare.py's U test)
    except ImportError:
        print("SKIPPED: scipy is not installed (Google Benchmark's compare.py needs it)")
        return 77
    if not os.path.exists(COMPARE_PY):
        print(f"SKIPPED: {COMPARE_PY} not found (Debian package libbenchmark-tools)")
        return 77
    with tempfile.TemporaryDirectory() as work:
        for name, command in programs(examples, work).items():
            paths = []
            for side in ("a", "b"):
                path = os.path.join(work, f"{name}-{side}.json")
                run(command + ["--json", "", "--benchmark-json", path])
                paths.append(path)
            if not all(os.path.exists(p) for p in paths):
                continue
            with open(paths[0]) as f:
                doc = json.load(f)
            context = doc.get("context", {})
            if not (isinstance(context.get("num_cpus"), int) and context["num_cpus"] > 0 and
                    isinstance(context.get("mhz_per_cpu"), int) and
                    isinstance(context.get("load_avg"), list) and len(context["load_avg"]) in (0, 3)):
                fail(f"{name}: the context lacks the host's CPU count, MHz or load average: "
                     f"{context}")
            iterations = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
            medians = [b for b in doc["benchmarks"] if b.get("aggregate_name") == "median"]
            if not iterations or not medians:
                fail(f"{name}: no repetitions or no median aggregate in the Google Benchmark JSON")
            for b in iterations:
                if not (b["real_time"] > 0 and b["time_unit"] in ("ns", "us", "ms", "s")):
                    fail(f"{name}: {b['name']} has real_time {b['real_time']} {b['time_unit']}")
            # Training and inference families: microseconds below a 10 ms median, so that a
            # sub-millisecond call never reads 0 ms.
            for b in medians:
                if b["name"].startswith("micro/"):
                    continue
                seconds = b["real_time"] * {"us": 1e-6, "ms": 1e-3}.get(b["time_unit"], math.nan)
                want = "us" if seconds < 10e-3 else "ms"
                if b["time_unit"] != want:
                    fail(f"{name}: {b['name']} median {b['real_time']} {b['time_unit']}, "
                         f"want {want}")
            compared = run([sys.executable, COMPARE_PY, "-d", os.path.join(work, name + ".cmp"),
                            "benchmarks", *paths])
            try:
                with open(os.path.join(work, name + ".cmp")) as f:
                    diff = json.load(f)
            except (OSError, json.JSONDecodeError) as e:
                fail(f"{name}: compare.py wrote no comparison ({e}); stdout:\n{compared.stdout}")
                continue
            names = {d["name"] for d in diff}
            if not names:
                fail(f"{name}: compare.py compared nothing")
            tested = [d for d in diff if d.get("utest", {}).get("have_optimal_repetitions")
                      is not None]
            if not tested:
                fail(f"{name}: compare.py ran no U test (repetitions not recognised)")
    return 0


def main():
    mode, examples = sys.argv[1], sys.argv[2]
    if mode == "csv":
        check_csv(examples)
        code = 0
    elif mode == "gbench":
        code = check_gbench(examples)
    else:
        print(__doc__)
        return 2
    if code == 77:
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
