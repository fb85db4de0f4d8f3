#!/usr/bin/env bash
# Runs gpuperf's inference_benchmark (its default: CUDA graph with BatchNorm folded and fused
# convolution epilogues; a CUDA graph of the unfused model; eager and unfused, the same kernels as
# PyTorch eager) and the PyTorch peer (benchmarks/python/infer_peer.py, eager and CUDA graph) with
# the same model, precision, batch sizes and timing settings, alternating, several repeats each,
# then prints per batch size the median over repeats of each side's p50 latency and throughput,
# the ratios, and #6's targets.
# Usage: benchmarks/inference_side_by_side.sh <gpuperf build dir> <output dir> [repeats] [batches]
#   GPUPERF_MODES="default graph" runs a subset of gpuperf's modes (default: default graph eager),
#   PEER_MODES a subset of PyTorch's (default: eager graph frozen-graph)
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
batches=${4:-1,8,64,256,512}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: >"$out/peer.jsonl"

shared=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes "$batches"
        --warmup 20 --iterations 200)
for r in $(seq 1 "$repeats"); do
  for mode in ${GPUPERF_MODES:-default graph eager}; do
    case $mode in
      default) ours=() ;;
      graph) ours=(--fuse off) ;;
      eager) ours=(--graph off --fuse off) ;;
    esac
    "$build/apps/inference_benchmark" "${shared[@]}" "${ours[@]}" --quiet \
      --json "$out/gpuperf-$mode-$r.json" >"$out/gpuperf-$mode-$r.txt"
  done
  for mode in ${PEER_MODES:-eager graph frozen-graph}; do
    python3 "$here/python/infer_peer.py" "${shared[@]}" --mode "$mode" 2>>"$out/peer.err" \
      | sed "s/^{/{\"repeat\": $r, /" >>"$out/peer.jsonl"
  done
done
python3 "$here/python/summarize_inference.py" "$out"
