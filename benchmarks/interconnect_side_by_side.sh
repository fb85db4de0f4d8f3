#!/usr/bin/env bash
# Runs gpuperf's interconnect benchmarks (microbench --interconnect) and the PyTorch peer
# (benchmarks/python/interconnect_peer.py) with the same sizes and timing settings, alternating,
# several repeats each, and prints the ratio of medians per measurement (median over repeats of
# each run's median over windows) beside the link's datasheet figure. Needs 2 or more GPUs.
# Usage: benchmarks/interconnect_side_by_side.sh <gpuperf build dir> <output dir> [repeats]
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: >"$out/peer.jsonl"
# NVLink SHARP (NVLS) stays off, as on the machines these figures are compared across.
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}

# Shared settings, spelled out so that both sides agree (microbench's defaults on a GPU).
shared=(--collective-sizes 1M..1G --p2p-size-mib 256 --warmup 3 --calls-per-window 10
        --windows 5)
for r in $(seq 1 "$repeats"); do
  "$build/apps/microbench" --device cuda --no-gemm --no-memory --interconnect "${shared[@]}" \
    --quiet --json "$out/gpuperf-$r.json" --markdown "$out/gpuperf-$r.md" >/dev/null
  python3 "$here/python/interconnect_peer.py" "${shared[@]}" 2>"$out/peer-$r.err" \
    | sed "s/^{/{\"repeat\": $r, /" >>"$out/peer.jsonl"
done
python3 "$here/python/summarize_interconnect.py" "$out"
