#!/usr/bin/env bash
# Runs gpuperf's microbench and the PyTorch peer (benchmarks/python/micro_peer.py) with the same
# sizes, dtypes and timing settings, alternating, several repeats each, and prints the ratio of
# medians per measurement (median over repeats of each run's median over windows).
# Usage: benchmarks/micro_side_by_side.sh <gpuperf build dir> <output dir> [repeats]
# Environment, passed to both sides (unset: the square 8192 GEMM and every dtype, as before):
#   GEMM_SHAPE=MxNxK   the GEMM shape instead of --gemm-size 8192, e.g. GEMM_SHAPE=16384x16384x4096
#                      (--gemm-shape; C[M,N] = A[M,K] * B[K,N])
#   DTYPES=a,b         GEMM data types, e.g. DTYPES=int8,fp8,bf16 (--dtypes; default all)
# e.g. GEMM_SHAPE=16384x16384x4096 DTYPES=int8,bf16 benchmarks/micro_side_by_side.sh build-gpu out 3
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: >"$out/peer.jsonl"

# Shared settings: the defaults of both programs on a GPU, spelled out so that both sides agree.
# microbench refuses --gemm-size together with --gemm-shape, so a shape replaces the size.
if [[ -n ${GEMM_SHAPE:-} ]]; then
  gemm=(--gemm-shape "$GEMM_SHAPE")
else
  gemm=(--gemm-size 8192)
fi
shared=("${gemm[@]}" --memory-size-mib 1024 --host-size-mib 256 --warmup 3
        --calls-per-window 10 --windows 5)
if [[ -n ${DTYPES:-} ]]; then
  shared+=(--dtypes "$DTYPES")
fi
for r in $(seq 1 "$repeats"); do
  "$build/apps/microbench" --device cuda "${shared[@]}" --quiet \
    --json "$out/gpuperf-$r.json" --markdown "$out/gpuperf-$r.md" >/dev/null
  python3 "$here/python/micro_peer.py" --device cuda "${shared[@]}" 2>"$out/peer-$r.err" \
    | sed "s/^{/{\"repeat\": $r, /" >>"$out/peer.jsonl"
done
python3 "$here/python/summarize_micro.py" "$out"
