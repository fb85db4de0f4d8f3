#!/usr/bin/env bash
# Compares gpu_info --json with nvidia-smi, field by field, on every GPU; then checks that the
# sampler's counter energy agrees with mean power x time. Exits non-zero on any mismatch.
#
#   benchmarks/telemetry_check.sh BUILD_DIR        (BUILD_DIR holds apps/gpu_info)
#
# Static fields (name, memory total, power limit, max SM clock, driver) must match exactly, up to
# nvidia-smi's rounding. Fluctuating fields are read between two nvidia-smi calls and must lie
# within a tolerance of the range those two readings span.
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR}
gpu_info="$build/apps/gpu_info"
if [[ ! -x $gpu_info ]]; then
  echo "telemetry_check: no $gpu_info (build the gpu_info target first)" >&2
  exit 2
fi
if ! command -v nvidia-smi > /dev/null; then
  echo "telemetry_check: nvidia-smi not found" >&2
  exit 2
fi

fields=name,memory.used,memory.total,utilization.gpu,utilization.memory,temperature.gpu
fields+=,power.draw,power.limit,clocks.sm,clocks.max.sm,pcie.link.gen.current
fields+=,pcie.link.width.current,driver_version
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

nvidia-smi --query-gpu="$fields" --format=csv,noheader,nounits > "$work/before.csv"
"$gpu_info" --json --no-processes > "$work/gpu_info.json"
nvidia-smi --query-gpu="$fields" --format=csv,noheader,nounits > "$work/after.csv"
"$gpu_info" --sample 5 --json > "$work/sample.json"

python3 - "$work" "$fields" <<'PYTHON'
import csv, json, math, sys

work, fields = sys.argv[1], sys.argv[2].split(",")
MIB = 1024 * 1024


def read_smi(path):
    rows = []
    with open(path) as f:
        for row in csv.reader(f, skipinitialspace=True):
            if row:
                rows.append(dict(zip(fields, (v.strip() for v in row))))
    return rows


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None  # "[N/A]", "[Not Supported]"


before, after = read_smi(f"{work}/before.csv"), read_smi(f"{work}/after.csv")
with open(f"{work}/gpu_info.json") as f:
    info = json.load(f)
if not info.get("available", False):
    print("gpu_info says telemetry unavailable:", info.get("unavailable_reason"))
    sys.exit(1)
devices = info["devices"]
failures = 0
if not (len(devices) == len(before) == len(after)):
    print(f"GPU count differs: gpu_info {len(devices)}, nvidia-smi {len(before)}/{len(after)}")
    sys.exit(1)


def ours(d, field):
    """gpu_info's value in nvidia-smi's unit (MiB, W, MHz, %, C)."""
    def get(key):
        return d.get(key)
    mapping = {
        "name": lambda: get("name"),
        "memory.used": lambda: None if get("memory_used_bytes") is None
        else math.floor(get("memory_used_bytes") / MIB),
        "memory.total": lambda: None if get("memory_total_bytes") is None
        else math.floor(get("memory_total_bytes") / MIB),
        "utilization.gpu": lambda: get("utilization_gpu_percent"),
        "utilization.memory": lambda: get("utilization_memory_percent"),
        "temperature.gpu": lambda: get("temperature_celsius"),
        "power.draw": lambda: get("power_draw_watts"),
        "power.limit": lambda: get("power_limit_watts"),
        "clocks.sm": lambda: get("sm_clock_mhz"),
        "clocks.max.sm": lambda: get("sm_clock_max_mhz"),
        "pcie.link.gen.current": lambda: get("pcie_link_generation"),
        "pcie.link.width.current": lambda: get("pcie_link_width"),
        "driver_version": lambda: info.get("driver_version"),
    }
    return mapping[field]()


# field -> (kind, tolerance): "exact" strings; "static" numbers within an absolute tolerance;
# "range" numbers within max(abs, rel * value) of the [before, after] range; "either" must equal
# the before or the after reading (PCIe links retrain when idle).
RULES = {
    "name": ("exact", None),
    "driver_version": ("exact", None),
    "memory.total": ("static", (1.0, 0.0)),  # MiB: nvidia-smi may round where we floor
    "power.limit": ("static", (0.5, 0.0)),
    "clocks.max.sm": ("static", (0.5, 0.0)),
    "memory.used": ("range", (16.0, 0.01)),
    "utilization.gpu": ("range", (10.0, 0.0)),
    "utilization.memory": ("range", (10.0, 0.0)),
    "temperature.gpu": ("range", (3.0, 0.0)),
    "power.draw": ("range", (15.0, 0.10)),
    "clocks.sm": ("range", (100.0, 0.10)),
    "pcie.link.gen.current": ("either", None),
    "pcie.link.width.current": ("either", None),
}

print(f"{'gpu':>3}  {'field':<24} {'nvidia-smi (before / after)':<34} {'gpu_info':<22} verdict")
for i, d in enumerate(devices):
    for field in fields:
        kind, tolerance = RULES[field]
        smi_b, smi_a, mine = before[i][field], after[i][field], ours(d, field)
        if kind == "exact":
            ok = mine is not None and str(mine) == smi_b and smi_b == smi_a
            shown = f"{smi_b} / {smi_a}"
        else:
            b, a = number(smi_b), number(smi_a)
            shown = f"{smi_b} / {smi_a}"
            if b is None and a is None:
                ok = mine is None  # both say "not available"
            elif mine is None or b is None or a is None:
                ok = False
            elif kind == "static":
                ok = abs(mine - b) <= tolerance[0] and b == a
            elif kind == "either":
                ok = mine in (b, a)
            else:
                low, high = min(b, a), max(b, a)
                slack = max(tolerance[0], tolerance[1] * high)
                ok = low - slack <= mine <= high + slack
        verdict = "ok" if ok else "MISMATCH"
        if not ok:
            failures += 1
            if field == "memory.used" and d.get("memory_reserved_bytes") is not None and mine:
                verdict += f" (used + reserved = {mine + d['memory_reserved_bytes'] / MIB:.0f} MiB)"
        mine_text = f"{mine:.2f}" if isinstance(mine, float) else str(mine)
        print(f"{i:>3}  {field:<24} {shown:<34} {mine_text:<22} {verdict}")

# The sampler: counter energy against mean power x duration (power readings are ~1 s averages,
# the counter is exact; on a steady GPU they agree within a few percent).
with open(f"{work}/sample.json") as f:
    summaries = json.load(f)["summaries"]
print()
print(f"{'gpu':>3}  {'samples':>7} {'seconds':>8} {'mean W':>8} {'energy J':>10} {'P x t J':>10}"
      f" {'diff':>7}  source / warnings")
for s in summaries:
    energy, mean, seconds = s["energy_joules"], s["power_mean_watts"], s["duration_seconds"]
    if energy is None or mean is None or seconds is None:
        print(f"{s['index']:>3}  energy or power not available: {s}")
        failures += 1
        continue
    product = mean * seconds
    diff = (energy - product) / product if product else math.inf
    ok = s["energy_source"] == "energy counter" and abs(diff) <= 0.05
    failures += 0 if ok else 1
    print(f"{s['index']:>3}  {s['sample_count']:>7} {seconds:>8.3f} {mean:>8.1f} {energy:>10.2f}"
          f" {product:>10.2f} {diff:>+7.1%}  {s['energy_source']}; {s['warnings']}"
          f"{'' if ok else '  MISMATCH'}")

print()
print("telemetry_check:", "PASS" if failures == 0 else f"FAIL ({failures} mismatches)")
sys.exit(0 if failures == 0 else 1)
PYTHON
