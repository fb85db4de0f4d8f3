#!/usr/bin/env bash
# Telemetry overhead: the seed benchmark with the NVML sampler on and off, alternating, several
# repeats each; prints the ratio of median throughputs (target: within 1%).
# Usage: benchmarks/telemetry_overhead.sh <gpuperf build dir> <output dir> [repeats]
set -euo pipefail
build=$1
out=$2
repeats=${3:-5}
mkdir -p "$out"
for r in $(seq 1 "$repeats"); do
  for mode in telemetry no-telemetry; do
    "$build/apps/seed_benchmark" "--$mode" --windows 40 --quiet --json "$out/overhead-$mode-$r.json" >/dev/null
  done
done
python3 - "$out" "$repeats" <<'PY'
import json, statistics, sys
out, repeats = sys.argv[1], int(sys.argv[2])
def medians(mode):
    return [json.load(open(f"{out}/overhead-{mode}-{r}.json"))["throughput"]["median"] for r in range(1, repeats + 1)]
on, off = medians("telemetry"), medians("no-telemetry")
print(f"sampler on : median {statistics.median(on):,.0f} samples/s over {repeats} runs ({min(on):,.0f}-{max(on):,.0f})")
print(f"sampler off: median {statistics.median(off):,.0f} samples/s over {repeats} runs ({min(off):,.0f}-{max(off):,.0f})")
print(f"on/off ratio of medians: {statistics.median(on) / statistics.median(off):.4f}")
PY
