"""gpuperf's JSON results from Python: read them, tabulate them, and write training records from a
Python timing loop, so that PyTorch measurements sit beside gpuperf's in gpuperf_compare,
gpuperf_report and gpuperf_advise.

Standard library only (pandas for to_dataframe(), torch for device_info() where they import).
The formats are described by the JSON Schemas in docs/schema/ (installed to
<prefix>/share/gpuperf/schema); docs/python.md shows more.

    import gpuperf_results as gr

    runs = gr.load_many(["h200-fp16.json", "peer-fp16.json"])   # gpuperf.run/1, inference/1-3...
    table = gr.to_dataframe(runs)        # one row per measurement, units in the column names

    writer = gr.RunRecordWriter(model="resnet50", batch_size=256, precision="fp16",
                                memory_format="channels_last", optimizer="sgd", learning_rate=0.1,
                                input_shape=(3, 224, 224), num_classes=1000, warmup_steps=10,
                                steps_per_window=20, device="cuda")
    for _ in range(10):
        writer.add_window(seconds=window_seconds)    # one timed window of steps_per_window steps
    writer.write("peer-fp16.json")                   # a valid gpuperf.run/1 record
"""
import itertools
import json
import math
import os
import platform
import re
import shlex
import socket
import stat
import sys
import tempfile
import time

__version__ = "0.1.0"

RUN_SCHEMA = "gpuperf.run/1"
INFERENCE_SCHEMA = "gpuperf.inference/3"
INFERENCE_SCHEMA_V2 = "gpuperf.inference/2"  # the boolean cuda_graph for graph_mode; still read
INFERENCE_SCHEMA_V1 = "gpuperf.inference/1"
MICRO_SCHEMA = "gpuperf.micro/1"
SPECS_SCHEMA = "gpuperf.specs/1"
PUBLISHED_SCHEMA = "gpuperf.published/1"
#: Every tag load() accepts, and the kind of document it marks.
KINDS = {RUN_SCHEMA: "train", INFERENCE_SCHEMA: "inference", INFERENCE_SCHEMA_V2: "inference",
         INFERENCE_SCHEMA_V1: "inference", MICRO_SCHEMA: "micro", SPECS_SCHEMA: "specs",
         PUBLISHED_SCHEMA: "published"}

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
MEMORY_FORMATS = ("contiguous", "channels_last")
OPTIMIZERS = ("adam", "sgd", "adamw")
OPTIMIZER_IMPLS = ("torch.optim", "fused", "torch::optim")
GRAPH_MODES = ("eager", "cuda-graph")
TIMERS = ("cuda-event", "steady-clock")

# The limits of gpuperf's readers (base/json.h, base/files.h, inference_result.h).
_MAX_QUANTITY = 1e15      # kMaxQuantity: the largest measured quantity, in base units
_MAX_COUNT = 2147483647   # kMaxCount: batch sizes, iterations, ranks... fit an int
_MAX_STEPS = 2 ** 63 - 1  # steps are counted in int64
_MAX_METRIC = 1e18        # run_record.cpp: the largest derived figure in "metrics"
_MAX_FLOAT = 3.4028234663852886e38  # GradScaler's scale is a float
_MAX_SCALING_EFFICIENCY = 1.5
_MAX_JSON_DEPTH = 256
_MAX_INPUT_BYTES = 64 << 20
_MAX_THROUGHPUT = _MAX_QUANTITY
_IMAGENET_1K_TRAIN_IMAGES = 1281167
_IMAGENET_EPOCHS = 90
_MAX_STORED_LATENCIES = 100000  # inference_result.h, kMaxStoredLatencies


class FormatError(ValueError):
    """A file that is not a gpuperf document of an accepted kind, or one a gpuperf reader would
    refuse: "<file>: field '<path>' <problem>", as the C++ readers say it."""


# ---- reading ---------------------------------------------------------------------------------
def _fail(origin, field, problem):
    raise FormatError(f"{origin}: field '{field or '(top level)'}' {problem}")


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _num(value):
    """A number as the C++ messages print it (6 significant digits)."""
    return f"{value:g}"


def _exceeds(value, bound):
    """base/json.h exceeds(): `value` above `bound` by more than rounding; False for NaN."""
    return value - bound > 1e-9 * max(abs(value), abs(bound))


class _Duplicate(dict):
    """An object in which a key appeared twice (the first such key in `duplicate`)."""
    duplicate = None


def _pairs(pairs):
    record = {}
    for key, value in pairs:
        if key in record:
            twice = _Duplicate(record)
            twice.duplicate = key
            return twice
        record[key] = value
    return record


def _refuse_constant(name):
    # Python's json reads NaN and Infinity, which are not JSON: gpuperf writes null for them.
    raise ValueError(f"{name} is not JSON (gpuperf writes null for 'not available')")


def _parse_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number overflow parsing '{text[:40]}'")
    return value


def _parse_int(text):
    # As nlohmann reads it: an integer beyond 64 bits is a double, and one beyond a double's range
    # is an error (int() refuses more than 4300 digits).
    value = int(text)
    if -2 ** 63 <= value < 2 ** 64:
        return value
    return _parse_float(text)


# Strings, so that brackets inside them are not counted as nesting.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _depth(text):
    """How deep containers nest in JSON text (without recursion: json's parser would recurse)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def _first_duplicate(document):
    """The path of the first key that appeared twice in one object, or None."""
    pending = [(document, "")]
    while pending:
        value, path = pending.pop()
        if isinstance(value, dict):
            if isinstance(value, _Duplicate):
                return f"{path}.{value.duplicate}" if path else value.duplicate
            children = [(v, f"{path}.{k}" if path else k) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(value)]
        else:
            continue
        pending.extend(reversed(children))
    return None


def parse(text, origin="document"):
    """A JSON document as gpuperf's reader parses it (base/json.cpp parse_json()): FormatError
    naming `origin` for text that is not JSON, nests deeper than 256 levels, is longer than
    64 MiB, holds a key twice in one object (json would keep the last), NaN or Infinity, or a
    number beyond a double."""
    if not isinstance(text, str):
        raise FormatError(f"{origin}: not JSON text ({type(text).__name__})")
    if len(text) > _MAX_INPUT_BYTES:
        raise FormatError(f"{origin}: over the 64 MiB limit of a JSON document")
    if _depth(text) > _MAX_JSON_DEPTH:
        raise FormatError(f"{origin}: nested deeper than {_MAX_JSON_DEPTH} levels, the limit of "
                          "a JSON document")
    try:
        document = json.loads(text, parse_constant=_refuse_constant, parse_float=_parse_float,
                              parse_int=_parse_int, object_pairs_hook=_pairs)
    except (ValueError, RecursionError) as e:
        raise FormatError(f"{origin}: not valid JSON: {e}") from None
    twice = _first_duplicate(document)
    if twice is not None:
        raise FormatError(f"{origin}: field '{twice}' appears twice in one object (a reader "
                          "would keep only the last)")
    return document


class _Reader:
    """base/json.h JsonReader: one object of a document, every error FormatError naming the
    origin and the field's full path."""

    def __init__(self, value, origin, path=""):
        self.origin, self.path = origin, path
        if not isinstance(value, dict):
            self.fail("", "is not an object")
        self.object = value

    def field(self, key):
        if not key:
            return self.path
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key, problem):
        _fail(self.origin, self.field(key), problem)

    def has(self, key):
        return key in self.object

    def at(self, key):
        if key not in self.object:
            self.fail(key, "is missing")
        return self.object[key]

    def number(self, key):
        value = self.at(key)
        if value is None:
            return math.nan
        if not _number(value):
            self.fail(key, "is not a number")
        return float(value)

    def integer(self, key):
        value = self.at(key)
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(key, "is not an integer")
        return value

    def integer_in(self, key, low, high):
        value = self.integer(key)
        if not low <= value <= high:
            self.fail(key, f"is {value}, expected >= {low} and <= {high}")
        return value

    def string(self, key):
        value = self.at(key)
        if not isinstance(value, str):
            self.fail(key, "is not a string")
        return value

    def boolean(self, key):
        value = self.at(key)
        if not isinstance(value, bool):
            self.fail(key, "is not a boolean")
        return value

    def number_in(self, key, low, high, nullable=True, exclusive_low=False):
        value = self.at(key)
        if value is None:
            if not nullable:
                self.fail(key, "is null, expected a number")
            return math.nan
        if not _number(value):
            self.fail(key, "is not a number")
        value = float(value)
        if not (value > low if exclusive_low else value >= low) or not value <= high:
            self.fail(key, f"is {_num(value)}, expected {'>' if exclusive_low else '>='} "
                           f"{_num(low)} and <= {_num(high)}")
        return value

    def non_negative(self, key, nullable=True):
        return self.number_in(key, 0, _MAX_QUANTITY, nullable)

    def positive(self, key, nullable=True):
        return self.number_in(key, 0, _MAX_QUANTITY, nullable, exclusive_low=True)

    def array(self, key):
        value = self.at(key)
        if not isinstance(value, list):
            self.fail(key, "is not an array")
        return value

    def nullable_numbers_in(self, key, low, high):
        """An array of numbers in [low, high] or nulls (NaN: not available)."""
        out = []
        for i, v in enumerate(self.array(key)):
            if v is None:
                out.append(math.nan)
                continue
            if not _number(v):
                self.fail(f"{key}[{i}]", "is neither a number nor null")
            v = float(v)
            if not low <= v <= high:
                self.fail(f"{key}[{i}]",
                          f"is {_num(v)}, expected >= {_num(low)} and <= {_num(high)}")
            out.append(v)
        return out

    def numbers_in(self, key, low, high, exclusive_low=False):
        out = []
        for i, v in enumerate(self.array(key)):
            if not _number(v):
                self.fail(key, "holds a non-number")
            v = float(v)
            if not (v > low if exclusive_low else v >= low) or not v <= high:
                self.fail(f"{key}[{i}]", f"is {_num(v)}, expected {'>' if exclusive_low else '>='} "
                                         f"{_num(low)} and <= {_num(high)}")
            out.append(v)
        return out

    def extents(self, key):
        """A shape: integers in [1, kMaxCount]."""
        out = self.array(key)
        for v in out:
            if not isinstance(v, int) or isinstance(v, bool):
                self.fail(key, "holds a non-integer")
            if not 1 <= v <= _MAX_COUNT:
                self.fail(key, f"holds {v}, expected >= 1")
        return out

    def strings(self, key, required=True):
        if not required and not self.has(key):
            return []
        out = self.array(key)
        if not all(isinstance(v, str) for v in out):
            self.fail(key, "holds a non-string")
        return out

    def child(self, key):
        return _Reader(self.at(key), self.origin, self.field(key))

    def element(self, key, index):
        return _Reader(self.array(key)[index], self.origin, f"{self.field(key)}[{index}]")


def _read_device(d):
    for key in ("kind", "name", "compute_capability", "driver_version", "cuda_driver_api_version",
                "cuda_runtime_version", "cudnn_version", "libtorch_version", "gpuperf_version",
                "host"):
        d.string(key)
    for key in ("index", "sm_count", "intra_op_threads"):
        d.integer_in(key, 0, _MAX_COUNT)
    for key in ("memory_bytes", "sm_clock_max_hz", "memory_clock_max_hz", "power_limit_watts"):
        d.non_negative(key)


def _bounded(r, field, value, bound_name, bound, low):
    if _exceeds(bound, value) if low else _exceeds(value, bound):
        r.fail(field, f"is {_num(value)}, {'below' if low else 'above'} {bound_name} "
                      f"{_num(bound)}")


def _read_summary(r):
    """run_record.cpp read_summary() and check_summary()."""
    s = {"count": r.integer_in("count", 0, _MAX_COUNT)}
    for key in ("median", "mean", "stdev", "min", "max", "q1", "q3", "iqr"):
        s[key] = r.non_negative(key)
    for key in ("ci95_low", "ci95_high"):
        s[key] = r.number_in(key, -_MAX_QUANTITY, _MAX_QUANTITY)
    if s["count"] == 0 and math.isfinite(s["median"]) and s["median"] != 0:
        r.fail("median", f"is {_num(s['median'])}, but count is 0 (no windows)")
    if s["count"] > 0 and not s["median"] > 0:
        r.fail("median", f"is {'null' if math.isnan(s['median']) else '0'} with {s['count']} "
                         "windows, whose throughputs are > 0")
    for field, bound, low in (("median", "min", True), ("median", "max", False),
                              ("q1", "q3", False), ("q1", "min", True), ("q1", "median", False),
                              ("q3", "median", True), ("q3", "max", False)):
        _bounded(r, field, s[field], bound, s[bound], low)
    if _exceeds(s["min"], s["mean"]) or _exceeds(s["mean"], s["max"]):
        r.fail("mean", f"is {_num(s['mean'])}, outside [min, max] = [{_num(s['min'])}, "
                       f"{_num(s['max'])}]")
    _bounded(r, "ci95_low", s["ci95_low"], "ci95_high", s["ci95_high"], False)
    return s


def _read_telemetry(t):
    t.boolean("available")
    t.string("unavailable_reason")
    t.integer_in("sample_count", 0, _MAX_COUNT)
    for key in ("duration_seconds", "processed_samples", "power_mean_watts", "power_max_watts",
                "energy_joules", "energy_per_sample_joules", "samples_per_joule",
                "sm_clock_mean_hz", "sm_clock_min_hz", "sm_clock_max_hz", "memory_used_max_bytes"):
        t.non_negative(key)
    t.string("energy_source")
    t.number_in("temperature_max_celsius", -273.15, 1000)
    t.number_in("gpu_utilization_mean_percent", 0, 100)
    bits = t.at("clock_event_reasons")
    if not isinstance(bits, int) or isinstance(bits, bool) or not -2 ** 63 <= bits < 2 ** 64:
        t.fail("clock_event_reasons", "is not an integer")
    t.strings("warnings")


def _read_distributed(d):
    world = d.integer_in("world_size", 2, _MAX_COUNT)
    for key in ("backend", "launcher", "interconnect"):
        d.string(key)
    global_rate = d.positive("global_throughput")
    ranks = d.numbers_in("rank_throughput", 0, _MAX_QUANTITY, exclusive_low=True)
    if len(ranks) != world:
        d.fail("rank_throughput", f"has {len(ranks)} values, world_size {world}")
    # The median of per-window sums is not the sum of the ranks' medians (run_record.cpp).
    if _exceeds(global_rate, 1.1 * sum(ranks)):
        d.fail("global_throughput", f"is {_num(global_rate)}, above the sum of rank_throughput "
                                    f"({_num(sum(ranks))}) by more than 10%: the job is its "
                                    "ranks together")
    d.positive("baseline_throughput")
    efficiency = d.non_negative("scaling_efficiency")
    if efficiency > _MAX_SCALING_EFFICIENCY:
        d.fail("scaling_efficiency", f"is {_num(efficiency)}, above {_MAX_SCALING_EFFICIENCY:g}: "
                                     "ranks cannot each outrun a single process by half again")
    d.non_negative("gradient_bytes")
    d.integer_in("buckets", 0, _MAX_COUNT)
    d.non_negative("allreduce_bus_gbps")
    d.non_negative("allreduce_share_of_step")
    d.boolean("parameters_identical")


def _check_run(r):
    """run_record.cpp from_json<RunRecord>(): every field gpuperf_compare reads, range-checked and
    consistent."""
    for key in ("timestamp_utc", "command"):
        r.string(key)
    _read_device(r.child("device"))
    c = r.child("config")
    for key in ("workload", "model", "precision", "memory_format", "optimizer", "graph_mode",
                "data_source"):
        c.string(key)
    for key in ("optimizer_impl", "kernel_fusion"):  # added later: absent in older records
        if c.has(key):
            c.string(key)
    batch_size = c.integer_in("batch_size", 1, _MAX_COUNT)
    if c.has("accumulation_steps"):  # written only above 1 (gradient accumulation)
        c.integer_in("accumulation_steps", 1, batch_size)
    c.extents("input_shape")
    c.integer_in("num_classes", 0, _MAX_COUNT)
    c.non_negative("learning_rate")
    for key in ("cudnn_benchmark", "grad_scaler", "adaptive"):
        c.boolean(key)
    c.integer_in("warmup_steps", 0, _MAX_STEPS)
    c.integer_in("steps_per_window", 0, _MAX_STEPS)
    c.integer_in("seed", -2 ** 63, 2 ** 64 - 1)
    summary = _read_summary(r.child("throughput"))
    windows = r.numbers_in("window_throughput", 0, _MAX_QUANTITY, exclusive_low=True)
    seconds = r.numbers_in("window_seconds", 0, _MAX_QUANTITY, exclusive_low=True)
    r.non_negative("overall_throughput", nullable=False)
    timed_steps = r.integer_in("timed_steps", 0, _MAX_STEPS)
    r.non_negative("timed_seconds")
    r.string("stop_reason")
    r.string("timer")
    r.non_negative("peak_memory_bytes")
    r.integer_in("skipped_steps", 0, _MAX_STEPS)
    total_steps = r.integer_in("total_steps", 0, _MAX_STEPS)
    if timed_steps > total_steps:
        r.fail("timed_steps", f"is {timed_steps}, above total_steps {total_steps}")
    if r.has("first_loss"):
        r.number_in("first_loss", -_MAX_QUANTITY, _MAX_QUANTITY)
    r.number_in("final_loss", -_MAX_QUANTITY, _MAX_QUANTITY)
    r.number_in("final_loss_scale", 0, _MAX_FLOAT)
    # Records written before the windows' losses were kept have none.
    losses = r.nullable_numbers_in("window_losses", -_MAX_QUANTITY, _MAX_QUANTITY) \
        if r.has("window_losses") else []
    if r.has("telemetry"):
        _read_telemetry(r.child("telemetry"))
    m = r.child("metrics")
    for key in m.object:
        m.number_in(key, -_MAX_METRIC, _MAX_METRIC)
    r.strings("warnings")
    # check_windows(): the arrays agree, and the summary is of the windows.
    if seconds and len(seconds) != len(windows):
        r.fail("window_seconds", f"has {len(seconds)} windows, window_throughput {len(windows)}")
    if summary["count"] != len(windows):
        r.fail("throughput.count", f"is {summary['count']}, but {len(windows)} windows are given")
    if windows:
        low, high = min(windows), max(windows)
        for key in ("median", "min", "max"):
            if _exceeds(low, summary[key]) or _exceeds(summary[key], high):
                r.fail(f"throughput.{key}", f"is {_num(summary[key])}, outside the windows' "
                                            f"range [{_num(low)}, {_num(high)}]")
    # After the windows' own checks: each kept loss belongs to a window.
    if losses and len(losses) != len(windows):
        r.fail("window_losses", f"has {len(losses)} windows, window_throughput {len(windows)}")
    if r.has("distributed"):
        _read_distributed(r.child("distributed"))


def _seconds(r, key):
    value = r.number(key)
    if not 0 <= value <= _MAX_QUANTITY:  # NaN (null) fails too
        r.fail(key, f"is not a duration >= 0 s and <= {_num(_MAX_QUANTITY)}")
    return value


def _read_latency(r):
    """inference_result.cpp read_latency()."""
    count = r.integer("count")
    if count < 1:
        r.fail("count", f"must be >= 1, got {count}")
    r.integer_in("count", 1, _MAX_COUNT)
    s = {key: _seconds(r, key) for key in ("mean_s", "min_s", "p50_s", "p90_s", "p95_s", "p99_s",
                                          "max_s")}
    order = ("min_s", "p50_s", "p90_s", "p95_s", "p99_s", "max_s")
    for below, key in zip(order, order[1:]):
        if s[key] < s[below]:
            r.fail(key, f"is {_num(s[key])}, below {below} {_num(s[below])}")
    if _exceeds(s["min_s"], s["mean_s"]) or _exceeds(s["mean_s"], s["max_s"]):
        r.fail("mean_s", f"is {_num(s['mean_s'])}, outside [min_s, max_s] = "
                         f"[{_num(s['min_s'])}, {_num(s['max_s'])}]")
    s["count"] = count
    return s


def _read_batch(b, earlier):
    size = b.integer("batch_size")
    if size < 1:
        b.fail("batch_size", f"must be >= 1, got {size}")
    size = b.integer_in("batch_size", 1, _MAX_COUNT)
    if size in earlier:
        b.fail("batch_size", f"{size} appears twice")
    latency = _read_latency(b.child("latency"))
    median = b.positive("throughput_median", nullable=False)
    b.non_negative("throughput_overall", nullable=False)
    iterations = b.integer_in("iterations", 1, _MAX_COUNT)
    if latency["count"] != iterations:
        b.fail("latency.count", f"is {latency['count']}, but {iterations} iterations were timed")
    fastest = size / latency["min_s"] if latency["min_s"] > 0 else math.inf
    slowest = size / latency["max_s"] if latency["max_s"] > 0 else math.inf
    if _exceeds(slowest, median) or _exceeds(median, fastest):
        b.fail("throughput_median", f"is {_num(median)}, outside the calls' range [batch_size / "
                                    f"max_s, batch_size / min_s] = [{_num(slowest)}, "
                                    f"{_num(fastest)}]")
    b.non_negative("total_seconds", nullable=False)
    if b.has("peak_memory_bytes"):
        b.non_negative("peak_memory_bytes")
    if b.has("latencies_s"):
        values = b.array("latencies_s")
        if len(values) > min(latency["count"], _MAX_STORED_LATENCIES):
            b.fail("latencies_s", f"holds {len(values)} values, more than latency.count "
                                  f"({latency['count']}) or {_MAX_STORED_LATENCIES}")
        for v in values:
            if not _number(v):
                b.fail("latencies_s", "holds a non-number")
            if not 0 <= v <= _MAX_QUANTITY:
                b.fail("latencies_s", "holds a bad duration")
            if _exceeds(latency["min_s"], v) or _exceeds(v, latency["max_s"]):
                b.fail("latencies_s", f"holds {_num(v)}, outside [latency.min_s, latency.max_s]")
    return size


def _read_serving(s):
    if s.has("simulated"):
        s.boolean("simulated")
    max_batch = s.integer_in("max_batch", 1, _MAX_COUNT)
    s.non_negative("max_queue_delay_s", nullable=False)
    s.integer_in("requests", 1, _MAX_COUNT)
    s.integer("seed")
    s.boolean("reached_saturation")
    for i in range(len(s.array("points"))):
        p = s.element("points", i)
        for key in ("offered_rate", "arrival_rate", "achieved_rate", "capacity", "mean_wait_s",
                    "mean_service_s"):
            p.non_negative(key)
        _read_latency(p.child("latency"))
        p.number_in("mean_batch_size", 0, max_batch)
        p.integer_in("batches", 0, _MAX_COUNT)
        p.boolean("saturated")
        p.string("saturation_reason")
        if p.has("requests"):
            p.integer_in("requests", 0, _MAX_COUNT)


def _read_graph_mode(r, tag):
    """inference_result.cpp read_cuda_graph(): version 3 names the graph mode as run records do,
    versions 1 and 2 wrote the boolean cuda_graph; a file holding the other versions' field is
    refused. Returns "eager" or "cuda-graph"."""
    if tag != INFERENCE_SCHEMA:
        if r.has("graph_mode"):
            r.fail("graph_mode", f"is not part of {tag}, which writes the boolean cuda_graph")
        return "cuda-graph" if r.boolean("cuda_graph") else "eager"
    if r.has("cuda_graph"):
        r.fail("cuda_graph", f"is not part of {INFERENCE_SCHEMA}, which writes graph_mode "
                             "(eager or cuda-graph)")
    mode = r.string("graph_mode")
    if mode not in GRAPH_MODES:
        r.fail("graph_mode", f"is '{mode}', expected one of {', '.join(GRAPH_MODES)}")
    return mode


def _check_inference(r, tag):
    """inference_result.cpp from_json<InferenceResult>()."""
    for key in ("timestamp_utc", "command", "model"):
        r.string(key)
    if tag == INFERENCE_SCHEMA_V1:
        r.string("device")
        r.string("device_name")
        if r.has("fingerprint"):
            _read_device(r.child("fingerprint"))
    else:
        if not isinstance(r.at("device"), dict):
            r.fail("device", "is not an object (a gpuperf.inference/1 device string?)")
        _read_device(r.child("device"))
    if r.has("input_shape"):
        r.extents("input_shape")
    if r.has("cudnn_benchmark"):
        r.boolean("cudnn_benchmark")
    if r.has("cudnn_benchmark_from_batch"):
        first = r.integer("cudnn_benchmark_from_batch")
        if first < 1:
            r.fail("cudnn_benchmark_from_batch", f"is {first}, expected >= 1")
    if r.has("seed"):
        r.integer("seed")
    for key in ("precision", "memory_format", "graph_fallback_reason", "timer", "stop_reason"):
        r.string(key)
    if r.has("kernel_fusion"):
        r.string("kernel_fusion")
    _read_graph_mode(r, tag)
    r.integer_in("warmup", 0, _MAX_COUNT)
    r.integer_in("iterations", 1, _MAX_COUNT)
    r.boolean("out_of_memory")
    batches = r.array("batches")
    if not batches:
        r.fail("batches", "is empty: no batch size was measured")
    sizes = set()
    for i in range(len(batches)):
        sizes.add(_read_batch(r.element("batches", i), sizes))
    if r.has("serving"):
        _read_serving(r.child("serving"))


def _check_micro(r):
    """What to_rows() reads of a microbenchmark report (gpuperf has no C++ reader of it)."""
    results = r.array("results")
    for i in range(len(results)):
        e = r.element("results", i)
        for key in ("name", "status", "unit"):
            e.string(key)
        e.number_in("median", -_MAX_METRIC, _MAX_METRIC)
        if e.has("windows"):
            e.array("windows")
        if e.has("percent_of_datasheet") and e.at("percent_of_datasheet") is not None:
            e.number("percent_of_datasheet")


def check(record, origin="document"):
    """Raises FormatError where a gpuperf reader would refuse `record`: the tag, and for a
    training record or an inference result every field gpuperf_compare reads, range-checked as
    its reader checks them (measured quantities in [0, 1e15], counts within an int) and
    consistent with each other (order statistics, counts, steps, a summary of its windows, a
    data-parallel job's rates). A microbenchmark report's results are checked for what to_rows()
    reads; a datasheet or published-results file for its tag only (gpuperf_advise reads them).
    Returns the record's kind ("train", "inference", "micro", ...)."""
    r = _Reader(record, origin)
    tag = record.get("schema")
    if not isinstance(tag, str):
        _fail(origin, "schema", "is missing" if tag is None else "is not a string")
    if tag not in KINDS:
        _fail(origin, "schema", f"is '{tag}', expected one of {', '.join(sorted(KINDS))}")
    kind = KINDS[tag]
    if kind == "train":
        _check_run(r)
    elif kind == "inference":
        _check_inference(r, tag)
    elif kind == "micro":
        _check_micro(r)
    return kind


def read_text(path):
    """The text of the file at `path` as gpuperf's readers take it (base/files.cpp): a regular
    file (FormatError for a directory, FIFO or device: a FIFO is never opened for reading, so it
    cannot hang), at most 64 MiB, UTF-8. OSError where it cannot be read."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise FormatError(f"{path}: not a regular file")
    if info.st_size > _MAX_INPUT_BYTES:
        raise FormatError(f"{path}: larger than 64 MiB, the limit of an input file")
    # O_NONBLOCK: should a FIFO replace the file after stat(), opening it does not wait for a
    # writer, and fstat() below refuses it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FormatError(f"{path}: not a regular file")
        data = f.read(_MAX_INPUT_BYTES + 1)
    if len(data) > _MAX_INPUT_BYTES:
        raise FormatError(f"{path}: larger than 64 MiB, the limit of an input file")
    if not data:
        raise FormatError(f"{path}: is empty")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: not valid JSON: not UTF-8 ({e})") from None


class Document(dict):
    """A document read by load(): a dict that also knows the file it came from (`path`, as given
    to load()), so that to_rows() can label its rows with the file rather than a position."""

    path = None


def load(path, kinds=None):
    """The document at `path` as a dict (a Document, whose `path` is `path`), after check();
    `kinds` (e.g. {"train", "inference"}) limits what is accepted. Raises FormatError naming the
    file and field (a file that is not a regular file, not JSON, or one gpuperf's readers would
    refuse), OSError when it cannot be read; nothing else."""
    record = parse(read_text(path), path)
    kind = check(record, path)
    if kinds is not None and kind not in kinds:
        _fail(path, "schema", f"is '{record['schema']}', a {kind} document; expected "
                              f"{' or '.join(sorted(kinds))}")
    document = Document(record)
    document.path = os.fspath(path)
    return document


def load_many(paths, kinds=None):
    """load() of each path, in order; the first bad file raises."""
    return [load(p, kinds) for p in paths]


def kind_of(record):
    """"train", "inference", "micro", "specs" or "published"; None for another document."""
    tag = record.get("schema") if isinstance(record, dict) else None
    return KINDS.get(tag) if isinstance(tag, str) else None


def device_of(record):
    """The device object of a result (gpuperf.inference/1 files hold it under "fingerprint", or,
    the oldest, only a device string and name)."""
    if not isinstance(record, dict):
        return {}
    if record.get("schema") == INFERENCE_SCHEMA_V1:
        if isinstance(record.get("fingerprint"), dict):
            return record["fingerprint"]
        device, name = record.get("device"), record.get("device_name")
        return {"kind": device.split(":")[0] if isinstance(device, str) else "",
                "name": name if isinstance(name, str) else ""}
    device = record.get("device")
    return device if isinstance(device, dict) else {}


def graph_mode_of(record):
    """"eager" or "cuda-graph": a training record's config.graph_mode, an inference result's
    graph_mode whatever the version (gpuperf.inference/1 and /2 files hold the boolean
    "cuda_graph"); "" for another document."""
    if not isinstance(record, dict):
        return ""
    if kind_of(record) == "train":
        return record.get("config", {}).get("graph_mode", "")
    if kind_of(record) != "inference":
        return ""
    if "graph_mode" in record:
        return record["graph_mode"]
    return "cuda-graph" if record.get("cuda_graph") else "eager"


# ---- tables ----------------------------------------------------------------------------------
def _nan(value):
    return float(value) if _number(value) else math.nan


def _common(record, source):
    device = device_of(record)
    return {"source": source, "schema": record.get("schema"), "kind": kind_of(record),
            "device_name": device.get("name", ""), "device_kind": device.get("kind", ""),
            "libtorch_version": device.get("libtorch_version", ""),
            "timestamp_utc": record.get("timestamp_utc", "")}


def _train_rows(record, source):
    c, t = record["config"], record["throughput"]
    tele = record.get("telemetry", {})
    row = _common(record, source)
    row.update({
        "measurement": f"train/{c['model']}", "model": c["model"], "precision": c["precision"],
        "memory_format": c["memory_format"], "batch_size": c["batch_size"],
        "graph_mode": c["graph_mode"], "optimizer": c["optimizer"],
        "optimizer_impl": c.get("optimizer_impl", "torch::optim"),
        "world_size": record.get("distributed", {}).get("world_size", 1),
        "windows": t["count"],
        "throughput_median_samples_per_s": _nan(t["median"]),
        "throughput_ci95_low_samples_per_s": _nan(t["ci95_low"]),
        "throughput_ci95_high_samples_per_s": _nan(t["ci95_high"]),
        "throughput_overall_samples_per_s": _nan(record["overall_throughput"]),
        "global_throughput_samples_per_s":
            _nan(record.get("distributed", {}).get("global_throughput")),
        "peak_memory_bytes": _nan(record["peak_memory_bytes"]),
        # Records written before first_loss was kept have none: NaN, as for a null.
        "first_loss": _nan(record.get("first_loss")),
        "final_loss": _nan(record.get("final_loss")),
        "power_mean_w": _nan(tele.get("power_mean_watts")),
        "energy_per_sample_j": _nan(tele.get("energy_per_sample_joules")),
    })
    return [row]


def _inference_rows(record, source):
    rows = []
    for b in record["batches"]:
        latency = b["latency"]
        row = _common(record, source)
        row.update({
            "measurement": f"inference/{record['model']}/bs{b['batch_size']}",
            "model": record["model"], "precision": record["precision"],
            "memory_format": record["memory_format"], "batch_size": b["batch_size"],
            "graph_mode": graph_mode_of(record),
            "windows": latency["count"],
            "throughput_median_samples_per_s": _nan(b["throughput_median"]),
            "throughput_overall_samples_per_s": _nan(b["throughput_overall"]),
            "latency_p50_s": _nan(latency["p50_s"]), "latency_p90_s": _nan(latency["p90_s"]),
            "latency_p99_s": _nan(latency["p99_s"]), "latency_max_s": _nan(latency["max_s"]),
            "peak_memory_bytes": _nan(b.get("peak_memory_bytes")),
        })
        rows.append(row)
    return rows


# A microbenchmark's unit -> (column, factor to base units).
_MICRO_UNITS = {"TFLOP/s": ("rate_flop_per_s", 1e12), "TOP/s": ("rate_op_per_s", 1e12),
                "GB/s": ("bandwidth_bytes_per_s", 1e9), "us": ("latency_median_s", 1e-6)}


def _micro_rows(record, source):
    rows = []
    for r in record["results"]:
        row = _common(record, source)
        row.update({"measurement": r["name"], "status": r["status"],
                    "windows": len(r.get("windows", []))})
        other = ("median_" + re.sub(r"\W+", "_", r["unit"]), 1)
        column, factor = _MICRO_UNITS.get(r["unit"], other)
        row[column] = _nan(r["median"]) * factor
        if _number(r.get("percent_of_datasheet")):
            row["percent_of_datasheet"] = float(r["percent_of_datasheet"])
        rows.append(row)
    return rows


def to_rows(records, sources=None):
    """Flat rows (dicts), one per measurement: a training record is one row, an inference result
    one row per batch size, a microbenchmark report one row per measurement. Numbers are in base
    units, named in the column ("throughput_median_samples_per_s", "latency_p99_s",
    "bandwidth_bytes_per_s", ...); NaN where not available. `records` is a list of documents or a
    {source: document} mapping; `sources` labels a list. Without labels, the "source" column is
    the file each document was load()ed from (its path, as given), else its index in the list.
    Each document is check()ed first: FormatError naming its source where gpuperf would refuse
    it."""
    if isinstance(records, dict) and "schema" not in records:
        sources, records = list(records.keys()), list(records.values())
    elif isinstance(records, dict):
        records = [records]
    if sources is None:
        # A dict built in Python has no file; its position is the only name it has.
        sources = [getattr(r, "path", None) if getattr(r, "path", None) is not None else i
                   for i, r in enumerate(records)]
    rows = []
    for record, source in zip(records, sources):
        kind = check(record, str(source))
        if kind == "train":
            rows.extend(_train_rows(record, source))
        elif kind == "inference":
            rows.extend(_inference_rows(record, source))
        elif kind == "micro":
            rows.extend(_micro_rows(record, source))
        else:
            raise FormatError(f"{source}: schema '{record.get('schema')}' holds no measurements")
    return rows


def to_dataframe(records, sources=None):
    """to_rows() as a pandas DataFrame (ImportError when pandas is not installed)."""
    import pandas  # noqa: PLC0415 - optional dependency

    return pandas.DataFrame(to_rows(records, sources))


# ---- statistics, as gpuperf computes them (timing/statistics.cpp) ------------------------------
def _incomplete_beta_fraction(a, b, x):
    tiny, epsilon = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) >= tiny else tiny)
    h = d
    for m in range(1, 501):
        m2 = 2.0 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + aa * d
            d = 1 / (d if abs(d) >= tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) >= tiny else tiny
            delta = d * c
            h *= delta
        if abs(delta - 1) < epsilon:
            break
    return h


def _regularized_incomplete_beta(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) +
                     b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _incomplete_beta_fraction(a, b, x) / a
    return 1 - front * _incomplete_beta_fraction(b, a, 1 - x) / b


def student_t_cdf(t, dof):
    tail = 0.5 * _regularized_incomplete_beta(dof / 2, 0.5, dof / (dof + t * t))
    return 1 - tail if t > 0 else tail


def student_t_quantile(p, dof):
    """The p-quantile of Student's t with `dof` degrees of freedom (bisection, as gpuperf)."""
    if not 0 < p < 1:
        raise ValueError(f"student_t_quantile: p must be in (0, 1), got {p}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -student_t_quantile(1 - p, dof)
    low, high = 0.0, 1.0
    while student_t_cdf(high, dof) < p:
        low, high = high, high * 2
    for _ in range(200):
        if high - low <= 1e-12 * high:
            break
        mid = (low + high) / 2
        if student_t_cdf(mid, dof) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def quantile(sorted_values, q):
    """Linear interpolation between closest ranks (numpy's default, gpuperf's quantile_sorted)."""
    position = q * (len(sorted_values) - 1)
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    return sorted_values[below] + (position - below) * (sorted_values[above] - sorted_values[below])


def summarize(values):
    """The "throughput" object of a run record: count, median, mean, stdev (n - 1), min, max,
    q1, q3, iqr and the Student-t 95% interval of the mean (the mean itself for one value)."""
    values = sorted(float(v) for v in values)
    if not values:
        raise ValueError("summarize: no values")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("summarize: a value is not finite")
    n = len(values)
    mean = sum(values) / n
    s = {"count": n, "median": quantile(values, 0.5), "mean": mean, "stdev": 0.0,
         "min": values[0], "max": values[-1], "q1": quantile(values, 0.25),
         "q3": quantile(values, 0.75)}
    s["iqr"] = s["q3"] - s["q1"]
    s["ci95_low"] = s["ci95_high"] = mean
    if n >= 2:
        s["stdev"] = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
        half = student_t_quantile(0.975, n - 1) * s["stdev"] / math.sqrt(n)
        s["ci95_low"], s["ci95_high"] = mean - half, mean + half
    return {k: s[k] for k in ("count", "median", "mean", "stdev", "min", "max", "q1", "q3", "iqr",
                              "ci95_low", "ci95_high")}


def latency_summary(seconds):
    """The "latency" object of an inference batch from per-call seconds (timing/latency.cpp)."""
    values = sorted(float(v) for v in seconds)
    if not values or not all(0 <= v <= _MAX_QUANTITY for v in values):
        raise ValueError("latency: needs durations >= 0 and <= 1e15 s")
    p50, p99 = quantile(values, 0.5), quantile(values, 0.99)
    return {"count": len(values), "mean_s": sum(values) / len(values), "min_s": values[0],
            "p50_s": p50, "p90_s": quantile(values, 0.9), "p95_s": quantile(values, 0.95),
            "p99_s": p99, "max_s": values[-1], "p99_over_p50": p99 / p50 if p50 > 0 else None}


# ---- the device ------------------------------------------------------------------------------
def _device_template(kind="cpu", index=0):
    """A device object with nothing measured: empty strings, zeros, nulls."""
    return {"kind": kind, "index": index, "name": "", "sm_count": 0, "compute_capability": "",
            "memory_bytes": None, "sm_clock_max_hz": None, "memory_clock_max_hz": None,
            "power_limit_watts": None, "driver_version": "", "cuda_driver_api_version": "",
            "cuda_runtime_version": "", "cudnn_version": "", "libtorch_version": "",
            "gpuperf_version": f"{__version__}+python", "intra_op_threads": 0,
            "host": socket.gethostname(), "host_cpu": _cpu_model(),
            "host_cores": os.cpu_count() or 0}


def _resolve_device(device, torch_module):
    """device_info(device), or a caller's device object over an empty one (what it does not say
    stays unknown: "", 0, null)."""
    if not isinstance(device, dict):
        return device_info(device, torch_module)
    info = _device_template()
    unknown = sorted(str(k) for k in set(device) - set(info))
    if unknown:
        raise ValueError(f"device: unknown field(s) {', '.join(unknown)}")
    info.update(device)
    _choice("device.kind", info["kind"], ("cuda", "cpu"))
    try:  # as gpuperf's reader will take it: strings, counts, quantities in range
        _read_device(_Reader(info, "device argument", "device"))
    except FormatError as e:
        raise ValueError(str(e)) from None
    return info


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _nvidia_driver_version():
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8", errors="replace") as f:
            match = re.search(r"Kernel Module\s+(?:for \S+\s+)?([0-9]+(?:\.[0-9]+)+)", f.read())
            return match.group(1) if match else ""
    except OSError:
        return ""


def _cuda_version_text(version):
    return f"{version // 1000}.{(version % 1000) // 10}" if version and version > 0 else ""


def _cudnn_version_text(v):
    if not v:
        return ""
    # cuDNN 9 encodes major * 10000 + minor * 100 + patch (8.x: major * 1000 + minor * 100).
    if v >= 90000:
        major, minor = v // 10000, (v % 10000) // 100
    else:
        major, minor = v // 1000, (v % 1000) // 100
    return f"{major}.{minor}.{v % 100}"


def device_info(device=None, torch_module=None):
    """The "device" object of a record, as gpuperf collects it (device/device.cpp): for a CUDA
    device from torch (name, SMs, compute capability, memory, CUDA, cuDNN and driver versions);
    for the CPU its model, hardware threads and RAM. `device` is a torch.device, "cuda", "cuda:N",
    "cpu" or None (the current CUDA device if torch sees one, else the CPU). Readings torch does
    not give (clocks, power limit) are None (null). Without torch: the CPU, LibTorch version ""."""
    torch = torch_module
    if torch is None:
        try:
            import torch  # noqa: PLC0415 - optional dependency
        except ImportError:
            torch = None
    text = str(device) if device is not None else None
    cuda = torch is not None and bool(torch.cuda.is_available())
    if text is None:
        text = "cuda" if cuda else "cpu"
    kind, _, index = text.partition(":")
    if kind not in ("cuda", "cpu"):
        raise ValueError(f"device_info: unknown device '{text}' (cpu, cuda or cuda:N)")
    index = int(index) if index else (torch.cuda.current_device() if kind == "cuda" and cuda else 0)
    info = _device_template(kind, index)
    if torch is not None:
        # LibTorch's version as gpuperf records it ("2.11.0"): the wheel's without "+cu130".
        info["libtorch_version"] = str(torch.__version__).split("+")[0]
        info["intra_op_threads"] = int(torch.get_num_threads())
    if kind == "cpu":
        info["name"] = _cpu_model()
        info["sm_count"] = os.cpu_count() or 0
        try:
            info["memory_bytes"] = float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
        return info
    if not cuda:
        raise ValueError(f"device_info: '{text}' asked for, but torch sees no CUDA device")
    props = torch.cuda.get_device_properties(index)
    info.update({"name": props.name, "sm_count": int(props.multi_processor_count),
                 "compute_capability": f"{props.major}.{props.minor}",
                 "memory_bytes": float(props.total_memory),
                 "cuda_runtime_version": torch.version.cuda or "",
                 "driver_version": _nvidia_driver_version()})
    try:
        info["cuda_driver_api_version"] = _cuda_version_text(torch._C._cuda_getDriverVersion())
    except (AttributeError, RuntimeError):
        pass
    if torch.backends.cudnn.is_available():
        info["cudnn_version"] = _cudnn_version_text(torch.backends.cudnn.version())
    return info


# ---- writing ---------------------------------------------------------------------------------
def _utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _json_value(value):
    """None for NaN and infinities (gpuperf's null), the value otherwise."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value):
    """`value` with lone surrogates (bytes of sys.argv that are not UTF-8) as U+FFFD: JSON cannot
    hold them, and gpuperf's reader refuses their escapes."""
    return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value


def write_json(document, path):
    """Writes `document` atomically (a temporary file beside `path`, then renamed), indented as
    gpuperf writes it; NaN and infinities become null."""
    def clean(v):
        if isinstance(v, dict):
            return {_text(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if isinstance(v, str):
            return _text(v)
        return _json_value(v)

    text = json.dumps(clean(document), indent=2, sort_keys=True, allow_nan=False) + "\n"
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".gpuperf-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _run_context(device, timer, command, torch_module):
    """A writer's device, timer (default: CUDA events on a GPU, else the steady clock) and command
    line (default: this process's)."""
    device = _resolve_device(device, torch_module)
    timer = _choice("timer", timer or ("cuda-event" if device["kind"] == "cuda" else "steady-clock"),
                    TIMERS)
    if command is not None and not isinstance(command, str):
        raise ValueError(f"command: must be a string, got {command!r}")
    if command is None:
        command = " ".join(shlex.quote(a) for a in [os.path.basename(sys.executable)] + sys.argv)
    return device, timer, command


def _choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name}: unknown value {value!r} (choose one of: {', '.join(choices)})")
    return value


def _positive_int(name, value, minimum=1, maximum=_MAX_COUNT):
    """An int in [minimum, maximum] (default: what gpuperf's readers take as a count)."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise ValueError(f"{name}: must be an integer >= {minimum} and <= {maximum}, "
                         f"got {value!r}")
    return value


def _seed(value):
    if isinstance(value, bool) or not isinstance(value, int) or not -2 ** 63 <= value < 2 ** 63:
        raise ValueError(f"seed: must be a 64-bit integer, got {value!r}")
    return value


def _optional_number(name, value, low=-_MAX_QUANTITY, high=_MAX_QUANTITY):
    """None, a number that is not finite (written as null: not available, or a loss that
    diverged) or a number in [low, high]."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return value
    if not _number(value) or not low <= value <= high:
        raise ValueError(f"{name}: must be a number >= {_num(low)} and <= {_num(high)} or None, "
                         f"got {value!r}")
    return value


def _telemetry_unavailable(reason):
    summary = {"available": False, "unavailable_reason": reason, "sample_count": 0,
               "energy_source": "", "clock_event_reasons": 0, "clock_event_reason_names": [],
               "warnings": []}
    for key in ("duration_seconds", "processed_samples", "power_mean_watts", "power_max_watts",
                "energy_joules", "energy_per_sample_joules", "samples_per_joule",
                "sm_clock_mean_hz", "sm_clock_min_hz", "sm_clock_max_hz",
                "temperature_max_celsius", "gpu_utilization_mean_percent",
                "memory_used_max_bytes"):
        summary[key] = None
    return summary


class RunRecordWriter:
    """Builds a gpuperf.run/1 record from a Python timing loop: the settings once, then each
    timed window (seconds, or samples/s), then what the run ended with. The statistics are
    gpuperf's (summarize()), so gpuperf_compare's verdict treats both sides alike.

    Settings are checked here, naming the bad one (ValueError). `device` is what device_info()
    takes, or a device object (a dict as device_info() returns; fields it leaves out stay
    unknown: "", 0, null). `timer` defaults to "cuda-event" on CUDA, "steady-clock" on the CPU;
    say which one your loop used. `optimizer_impl`: "torch.optim" (PyTorch's optimizers, foreach
    or per-tensor) or "fused" (fused=True)."""

    def __init__(self, *, model, batch_size, precision, memory_format="contiguous",
                 optimizer="adam", optimizer_impl="torch.optim", learning_rate=1e-3,
                 input_shape=(), num_classes=0, graph_mode="eager", kernel_fusion="none",
                 data_source="synthetic", cudnn_benchmark=True, grad_scaler=None, warmup_steps=0,
                 steps_per_window=1, seed=0, device=None, timer=None, command=None,
                 torch_module=None):
        if not isinstance(model, str) or not model:
            raise ValueError(f"model: must be a non-empty name, got {model!r}")
        if not (_number(learning_rate) and 0 <= learning_rate <= _MAX_QUANTITY):
            raise ValueError(f"learning_rate: must be a number >= 0 and <= 1e15, "
                             f"got {learning_rate!r}")
        self.config = {
            "workload": "train", "model": model,
            "batch_size": _positive_int("batch_size", batch_size),
            "input_shape": [_positive_int("input_shape", int(d)) for d in input_shape],
            "num_classes": _positive_int("num_classes", num_classes, 0),
            "precision": _choice("precision", precision, PRECISIONS),
            "memory_format": _choice("memory_format", memory_format, MEMORY_FORMATS),
            "optimizer": _choice("optimizer", optimizer, OPTIMIZERS),
            "optimizer_impl": _choice("optimizer_impl", optimizer_impl, OPTIMIZER_IMPLS),
            "learning_rate": float(learning_rate),
            "graph_mode": _choice("graph_mode", graph_mode, GRAPH_MODES),
            "kernel_fusion": str(kernel_fusion) or "none", "data_source": str(data_source),
            "cudnn_benchmark": bool(cudnn_benchmark),
            "grad_scaler": precision == "fp16" if grad_scaler is None else bool(grad_scaler),
            "warmup_steps": _positive_int("warmup_steps", warmup_steps, 0),
            "steps_per_window": _positive_int("steps_per_window", steps_per_window),
            "adaptive": False,
            "seed": _seed(seed),
        }
        self.device, self.timer, self.command = _run_context(device, timer, command, torch_module)
        self.window_throughput = []
        self.window_seconds = []
        self.window_steps = []
        self.peak_memory_bytes = None
        self.first_loss = None
        self.final_loss = None
        self.final_loss_scale = None
        self.window_losses = []
        self.skipped_steps = None
        self.metrics = {}
        self.warnings = []

    def add_window(self, seconds, steps=None):
        """One timed window: `steps` steps (default steps_per_window) in `seconds`."""
        steps = self.config["steps_per_window"] if steps is None else _positive_int("steps", steps)
        if not (_number(seconds) and 0 < seconds <= _MAX_QUANTITY):
            raise ValueError(f"seconds: a window must take a time > 0 and <= 1e15 s, "
                             f"got {seconds!r}")
        self._add(self.config["batch_size"] * steps / seconds, float(seconds), steps)

    def add_window_throughput(self, samples_per_s, steps=None):
        """One timed window given as samples/s (its seconds follow from the batch size)."""
        steps = self.config["steps_per_window"] if steps is None else _positive_int("steps", steps)
        if not (_number(samples_per_s) and math.isfinite(samples_per_s) and samples_per_s > 0):
            raise ValueError(f"samples_per_s: must be a finite rate > 0, got {samples_per_s!r}")
        self._add(float(samples_per_s), self.config["batch_size"] * steps / samples_per_s, steps)

    def _add(self, rate, seconds, steps):
        if rate >= _MAX_THROUGHPUT or seconds > _MAX_QUANTITY:
            raise ValueError(f"window throughput {rate} samples/s ({seconds} s) is not a "
                             "measurement")
        self.window_throughput.append(rate)
        self.window_seconds.append(seconds)
        self.window_steps.append(steps)

    def finish(self, *, peak_memory_bytes=None, final_loss=None, final_loss_scale=None,
               skipped_steps=None, metrics=None, warnings=(), first_loss=None,
               window_losses=()):
        """What the run ended with; None is "not available" (null). skipped_steps None: not
        counted (written as 0 with a warning saying so). first_loss: the loss of the very first
        step, warm-up included, so a reader can tell that the run trained (a finite final loss
        below it). window_losses: the loss of each window's last step, one per window added
        (or none)."""
        self.peak_memory_bytes = _optional_number("peak_memory_bytes", peak_memory_bytes, 0)
        for name, value in (("first_loss", first_loss), ("final_loss", final_loss)):
            _optional_number(name, value)
        _optional_number("final_loss_scale", final_loss_scale, 0, _MAX_FLOAT)
        window_losses = list(window_losses)
        for i, value in enumerate(window_losses):
            _optional_number(f"window_losses[{i}]", value)
        if skipped_steps is not None:
            _positive_int("skipped_steps", skipped_steps, 0, _MAX_STEPS)
        for name, value in dict(metrics or {}).items():
            if not isinstance(name, str):
                raise ValueError(f"metrics: a name must be a string, got {name!r}")
            _optional_number(f"metrics[{name!r}]", value, -_MAX_METRIC, _MAX_METRIC)
        warnings = list(warnings)
        if not all(isinstance(w, str) for w in warnings):
            raise ValueError(f"warnings: must be strings, got {warnings!r}")
        self.first_loss = first_loss
        self.final_loss = final_loss
        self.final_loss_scale = final_loss_scale
        self.window_losses = window_losses
        self.skipped_steps = skipped_steps
        self.metrics.update(metrics or {})
        self.warnings.extend(warnings)
        return self

    def record(self):
        """The record as a dict (valid gpuperf.run/1); ValueError before any window."""
        if not self.window_throughput:
            raise ValueError("RunRecordWriter: no timed window was added")
        if self.window_losses and len(self.window_losses) != len(self.window_throughput):
            raise ValueError(f"window_losses: {len(self.window_losses)} losses for "
                             f"{len(self.window_throughput)} windows")
        batch = self.config["batch_size"]
        timed_steps = sum(self.window_steps)
        timed_seconds = sum(self.window_seconds)
        throughput = summarize(self.window_throughput)
        warnings = list(self.warnings)
        skipped = self.skipped_steps
        if skipped is None:
            skipped = 0
            warnings.append("skipped optimizer steps were not counted (Python peer): "
                            "skipped_steps 0 is not a measurement")
        elif skipped > 0:
            warnings.append(f"{skipped} optimizer steps were skipped for inf/NaN gradients")
        if self.final_loss is not None and not math.isfinite(self.final_loss):
            warnings.append(f"the final loss is not finite ({self.final_loss})")
        if throughput["count"] >= 2 and throughput["mean"] != 0:
            half_width = (throughput["ci95_high"] - throughput["ci95_low"]) / 2
            spread = half_width / abs(throughput["mean"])
            if spread > 0.05:
                warnings.append(f"throughput is noisy: 95% CI half-width is {100 * spread:.6f}% "
                                "of the mean; use more windows")
        metrics = dict(self.metrics)
        shape = self.config["input_shape"]
        # The library's rule (imagenet_projection_seconds): a training record of ImageNet's
        # 3x224x224 input, at this process's rate (a peer record is one process).
        if (self.config.get("workload") == "train" and list(shape) == [3, 224, 224]
                and throughput["median"] > 0):
            metrics.setdefault("imagenet_90_epochs_seconds",
                               _IMAGENET_EPOCHS * _IMAGENET_1K_TRAIN_IMAGES / throughput["median"])
        return {
            "schema": RUN_SCHEMA, "timestamp_utc": _utc_now(), "command": self.command,
            "device": dict(self.device), "config": dict(self.config), "throughput": throughput,
            "window_throughput": list(self.window_throughput),
            "window_seconds": list(self.window_seconds),
            "overall_throughput": batch * timed_steps / timed_seconds,
            "timed_steps": timed_steps, "timed_seconds": timed_seconds,
            "stop_reason": "fixed window count", "timer": self.timer,
            "peak_memory_bytes": _json_value(self.peak_memory_bytes),
            "skipped_steps": int(skipped),
            "total_steps": self.config["warmup_steps"] + timed_steps,
            "first_loss": _json_value(self.first_loss),
            "final_loss": _json_value(self.final_loss),
            "final_loss_scale": _json_value(self.final_loss_scale),
            "window_losses": [_json_value(None if v is None else float(v))
                              for v in self.window_losses],
            "telemetry": _telemetry_unavailable("not sampled by the Python peer"),
            "metrics": {k: _json_value(v) for k, v in metrics.items()},
            "warnings": warnings,
        }

    def write(self, path):
        """Writes the record to `path` (atomically) and returns it."""
        record = self.record()
        check(record, path)
        write_json(record, path)
        return record


def write_run_record(path, *, window_throughput, **settings):
    """One call: a gpuperf.run/1 record at `path` from the windows' samples/s and the settings of
    RunRecordWriter (model, batch_size, precision, ... steps_per_window), plus those of finish()
    (peak_memory_bytes, final_loss, ...). Returns the record."""
    finish_keys = ("peak_memory_bytes", "first_loss", "final_loss", "final_loss_scale",
                   "skipped_steps", "metrics", "warnings", "window_losses")
    ending = {k: settings.pop(k) for k in finish_keys if k in settings}
    writer = RunRecordWriter(**settings)
    for rate in window_throughput:
        writer.add_window_throughput(rate)
    writer.finish(**ending)
    return writer.write(path)


class InferenceResultWriter:
    """Builds a gpuperf.inference/3 result from per-call latencies, one batch size at a time, as
    inference_benchmark measures them (untimed warm-up calls, then timed calls). `graph_mode`
    "eager" or "cuda-graph" (as RunRecordWriter's); `kernel_fusion` says what the model fused
    ("none")."""

    def __init__(self, *, model, precision, memory_format="contiguous", graph_mode="eager",
                 kernel_fusion="none", warmup=0, iterations=1, input_shape=(), cudnn_benchmark=True,
                 cudnn_benchmark_from_batch=1, seed=0, device=None, timer=None, command=None,
                 torch_module=None):
        if not isinstance(model, str) or not model:
            raise ValueError(f"model: must be a non-empty name, got {model!r}")
        self.model = model
        self.precision = _choice("precision", precision, PRECISIONS)
        self.memory_format = _choice("memory_format", memory_format, MEMORY_FORMATS)
        self.graph_mode = _choice("graph_mode", graph_mode, GRAPH_MODES)
        self.kernel_fusion = str(kernel_fusion) or "none"
        self.warmup = _positive_int("warmup", warmup, 0)
        self.iterations = _positive_int("iterations", iterations)
        self.input_shape = [_positive_int("input_shape", int(d)) for d in input_shape]
        self.cudnn_benchmark = bool(cudnn_benchmark)
        self.cudnn_benchmark_from_batch = _positive_int("cudnn_benchmark_from_batch",
                                                        cudnn_benchmark_from_batch)
        self.seed = _seed(seed)
        self.device, self.timer, self.command = _run_context(device, timer, command, torch_module)
        self.batches = []

    def add_batch(self, batch_size, latencies_s, keep_latencies=True, peak_memory_bytes=None):
        """The timed calls of one batch size, in call order (seconds each). peak_memory_bytes:
        the most the allocator held from the batch size's first call to its last
        (torch.cuda.max_memory_allocated() after reset_peak_memory_stats()); None or NaN where not
        measured."""
        batch_size = _positive_int("batch_size", batch_size)
        if any(b["batch_size"] == batch_size for b in self.batches):
            raise ValueError(f"batch_size: {batch_size} appears twice")
        if peak_memory_bytes is not None and (not _number(peak_memory_bytes) or
                                              peak_memory_bytes < 0):  # NaN: not measured
            raise ValueError(f"peak_memory_bytes: must be a number >= 0, got {peak_memory_bytes!r}")
        calls = [float(s) for s in latencies_s]
        latency = latency_summary(calls)
        if not latency["p50_s"] > 0:
            raise ValueError("latencies_s: the median call took 0 s; no throughput follows")
        total = sum(calls)
        batch = {"batch_size": batch_size, "latency": latency,
                 "throughput_median":
                     batch_size / latency["p50_s"] if latency["p50_s"] > 0 else None,
                 "throughput_overall": batch_size * len(calls) / total if total > 0 else None,
                 "iterations": len(calls), "total_seconds": total,
                 "peak_memory_bytes": _json_value(
                     None if peak_memory_bytes is None else float(peak_memory_bytes))}
        if keep_latencies:  # at most _MAX_STORED_LATENCIES, spread as evenly_spaced() does
            n, count = len(calls), min(len(calls), _MAX_STORED_LATENCIES)
            batch["latencies_s"] = [calls[i * n // count] for i in range(count)]
        self.batches.append(batch)

    def record(self):
        if not self.batches:
            raise ValueError("InferenceResultWriter: no batch size was added")
        best = max(self.batches, key=lambda b: b["throughput_median"] or 0)
        headline = {"best_throughput": best["throughput_median"] or 0.0,
                    "best_batch_size": best["batch_size"]}
        for b in self.batches:
            if b["batch_size"] == 1:
                headline["batch1_p50_s"] = b["latency"]["p50_s"]
                headline["batch1_p99_over_p50"] = b["latency"]["p99_over_p50"]
        return {
            "schema": INFERENCE_SCHEMA, "timestamp_utc": _utc_now(), "command": self.command,
            "model": self.model, "device": dict(self.device), "input_shape": self.input_shape,
            "cudnn_benchmark": self.cudnn_benchmark,
            "cudnn_benchmark_from_batch": self.cudnn_benchmark_from_batch, "seed": self.seed,
            "precision": self.precision, "memory_format": self.memory_format,
            "graph_mode": self.graph_mode, "graph_fallback_reason": "",
            "kernel_fusion": self.kernel_fusion, "timer": self.timer, "warmup": self.warmup,
            "iterations": self.iterations, "batches": list(self.batches),
            "stop_reason": f"all {len(self.batches)} batch sizes measured",
            "out_of_memory": False, "headline": headline,
        }

    def write(self, path):
        record = self.record()
        check(record, path)
        write_json(record, path)
        return record
