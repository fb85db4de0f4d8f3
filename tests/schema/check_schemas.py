#!/usr/bin/env python3
"""Validates gpuperf's JSON against the schemas in docs/schema/ (JSON Schema draft 2020-12).
Installed (<prefix>/share/gpuperf/schema), it uses the schemas of the folder it lies in.

  check_schemas.py [--schemas DIR] validate [--as NAME] [--strict] FILE...
      Each FILE by its "schema" tag (gpuperf.run/1 -> run-1.schema.json), or as NAME
      (e.g. --as gpu-info) for output without a tag. A .jsonl file is one document a line.
  check_schemas.py [--schemas DIR] committed --root SRC
      Every schema is itself valid draft 2020-12; then the golden records
      (tests/fixtures/golden/) and the fixture records (tests/fixtures/records/), every
      committed result under docs/results/ and docs/examples/ that carries a gpuperf schema tag
      (others are skipped and counted), gpu_info JSON committed there (gpu_info*.json, no tag),
      the datasheet database, the published figures and the default rental prices
      (libgpuperf/data/).
  check_schemas.py [--schemas DIR] fresh (--expect TAG | --as NAME) [--stdout] -- PROGRAM ARGS...
      Runs PROGRAM ARGS (adding --json <tmp> unless --stdout, which takes its standard output,
      JSON Lines when it has several lines), then validates the output strictly: besides the
      schema, every property listed in an "x-always-written" keyword must be present (the current
      writers always write them; only older files may lack them). A program failing fails.
  check_schemas.py [--schemas DIR] self-test --root SRC
      The check can fail: known-good documents (the golden records and data files) pass, and
      each of a list of deliberately broken copies (a string where a number belongs, a missing
      required field, a value outside its vocabulary, a field of the wrong format version, ...)
      is rejected.

Exit 0 all valid, 1 a document is invalid (each error printed as "<file>: <field path>: <what>"),
2 bad usage, 77 the Python module jsonschema cannot be imported (Debian: python3-jsonschema).
Works with jsonschema 4.10 (Debian 12, RefResolver) and later releases (the referencing library).
"""
import argparse
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:  # pragma: no cover - the skip path
    print("SKIPPED: the Python module jsonschema is not installed (Debian: python3-jsonschema)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
# Installed, the script lies beside the schemas (<prefix>/share/gpuperf/schema); in the source
# tree it is tests/schema/ and they are docs/schema/.
DEFAULT_SCHEMAS = (HERE if glob.glob(os.path.join(HERE, "*.schema.json")) else
                   os.path.normpath(os.path.join(HERE, "..", "..", "docs", "schema")))
# Every schema's $id is this base and its file name. It is a name, never fetched (.invalid is a
# reserved domain): it gives the relative refs ("common.schema.json#/$defs/device") a base to
# resolve against, so that any validator given the schemas keyed by their $id resolves them.
ID_BASE = "https://gpuperf.invalid/schema/"
VALIDATOR = jsonschema.Draft202012Validator
MAX_ERRORS_PER_FILE = 10


def schema_name_for_tag(tag):
    """'gpuperf.run/1' -> 'run-1'; None for a tag that is not gpuperf's."""
    if not isinstance(tag, str) or not tag.startswith("gpuperf.") or "/" not in tag:
        return None
    name, version = tag[len("gpuperf."):].split("/", 1)
    return f"{name}-{version}"


def with_always_written(node):
    """A copy of a schema in which each object's x-always-written properties are required."""
    if isinstance(node, dict):
        out = {k: with_always_written(v) for k, v in node.items()}
        required = list(node.get("required", []))
        extra = [k for k in node.get("x-always-written", []) if k not in required]
        if extra:
            out["required"] = required + extra
        return out
    if isinstance(node, list):
        return [with_always_written(v) for v in node]
    return node


class Schemas:
    """The schema files of one folder, as validators; refs between files are relative names
    ("common.schema.json#/$defs/device"), resolved against each schema's $id in a store keyed
    by $id, as any JSON Schema library resolves them."""

    def __init__(self, folder):
        self.folder = folder
        self.documents = {}
        for path in sorted(glob.glob(os.path.join(folder, "*.schema.json"))):
            with open(path, encoding="utf-8") as f:
                self.documents[os.path.basename(path)] = json.load(f)
        if not self.documents:
            raise SystemExit(f"error: no *.schema.json in {folder}")
        self._validators = {}

    def names(self):
        return sorted(n[: -len(".schema.json")] for n in self.documents)

    def check_schemas(self):
        """Every schema is valid draft 2020-12; returns the list of problems."""
        problems = []
        for file_name, document in self.documents.items():
            if document.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
                problems.append(f"{file_name}: $schema is not draft 2020-12")
            if document.get("$id") != ID_BASE + file_name:
                problems.append(f"{file_name}: $id is {document.get('$id')!r}, expected "
                                f"'{ID_BASE + file_name}' (without it, a validator has no base "
                                "to resolve common.schema.json against)")
            try:
                VALIDATOR.check_schema(document)
            except jsonschema.exceptions.SchemaError as e:
                problems.append(f"{file_name}: not a valid schema: {e.message}")
        return problems

    def validator(self, name, strict=False):
        key = (name, strict)
        if key in self._validators:
            return self._validators[key]
        file_name = name + ".schema.json"
        if file_name not in self.documents:
            raise KeyError(name)
        store = self.documents
        if strict:
            store = {n: with_always_written(d) for n, d in store.items()}
        root = store[file_name]
        # Keyed by $id (a schema without one, which check_schemas() reports, by its file name).
        by_id = {d.get("$id", n): d for n, d in store.items()}
        try:
            import referencing
            import referencing.jsonschema
        except ImportError:  # jsonschema < 4.18 (Debian 12: 4.10)
            resolver = jsonschema.RefResolver(base_uri=root.get("$id", file_name), referrer=root,
                                              store=by_id)
            validator = VALIDATOR(root, resolver=resolver)
        else:
            draft = referencing.jsonschema.DRAFT202012
            resources = [(uri, referencing.Resource.from_contents(d, default_specification=draft))
                         for uri, d in by_id.items()]
            registry = referencing.Registry().with_resources(resources)
            validator = VALIDATOR({"$ref": root.get("$id", file_name)}, registry=registry)
        self._validators[key] = validator
        return validator

    def errors(self, document, name, strict=False):
        """Error lines ("<field path>: <message>") of `document` against schema `name`."""
        validator = self.validator(name, strict)
        found = sorted(validator.iter_errors(document),
                       key=lambda e: list(map(str, e.absolute_path)))
        lines = []
        for e in found:
            lines.extend(describe(e))
        return lines


def field_path(error):
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(top level)"


def describe(error):
    """One line per failing leaf: anyOf/oneOf branches are reported by their most relevant error."""
    if error.context:
        best = jsonschema.exceptions.best_match(error.context)
        if best is not None and best is not error:
            return [f"{field_path(error)}: {error.message[:120]} "
                    f"({field_path(best)}: {best.message[:160]})"]
    return [f"{field_path(error)}: {error.message[:200]}"]


def read_documents(path):
    """The JSON documents of a file: one, or one per non-empty line of a .jsonl file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def schema_for(document, as_name):
    """The schema name of `document`: `as_name`, or from its tag; (None, why) when it has none."""
    if as_name:
        return as_name, None
    tag = document.get("schema") if isinstance(document, dict) else None
    if tag is None:
        return None, "no 'schema' field"
    name = schema_name_for_tag(tag)
    if name is None:
        return None, f"schema '{tag}' is not a gpuperf format"
    return name, None


class Report:
    def __init__(self):
        self.failures = 0
        self.valid = 0

    def check(self, schemas, label, document, name, strict=False):
        if name not in schemas.names():
            print(f"{label}: no schema {name}.schema.json for this document")
            self.failures += 1
            return False
        errors = schemas.errors(document, name, strict)
        if errors:
            self.failures += 1
            print(f"{label}: INVALID against {name}.schema.json{' (strict)' if strict else ''}")
            for line in errors[:MAX_ERRORS_PER_FILE]:
                print(f"{label}: {line}")
            if len(errors) > MAX_ERRORS_PER_FILE:
                print(f"{label}: ... {len(errors) - MAX_ERRORS_PER_FILE} more")
            return False
        self.valid += 1
        return True


# ---- validate --------------------------------------------------------------------------------
def cmd_validate(schemas, args):
    report = Report()
    for path in args.files:
        for i, document in enumerate(read_documents(path)):
            label = path if not path.endswith(".jsonl") else f"{path}:{i + 1}"
            name, why = schema_for(document, args.as_name)
            if name is None:
                print(f"{label}: {why}; use --as NAME (one of {', '.join(schemas.names())})")
                report.failures += 1
                continue
            report.check(schemas, label, document, name, args.strict)
    print(f"{report.valid} valid, {report.failures} invalid")
    return 1 if report.failures else 0


# ---- committed -------------------------------------------------------------------------------
def relative(path, root):
    return os.path.relpath(path, root)


def cmd_committed(schemas, args):
    root = args.root
    report = Report()
    problems = schemas.check_schemas()
    for p in problems:
        print(p)
    report.failures += len(problems)
    print(f"schemas: {len(schemas.documents)} files, "
          f"valid draft 2020-12: {'no' if problems else 'yes'}")

    counts = {}
    skipped = []
    def files(*pattern):
        return sorted(glob.glob(os.path.join(root, *pattern), recursive=True))

    groups = [("golden records", files("tests", "fixtures", "golden", "*.json")),
              ("fixture records", files("tests", "fixtures", "records", "*.json")),
              ("docs/results", files("docs", "results", "**", "*.json")),
              ("docs/examples", files("docs", "examples", "*.json"))]
    for group, paths in groups:
        for path in paths:
            label = relative(path, root)
            try:
                (document,) = read_documents(path)
            except (ValueError, OSError) as e:
                print(f"{label}: not readable JSON: {e}")
                report.failures += 1
                continue
            name, why = schema_for(document, None)
            if name is None and os.path.basename(path).startswith("gpu_info"):
                name = "gpu-info"  # gpu_info --json carries no tag
            if name is None:
                skipped.append(f"{label} ({why})")
                continue
            if report.check(schemas, label, document, name):
                counts.setdefault(group, {}).setdefault(name, 0)
                counts[group][name] += 1
    for group, _ in groups:
        by_schema = counts.get(group, {})
        total = sum(by_schema.values())
        detail = ", ".join(f"{n} {k}" for k, n in sorted(by_schema.items()))
        print(f"{group}: {total} valid ({detail})")
    for line in skipped:
        print(f"skipped: {line}")
    print(f"skipped {len(skipped)} JSON file(s) without a gpuperf schema tag")

    data = os.path.join(root, "libgpuperf", "data")
    data_files = (("gpu_specs.json", "specs-1"), ("published_results.json", "published-1"),
                  ("gpu_rental_prices.json", "rental_prices-1"))
    for file_name, name in data_files:
        path = os.path.join(data, file_name)
        (document,) = read_documents(path)
        tag_name, _ = schema_for(document, None)
        if tag_name != name:
            print(f"{relative(path, root)}: schema tag {document.get('schema')!r}, expected {name}")
            report.failures += 1
        elif report.check(schemas, relative(path, root), document, name):
            print(f"{relative(path, root)}: valid ({name})")
    report.failures += check_data_consistency(data, root)
    validated = sum(sum(c.values()) for c in counts.values())
    print(f"validated {validated} committed result file(s) and {len(data_files)} data files; "
          f"{report.failures} problem(s)")
    if validated == 0:
        print("error: no committed result was validated (wrong --root?)")
        return 1
    return 1 if report.failures else 0


def check_data_consistency(data, root):
    """What a schema cannot say about the data files: unique ids, ranges with low <= high, and
    published figures and rental prices that name a GPU of the database (a price at most once)."""
    problems = []
    with open(os.path.join(data, "gpu_specs.json"), encoding="utf-8") as f:
        specs = json.load(f)
    with open(os.path.join(data, "published_results.json"), encoding="utf-8") as f:
        published = json.load(f)
    with open(os.path.join(data, "gpu_rental_prices.json"), encoding="utf-8") as f:
        prices = json.load(f)
    ids = [g.get("id") for g in specs.get("gpus", [])]
    for i in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"gpu_specs.json: id '{i}' appears more than once")

    def ranges(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                yield from ranges(v, f"{path}.{k}")
        elif isinstance(node, list) and len(node) == 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in node):
            yield path, node

    for path, (low, high) in list(ranges(specs, "gpu_specs.json")) + list(
            ranges(published, "published_results.json")):
        if low > high:
            problems.append(f"{path}: range [{low}, {high}] has its low end above its high end")
    for i, r in enumerate(published.get("results", [])):
        if r.get("gpu_id") not in ids:
            problems.append(f"published_results.json: results[{i}].gpu_id "
                            f"'{r.get('gpu_id')}' is not an id of gpu_specs.json")
    priced = [p.get("gpu_id") for p in prices.get("prices", [])]
    for i, gpu_id in enumerate(priced):
        if gpu_id not in ids:
            problems.append(f"gpu_rental_prices.json: prices[{i}].gpu_id '{gpu_id}' is not an id "
                            "of gpu_specs.json")
        elif priced.index(gpu_id) != i:
            problems.append(f"gpu_rental_prices.json: prices[{i}].gpu_id '{gpu_id}' is priced twice")
    for p in problems:
        print(p)
    return len(problems)


# ---- fresh -----------------------------------------------------------------------------------
def cmd_fresh(schemas, args):
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("error: fresh: no program given after --")
        return 2
    with tempfile.TemporaryDirectory(prefix="gpuperf-schema-") as work:
        out = os.path.join(work, "out.json")
        run = command if args.stdout else command + ["--json", out]
        proc = subprocess.run(run, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, check=False)
        if proc.returncode != 0:
            print(f"{' '.join(run)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
            return 1
        if args.stdout:
            try:
                documents = [json.loads(proc.stdout)]
            except ValueError:  # JSON Lines (watch mode): one document a line
                try:
                    documents = [json.loads(line) for line in proc.stdout.splitlines()
                                 if line.strip()]
                except ValueError as e:
                    print(f"{' '.join(run)}: standard output is neither JSON nor JSON Lines: {e}")
                    return 1
        else:
            if not os.path.exists(out):
                print(f"{' '.join(run)}: wrote no {out}")
                return 1
            documents = read_documents(out)
    report = Report()
    label = os.path.basename(command[0])
    for i, document in enumerate(documents):
        name, why = schema_for(document, args.as_name)
        if name is None:
            print(f"{label}: {why}")
            report.failures += 1
            continue
        if args.expect and document.get("schema") != args.expect:
            print(f"{label}: wrote schema {document.get('schema')!r}, expected {args.expect!r}")
            report.failures += 1
            continue
        report.check(schemas, f"{label} output {i + 1}", document, name, strict=True)
    print(f"{label}: {len(documents)} document(s), {report.valid} valid against "
          f"{args.as_name or schema_name_for_tag(args.expect)}.schema.json (strict)")
    return 1 if report.failures or report.valid == 0 else 0


# ---- self-test -------------------------------------------------------------------------------
def parts(path):
    """"batches.0.latency" -> ["batches", 0, "latency"]."""
    return [int(p) if p.isdigit() else p for p in path.split(".")]


def get(document, path):
    node = document
    for part in path:
        node = node[part]
    return node


def set_value(path, value):
    """A mutation setting the field at `path` ("config.batch_size") to `value`."""
    def mutate(d):
        get(d, parts(path)[:-1])[parts(path)[-1]] = value
    return mutate


def delete(path):
    """A mutation removing the field at `path`."""
    def mutate(d):
        del get(d, parts(path)[:-1])[parts(path)[-1]]
    return mutate


def replace_field(old, new, value):
    """A mutation removing the top-level field `old` and setting `new` to `value` instead."""
    def mutate(d):
        del d[old]
        d[new] = value
    return mutate


def inference_v2_to_v1(doc):
    """An inference/2 document as version 1 wrote it (device string, device_name, fingerprint;
    no cudnn_benchmark_from_batch or per-batch peak_memory_bytes, which came with version 2)."""
    v1 = {}
    for k, v in doc.items():
        if k == "cudnn_benchmark_from_batch":
            continue
        if k == "batches":
            v1[k] = [{bk: bv for bk, bv in b.items() if bk != "peak_memory_bytes"} for b in v]
        elif k == "device":
            v1["device"] = v["kind"] if v["kind"] == "cpu" else f"{v['kind']}:{v['index']}"
            v1["device_name"] = v["name"]
            v1["fingerprint"] = v
        else:
            v1[k] = v
    v1["schema"] = "gpuperf.inference/1"
    return v1


def inference_v1_to_v2(doc):
    v2 = {k: v for k, v in doc.items() if k not in ("device", "device_name", "fingerprint")}
    v2["device"] = doc["fingerprint"]
    v2["schema"] = "gpuperf.inference/2"
    return v2


def inference_v3_to_v2(doc):
    """An inference/3 document as version 2 wrote it: the boolean cuda_graph for graph_mode."""
    v2 = {k: v for k, v in doc.items() if k != "graph_mode"}
    v2["cuda_graph"] = doc["graph_mode"] == "cuda-graph"
    v2["schema"] = "gpuperf.inference/2"
    return v2


def inference_v2_to_v3(doc):
    """An inference/2 document as version 3 writes it: graph_mode for the boolean cuda_graph."""
    v3 = {k: v for k, v in doc.items() if k != "cuda_graph"}
    v3["graph_mode"] = "cuda-graph" if doc["cuda_graph"] else "eager"
    v3["schema"] = "gpuperf.inference/3"
    return v3


# A gpu_info --json snapshot of one GPU, every reading present.
GPU_INFO = {
    "available": True, "timestamp_utc": "2026-12-01T00:00:00Z", "driver_version": "580.1",
    "cuda_driver_version": "13.0",
    "devices": [{
        "index": 0, "name": "NVIDIA H200", "uuid": "GPU-0", "pci_bus_id": "00000000:18:00.0",
        "memory_used_bytes": 1.0e9, "memory_total_bytes": 1.5e11, "memory_reserved_bytes": None,
        "utilization_gpu_percent": 50.0, "utilization_memory_percent": 20.0,
        "temperature_celsius": 40.0, "power_draw_watts": 123.4, "power_limit_watts": 700.0,
        "sm_clock_mhz": 1755.0, "sm_clock_max_mhz": 1980.0, "memory_clock_mhz": 2619.0,
        "memory_clock_max_mhz": 3201.0, "clock_event_reasons": 4,
        "clock_event_reason_names": ["sw_power_cap"], "throttling": True,
        "total_energy_millijoules": 987654321, "ecc_enabled": True, "pcie_link_generation": 5,
        "pcie_link_width": 16, "pcie_link_max_generation": 5, "pcie_link_max_width": 16,
        "nvlink_links_up": 18, "compute_capability": "9.0",
        "processes": [{"pid": 1, "name": "python3", "kind": "compute", "used_memory_bytes": None}],
        "errors": []}]}

# A "distributed" object of one rank: the writer writes it only for world_size >= 2.
ONE_RANK = {"world_size": 1, "backend": "gloo", "launcher": "gpuperf", "interconnect": "",
            "global_throughput": 1.0, "rank_throughput": [1.0], "baseline_throughput": None,
            "scaling_efficiency": None, "gradient_bytes": 1.0, "buckets": 1,
            "allreduce_bus_gbps": None, "allreduce_share_of_step": None,
            "parameters_identical": True}


def self_test_cases(root):
    """(label, schema name, good document, [(what, mutation)]); a `what` beginning "strict:" is
    rejected only with the x-always-written properties required (and must pass without)."""
    golden = os.path.join(root, "tests", "fixtures", "golden")
    data = os.path.join(root, "libgpuperf", "data")
    (seed,) = read_documents(os.path.join(golden, "seed.json"))
    (micro,) = read_documents(os.path.join(golden, "micro.json"))
    (inference,) = read_documents(os.path.join(golden, "inference.json"))
    (specs,) = read_documents(os.path.join(data, "gpu_specs.json"))
    (published,) = read_documents(os.path.join(data, "published_results.json"))
    (prices,) = read_documents(os.path.join(data, "gpu_rental_prices.json"))
    if inference["schema"] == "gpuperf.inference/1":
        v1 = inference
        v2 = inference_v1_to_v2(v1)
        v3 = inference_v2_to_v3(v2)
    elif inference["schema"] == "gpuperf.inference/2":
        v2 = inference
        v1, v3 = inference_v2_to_v1(v2), inference_v2_to_v3(v2)
    else:
        v3 = inference
        v2 = inference_v3_to_v2(v3)
        v1 = inference_v2_to_v1(v2)
    # The batch-1 entry of the golden sweep (its tiny configuration measures batch sizes 1 and 2).
    b1 = next(i for i, b in enumerate(v2["batches"]) if b["batch_size"] == 1)
    return [
        ("run/1 (tests/fixtures/golden/seed.json)", "run-1", seed, [
            ("a string where a number belongs", set_value("throughput.median", "245.4")),
            ("a missing required field", delete("config.batch_size")),
            ("a missing required array", delete("window_throughput")),
            ("a precision outside the vocabulary", set_value("config.precision", "fp8")),
            ("a memory format outside the vocabulary", set_value("config.memory_format", "nhwc")),
            ("another format's tag", set_value("schema", "gpuperf.run/2")),
            ("a field no writer writes", set_value("throughput_median", 1.0)),
            ("a zero window throughput (the reader refuses it)",
             set_value("window_throughput.0", 0)),
            ("NaN as a string instead of null", set_value("device.memory_bytes", "NaN")),
            ("an integer field holding a fraction", set_value("config.batch_size", 4.5)),
            ("a boolean as a string", set_value("config.adaptive", "false")),
            ("a batch size of 0", set_value("config.batch_size", 0)),
            ("a timestamp not in UTC ISO 8601", set_value("timestamp_utc", "2026-12-01 00:18:15")),
            ("an unknown clock-event reason",
             set_value("telemetry.clock_event_reason_names", ["hot"])),
            ("a data-parallel object of one rank", set_value("distributed", ONE_RANK)),
            ("strict: a field current writers always write", delete("config.optimizer_impl")),
            ("strict: the telemetry object missing", delete("telemetry")),
        ]),
        ("inference/3 (tests/fixtures/golden/inference.json)", "inference-3", v3, [
            ("version 2's boolean cuda_graph beside graph_mode", set_value("cuda_graph", False)),
            ("version 2's boolean cuda_graph instead of graph_mode",
             replace_field("graph_mode", "cuda_graph", False)),
            ("the graph mode as a boolean", set_value("graph_mode", False)),
            ("a graph mode outside the vocabulary", set_value("graph_mode", "graph")),
            ("a missing graph mode", delete("graph_mode")),
            ("version 2's tag", set_value("schema", "gpuperf.inference/2")),
            ("the version 1 device string", set_value("device", "cpu")),
            ("a string where a number belongs", set_value(f"batches.{b1}.latency.p50_s", "fast")),
            ("a precision outside the vocabulary", set_value("precision", "int8")),
        ]),
        ("inference/2", "inference-2", v2, [
            ("version 3's graph_mode beside cuda_graph", set_value("graph_mode", "eager")),
            ("version 3's graph_mode instead of cuda_graph",
             replace_field("cuda_graph", "graph_mode", "eager")),
            ("version 3's tag", set_value("schema", "gpuperf.inference/3")),
            ("the version 1 device string", set_value("device", "cpu")),
            ("version 1's device_name beside the device object", set_value("device_name", "AMD")),
            ("version 1's fingerprint beside the device object", set_value("fingerprint", {})),
            ("a field required since version 2", delete("kernel_fusion")),
            ("a missing field of the device object", delete("device.sm_count")),
            ("a string where a number belongs", set_value(f"batches.{b1}.latency.p50_s", "fast")),
            ("a negative latency", set_value(f"batches.{b1}.latency.p99_s", -1.0)),
            ("a negative peak memory", set_value(f"batches.{b1}.peak_memory_bytes", -1.0)),
            ("a peak memory that is a string", set_value(f"batches.{b1}.peak_memory_bytes", "1 GiB")),
            ("no batch size measured", set_value("batches", [])),
            ("batch 1 measured but no batch-1 headline", delete("headline.batch1_p50_s")),
            ("out_of_memory with an 'all measured' stop reason", set_value("out_of_memory", True)),
            ("a precision outside the vocabulary", set_value("precision", "int8")),
        ]),
        ("inference/1", "inference-1", v1, [
            ("the version 2 device object", set_value("device", v2["device"])),
            ("a missing required field", delete("device_name")),
            ("a device string that names no device", set_value("device", "gpu0")),
            ("version 2's tag", set_value("schema", "gpuperf.inference/2")),
        ]),
        ("micro/1 (tests/fixtures/golden/micro.json)", "micro-1", micro, [
            ("a string where a number belongs", set_value("results.0.median", "0.008")),
            ("an unsupported result with statistics", set_value("results.0.status", "unsupported")),
            ("a GEMM of an unknown data type", set_value("results.0.variant", "fp4")),
            ("a unit outside the vocabulary", set_value("results.0.unit", "GiB/s")),
            ("a missing required field", delete("datasheet")),
            ("a seeds' table with a column too many", set_value("seeds_table.0.FP4", "-")),
        ]),
        ("specs/1 (libgpuperf/data/gpu_specs.json)", "specs-1", specs, [
            ("a peak of an unknown data type", set_value("gpus.0.peak_tflops.fp4", 1.0)),
            ("a figure not a number, null, 'none' or range", set_value("gpus.0.memory_gb", "n/a")),
            ("a negative figure", set_value("gpus.0.bandwidth_gb_s", -1)),
            ("a misspelt field (the reader ignores it)", set_value("gpus.0.bandwith_gb_s", 900)),
            ("an entry without a source", delete("gpus.0.source")),
            ("a PCIe generation outside the vocabulary", set_value("gpus.0.pcie", "Gen6x")),
            ("a range of three numbers", set_value("gpus.0.tdp_w", [1, 2, 3])),
        ]),
        ("published/1 (libgpuperf/data/published_results.json)", "published-1", published, [
            ("a throughput of zero", set_value("results.0.images_per_second", 0)),
            ("a GPU count of zero", set_value("results.0.gpu_count", 0)),
            ("a missing source", delete("results.0.source")),
        ]),
        ("rental_prices/1 (libgpuperf/data/gpu_rental_prices.json)", "rental_prices-1", prices, [
            ("a price of zero", set_value("prices.0.usd_per_gpu_hour", 0)),
            ("a price as a string", set_value("prices.0.usd_per_gpu_hour", "2.49")),
            ("a missing source", delete("prices.0.source")),
            ("a missing date", delete("prices.0.date")),
            ("a date that is no YYYY-MM-DD", set_value("prices.0.date", "Sept 2026")),
            ("a misspelt field (the reader ignores it)", set_value("prices.0.usd_per_hour", 2.0)),
            ("no price at all", set_value("prices", [])),
        ]),
        ("gpu_info --json snapshot", "gpu-info", GPU_INFO, [
            ("a string where a number belongs", set_value("devices.0.power_draw_watts", "123 W")),
            ("a missing reading instead of null", delete("devices.0.ecc_enabled")),
            ("available false with devices", set_value("available", False)),
            ("reason names without the bits", set_value("devices.0.clock_event_reasons", None)),
        ]),
    ]


def cmd_self_test(schemas, args):
    problems = schemas.check_schemas()
    for p in problems:
        print(f"FAIL: {p}")
    failures = len(problems)
    rejected = 0
    for label, name, good, mutations in self_test_cases(args.root):
        errors = schemas.errors(good, name, strict=False)
        if errors:
            failures += 1
            print(f"FAIL: {label}: the unmodified document is rejected: {errors[0]}")
            continue
        print(f"ok: {label}: the unmodified document is valid")
        for what, mutate in mutations:
            strict = what.startswith("strict:")
            broken = copy.deepcopy(good)
            mutate(broken)
            errors = schemas.errors(broken, name, strict=strict)
            if not errors:
                failures += 1
                print(f"FAIL: {label}: {what}: accepted")
            else:
                rejected += 1
                print(f"ok: {label}: {what}: rejected ({errors[0]})")
            if strict and schemas.errors(broken, name, strict=False):
                failures += 1
                print(f"FAIL: {label}: {what}: rejected without --strict too "
                      "(an older file would fail)")
    print(f"self-test: {rejected} broken document(s) rejected, {failures} failure(s)")
    return 1 if failures or rejected == 0 else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemas", default=DEFAULT_SCHEMAS, help="folder of *.schema.json")
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("validate")
    p.add_argument("--as", dest="as_name",
                   help="schema name for documents without a tag (gpu-info)")
    p.add_argument("--strict", action="store_true", help="also require x-always-written properties")
    p.add_argument("files", nargs="+")
    p = sub.add_parser("committed")
    p.add_argument("--root", required=True, help="the source tree")
    p = sub.add_parser("fresh")
    p.add_argument("--expect", help="the schema tag the program must write")
    p.add_argument("--as", dest="as_name", help="schema name for output without a tag")
    p.add_argument("--stdout", action="store_true", help="validate the standard output")
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("self-test")
    p.add_argument("--root", required=True, help="the source tree")
    args = parser.parse_args(argv)
    if args.mode == "fresh" and bool(args.expect) == bool(args.as_name):
        parser.error("fresh: give exactly one of --expect TAG and --as NAME")
    schemas = Schemas(args.schemas)
    return {"validate": cmd_validate, "committed": cmd_committed, "fresh": cmd_fresh,
            "self-test": cmd_self_test}[args.mode](schemas, args)


if __name__ == "__main__":
    sys.exit(main())
