#!/usr/bin/env bash
# Runs gpuperf's training examples and the PyTorch peer (benchmarks/python/train_peer.py) with
# the same settings, alternating, several repeats each, and prints the ratio of medians.
# Usage: benchmarks/side_by_side.sh <gpuperf build dir> <output dir> [repeats]
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: >"$out/peer.jsonl"

run_pair() {  # <label> <gpuperf program> <shared args...>
  local label=$1 program=$2
  shift 2
  for r in $(seq 1 "$repeats"); do
    "$build/examples/$program" "$@" --quiet --json "$out/$label-gpuperf-$r.json" >"$out/$label-gpuperf-$r.txt"
    python3 "$here/python/train_peer.py" "$@" | sed "s/^{/{\"label\": \"$label\", /" >>"$out/peer.jsonl"
  done
}

run_pair seed seed_benchmark --model simple --batch-size 256 --precision fp16 --optimizer adam --lr 1e-3
run_pair resnet50 resnet50_benchmark --model resnet50 --batch-size 256 --precision fp16 \
  --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 8
python3 "$here/python/summarize_side_by_side.py" "$out"
