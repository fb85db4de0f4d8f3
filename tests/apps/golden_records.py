#!/usr/bin/env python3
"""Golden-record check: a program's JSON for a fixed tiny configuration matches the committed
record in tests/fixtures/golden/, apart from times, timestamps and measured values.

  golden_records.py <golden.json> <program> [args...]

Runs the program with --json <tmp> added and compares the two documents after masking: every
number becomes "<number>" (null stays null: availability must match) unless its key is a
setting (SETTINGS, or anything under "config"); timestamps, the command line, the host and
"is noisy" warnings (which depend on the measurement) are dropped, and verdicts drawn from
measured times (MEASURED_VERDICTS) keep only their type. The device fingerprint
is masked (it describes the machine), and a build with another LibTorch than the golden record's
is SKIPPED (exit 77: what runs differs by version). Keys, types, list lengths, strings and
booleans must match; figures printed into display strings (MEASURED_TEXT) have
their digits masked. Exit 1 with the differing paths listed."""
import json
import os
import re
import subprocess
import sys
import tempfile

SETTINGS = {"batch_size", "iterations", "warmup", "seed", "max_batch", "max_queue_delay_s",
            "requests", "buffer_bytes", "calls_per_window", "operand_sets", "unit_scale",
            "warmup_calls", "work_per_call", "count", "input_shape", "num_classes",
            "steps_per_window", "warmup_steps", "timed_steps", "total_steps", "skipped_steps",
            "index", "sm_count", "rate"}
DROPPED = {"timestamp_utc", "command", "host", "reached_saturation"}
# Verdicts that follow from measured times: a serving point is saturated when the offered rate
# exceeds the capacity measured on this machine, now (a busy CI machine measured 24.8 req/s at
# batch 2 in one run and over 100 in another). Their type must match, not their value.
MEASURED_VERDICTS = {"saturated", "saturation_reason"}
MEASURED_TEXT = {"seeds_table"}  # tables of measured figures, as display strings
# What describes the machine rather than the run: names, core counts, memory, versions.
MACHINE = {"device", "fingerprint", "device_name", "GPU"}


def mask(value, key="", in_settings=False, measured_text=False):
    if key in MACHINE:
        if isinstance(value, dict):
            return {k: "<machine>" for k in value}
        return "<machine>"
    if key in MEASURED_VERDICTS:
        return f"<measured {type(value).__name__}>"
    if isinstance(value, dict):
        return {k: mask(v, k, in_settings or k == "config", measured_text or k in MEASURED_TEXT)
                for k, v in value.items() if k not in DROPPED}
    if isinstance(value, list):
        items = [v for v in value if not (isinstance(v, str) and "is noisy" in v)]
        # "the loss did not fall (first X, final Y)": the verdict must match, not the losses.
        return [mask(v, key, in_settings,
                     measured_text or key in MEASURED_TEXT or
                     (isinstance(v, str) and "the loss did not fall" in v)) for v in items]
    if isinstance(value, str) and measured_text:
        return re.sub(r"[0-9][0-9.]*", "<n>", value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    return value if (in_settings or key in SETTINGS) else "<number>"


def diff(a, b, path, out):
    if type(a) is not type(b):
        out.append(f"{path}: {a!r} != {b!r}")
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'golden' if k in a else 'new'}")
            else:
                diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")


def main():
    golden_path, command = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as work:
        new_path = os.path.join(work, "new.json")
        run = subprocess.run(command + ["--json", new_path], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL: exit {run.returncode}\n{run.stdout}{run.stderr}")
            return 1
        with open(new_path) as f:
            new = json.load(f)
    with open(golden_path) as f:
        golden = json.load(f)
    # What ran (fused kernels, optimizer paths) depends on the LibTorch: compare within one.
    def libtorch(doc):  # training and micro records: "device"; inference: "fingerprint"
        found = [v for v in (doc.get("fingerprint"), doc.get("device")) if isinstance(v, dict)]
        return found[0].get("libtorch_version") if found else None
    versions = [libtorch(d) for d in (golden, new)]
    if versions[0] != versions[1]:
        print(f"SKIPPED: the golden record is from LibTorch {versions[0]}, this build has "
              f"{versions[1]}")
        return 77
    problems = []
    diff(mask(golden), mask(new), "$", problems)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
