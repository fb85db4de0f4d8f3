#!/usr/bin/env bash
# Runs gpuperf's microbench and the PyTorch peer (benchmarks/python/micro_peer.py) with the same
# sizes, dtypes and timing settings, alternating, several repeats each, and prints the ratio of
# medians per measurement (median over repeats of each run's median over windows).
# Usage: benchmarks/micro_side_by_side.sh <gpuperf build dir> <output dir> [repeats]
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: >"$out/peer.jsonl"

# Shared settings: the defaults of both programs on a GPU, spelled out so that both sides agree.
shared=(--gemm-size 8192 --memory-size-mib 1024 --host-size-mib 256 --warmup 3
        --calls-per-window 10 --windows 5)
for r in $(seq 1 "$repeats"); do
  "$build/examples/microbench" --device cuda "${shared[@]}" --quiet \
    --json "$out/gpuperf-$r.json" --markdown "$out/gpuperf-$r.md" >/dev/null
  python3 "$here/python/micro_peer.py" --device cuda "${shared[@]}" 2>"$out/peer-$r.err" \
    | sed "s/^{/{\"repeat\": $r, /" >>"$out/peer.jsonl"
done
python3 "$here/python/summarize_micro.py" "$out"
