"""gpuperf's JSON results from Python: read them, tabulate them, and write training records from a
Python timing loop, so that PyTorch measurements sit beside gpuperf's in gpuperf_compare,
gpuperf_report and gpuperf_advise.

Standard library only (pandas for to_dataframe(), torch for device_info() where they import).
The formats are described by the JSON Schemas in docs/schema/ (installed to
<prefix>/share/gpuperf/schema); docs/python.md shows more.

    import gpuperf_results as gr

    runs = gr.load_many(["h200-fp16.json", "peer-fp16.json"])   # gpuperf.run/1, inference/1|2, ...
    table = gr.to_dataframe(runs)        # one row per measurement, units in the column names

    writer = gr.RunRecordWriter(model="resnet50", batch_size=256, precision="fp16",
                                memory_format="channels_last", optimizer="sgd", learning_rate=0.1,
                                input_shape=(3, 224, 224), num_classes=1000, warmup_steps=10,
                                steps_per_window=20, device="cuda")
    for _ in range(10):
        writer.add_window(seconds=window_seconds)    # one timed window of steps_per_window steps
    writer.write("peer-fp16.json")                   # a valid gpuperf.run/1 record
"""
import json
import math
import os
import platform
import re
import shlex
import socket
import sys
import tempfile
import time

__version__ = "0.1.0"

RUN_SCHEMA = "gpuperf.run/1"
INFERENCE_SCHEMA = "gpuperf.inference/2"
INFERENCE_SCHEMA_V1 = "gpuperf.inference/1"
MICRO_SCHEMA = "gpuperf.micro/1"
SPECS_SCHEMA = "gpuperf.specs/1"
PUBLISHED_SCHEMA = "gpuperf.published/1"
#: Every tag load() accepts, and the kind of document it marks.
KINDS = {RUN_SCHEMA: "train", INFERENCE_SCHEMA: "inference", INFERENCE_SCHEMA_V1: "inference",
         MICRO_SCHEMA: "micro", SPECS_SCHEMA: "specs", PUBLISHED_SCHEMA: "published"}

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
MEMORY_FORMATS = ("contiguous", "channels_last")
OPTIMIZERS = ("adam", "sgd", "adamw")
OPTIMIZER_IMPLS = ("torch.optim", "fused", "torch::optim")
GRAPH_MODES = ("eager", "cuda-graph")
TIMERS = ("cuda-event", "steady-clock")

# The readers refuse throughputs at or above this (run_record.cpp, check_measured()).
_MAX_THROUGHPUT = 1e15
_IMAGENET_1K_TRAIN_IMAGES = 1281167
_IMAGENET_EPOCHS = 90
_MAX_STORED_LATENCIES = 100000  # inference_result.h, kMaxStoredLatencies


class FormatError(ValueError):
    """A file that is not a gpuperf document of an accepted kind, or one a gpuperf reader would
    refuse: "<file>: field '<path>' <problem>", as the C++ readers say it."""


# ---- reading ---------------------------------------------------------------------------------
def _refuse_constant(name):
    # Python's json reads NaN and Infinity, which are not JSON: gpuperf writes null for them.
    raise ValueError(f"{name} is not JSON (gpuperf writes null for 'not available')")


def _fail(origin, field, problem):
    raise FormatError(f"{origin}: field '{field or '(top level)'}' {problem}")


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check(record, origin="document"):
    """Raises FormatError where a gpuperf reader would refuse `record` for what load() can see
    without the schemas: the tag, the fields the readers need, and check_measured()'s limits on a
    training record. Returns the record's kind ("train", "inference", "micro", ...)."""
    if not isinstance(record, dict):
        _fail(origin, "", "is not an object")
    tag = record.get("schema")
    if not isinstance(tag, str):
        _fail(origin, "schema", "is missing" if tag is None else "is not a string")
    if tag not in KINDS:
        _fail(origin, "schema", f"is '{tag}', expected one of {', '.join(sorted(KINDS))}")
    kind = KINDS[tag]
    if kind == "train":
        for key in ("device", "config", "throughput", "window_throughput", "window_seconds",
                    "overall_throughput"):
            if key not in record:
                _fail(origin, key, "is missing")
        batch = record["config"].get("batch_size")
        if not isinstance(batch, int) or isinstance(batch, bool) or batch <= 0:
            _fail(origin, "config.batch_size", "must be > 0")
        windows, seconds = record["window_throughput"], record["window_seconds"]
        if seconds and len(seconds) != len(windows):
            _fail(origin, "window_seconds",
                  f"has {len(seconds)} windows, window_throughput {len(windows)}")
        for v in windows:
            if not _number(v) or not 0 < v < _MAX_THROUGHPUT:
                _fail(origin, "window_throughput", f"holds {v!r}")
        overall = record["overall_throughput"]
        if not _number(overall) or not 0 <= overall < _MAX_THROUGHPUT:
            _fail(origin, "overall_throughput", f"is {overall!r}")
    elif kind == "inference":
        device_key = "device" if tag == INFERENCE_SCHEMA else "device_name"
        for key in ("model", device_key, "precision", "batches"):
            if key not in record:
                _fail(origin, key, "is missing")
        if tag == INFERENCE_SCHEMA and not isinstance(record["device"], dict):
            _fail(origin, "device", "is not an object (a gpuperf.inference/1 device string?)")
        if not isinstance(record["batches"], list) or not record["batches"]:
            _fail(origin, "batches", "is empty: no batch size was measured")
    elif kind == "micro":
        if not isinstance(record.get("results"), list):
            _fail(origin, "results", "is not an array")
    return kind


def load(path, kinds=None):
    """The document at `path` as a dict, after check(); `kinds` (e.g. {"train", "inference"})
    limits what is accepted. Raises FormatError naming the file and field, OSError when
    unreadable."""
    with open(path, encoding="utf-8") as f:
        try:
            record = json.load(f, parse_constant=_refuse_constant)
        except ValueError as e:
            raise FormatError(f"{path}: not valid JSON: {e}") from None
    kind = check(record, path)
    if kinds is not None and kind not in kinds:
        _fail(path, "schema", f"is '{record['schema']}', a {kind} document; expected "
                              f"{' or '.join(sorted(kinds))}")
    return record


def load_many(paths, kinds=None):
    """load() of each path, in order; the first bad file raises."""
    return [load(p, kinds) for p in paths]


def kind_of(record):
    """"train", "inference", "micro", "specs" or "published"; None for another document."""
    return KINDS.get(record.get("schema")) if isinstance(record, dict) else None


def device_of(record):
    """The device object of a result (gpuperf.inference/1 files hold it under "fingerprint", or,
    the oldest, only a device string and name)."""
    if record.get("schema") == INFERENCE_SCHEMA_V1:
        if "fingerprint" in record:
            return record["fingerprint"]
        device = record.get("device", "")
        return {"kind": device.split(":")[0], "name": record.get("device_name", "")}
    device = record.get("device")
    return device if isinstance(device, dict) else {}


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
            "graph_mode": "cuda-graph" if record.get("cuda_graph") else "eager",
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
    {source: document} mapping; `sources` labels a list (default: its index)."""
    if isinstance(records, dict) and "schema" not in records:
        sources, records = list(records.keys()), list(records.values())
    elif isinstance(records, dict):
        records = [records]
    if sources is None:
        sources = list(range(len(records)))
    rows = []
    for record, source in zip(records, sources):
        kind = kind_of(record)
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
    if not values or not all(math.isfinite(v) and v >= 0 for v in values):
        raise ValueError("latency: needs finite durations >= 0")
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
            "host": socket.gethostname()}


def _resolve_device(device, torch_module):
    """device_info(device), or a caller's device object over an empty one (what it does not say
    stays unknown: "", 0, null)."""
    if not isinstance(device, dict):
        return device_info(device, torch_module)
    info = _device_template()
    unknown = sorted(set(device) - set(info))
    if unknown:
        raise ValueError(f"device: unknown field(s) {', '.join(unknown)}")
    info.update(device)
    _choice("device.kind", info["kind"], ("cuda", "cpu"))
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


def write_json(document, path):
    """Writes `document` atomically (a temporary file beside `path`, then renamed), indented as
    gpuperf writes it; NaN and infinities become null."""
    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
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


def _choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name}: unknown value {value!r} (choose one of: {', '.join(choices)})")
    return value


def _positive_int(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {value!r}")
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
        if not (isinstance(learning_rate, (int, float)) and math.isfinite(learning_rate)
                and learning_rate >= 0):
            raise ValueError(f"learning_rate: must be a finite number >= 0, got {learning_rate!r}")
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
            "seed": int(seed),
        }
        self.device = _resolve_device(device, torch_module)
        self.timer = _choice("timer", timer or ("cuda-event" if self.device["kind"] == "cuda"
                                                  else "steady-clock"), TIMERS)
        self.command = command if command is not None else " ".join(
            shlex.quote(a) for a in [os.path.basename(sys.executable)] + sys.argv)
        self.window_throughput = []
        self.window_seconds = []
        self.window_steps = []
        self.peak_memory_bytes = None
        self.first_loss = None
        self.final_loss = None
        self.final_loss_scale = None
        self.skipped_steps = None
        self.metrics = {}
        self.warnings = []

    def add_window(self, seconds, steps=None):
        """One timed window: `steps` steps (default steps_per_window) in `seconds`."""
        steps = self.config["steps_per_window"] if steps is None else _positive_int("steps", steps)
        if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"seconds: a window must take a finite time > 0, got {seconds!r}")
        self._add(self.config["batch_size"] * steps / seconds, float(seconds), steps)

    def add_window_throughput(self, samples_per_s, steps=None):
        """One timed window given as samples/s (its seconds follow from the batch size)."""
        steps = self.config["steps_per_window"] if steps is None else _positive_int("steps", steps)
        if not (isinstance(samples_per_s, (int, float)) and math.isfinite(samples_per_s)
                and samples_per_s > 0):
            raise ValueError(f"samples_per_s: must be a finite rate > 0, got {samples_per_s!r}")
        self._add(float(samples_per_s), self.config["batch_size"] * steps / samples_per_s, steps)

    def _add(self, rate, seconds, steps):
        if rate >= _MAX_THROUGHPUT:
            raise ValueError(f"window throughput {rate} samples/s is not a measurement")
        self.window_throughput.append(rate)
        self.window_seconds.append(seconds)
        self.window_steps.append(steps)

    def finish(self, *, peak_memory_bytes=None, final_loss=None, final_loss_scale=None,
               skipped_steps=None, metrics=None, warnings=(), first_loss=None):
        """What the run ended with; None is "not available" (null). skipped_steps None: not
        counted (written as 0 with a warning saying so). first_loss: the loss of the very first
        step, warm-up included, so a reader can tell that the run trained (a finite final loss
        below it)."""
        self.peak_memory_bytes = peak_memory_bytes
        self.first_loss = first_loss
        self.final_loss = final_loss
        self.final_loss_scale = final_loss_scale
        self.skipped_steps = skipped_steps
        self.metrics.update(metrics or {})
        self.warnings.extend(warnings)
        return self

    def record(self):
        """The record as a dict (valid gpuperf.run/1); ValueError before any window."""
        if not self.window_throughput:
            raise ValueError("RunRecordWriter: no timed window was added")
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
        if len(shape) == 3 and shape[1] == 224 and throughput["median"] > 0:
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
                   "skipped_steps", "metrics", "warnings")
    ending = {k: settings.pop(k) for k in finish_keys if k in settings}
    writer = RunRecordWriter(**settings)
    for rate in window_throughput:
        writer.add_window_throughput(rate)
    writer.finish(**ending)
    return writer.write(path)


class InferenceResultWriter:
    """Builds a gpuperf.inference/2 result from per-call latencies, one batch size at a time, as
    inference_benchmark measures them (untimed warm-up calls, then timed calls). `mode` eager or
    graph sets cuda_graph; `kernel_fusion` says what the model fused ("none")."""

    def __init__(self, *, model, precision, memory_format="contiguous", cuda_graph=False,
                 kernel_fusion="none", warmup=0, iterations=1, input_shape=(), cudnn_benchmark=True,
                 cudnn_benchmark_from_batch=1, seed=0, device=None, timer=None, command=None,
                 torch_module=None):
        if not isinstance(model, str) or not model:
            raise ValueError(f"model: must be a non-empty name, got {model!r}")
        self.model = model
        self.precision = _choice("precision", precision, PRECISIONS)
        self.memory_format = _choice("memory_format", memory_format, MEMORY_FORMATS)
        self.cuda_graph = bool(cuda_graph)
        self.kernel_fusion = str(kernel_fusion) or "none"
        self.warmup = _positive_int("warmup", warmup, 0)
        self.iterations = _positive_int("iterations", iterations)
        self.input_shape = [_positive_int("input_shape", int(d)) for d in input_shape]
        self.cudnn_benchmark = bool(cudnn_benchmark)
        self.cudnn_benchmark_from_batch = int(cudnn_benchmark_from_batch)
        self.seed = int(seed)
        self.device = _resolve_device(device, torch_module)
        self.timer = _choice("timer", timer or ("cuda-event" if self.device["kind"] == "cuda"
                                                  else "steady-clock"), TIMERS)
        self.command = command if command is not None else " ".join(
            shlex.quote(a) for a in [os.path.basename(sys.executable)] + sys.argv)
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
            "cuda_graph": self.cuda_graph, "graph_fallback_reason": "",
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
