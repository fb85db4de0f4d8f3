#!/usr/bin/env bash
# Runs gpuperf's training programs and the PyTorch peer (benchmarks/python/train_peer.py) on the
# same workloads, alternating, several repeats each, and prints the ratio of medians.
# Usage: benchmarks/side_by_side.sh <gpuperf build dir> <output dir> [repeats] [rows]
#   rows: space-separated subset of the row names below (default: all)
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
rows=${4:-"seed-fp16-default seed-fp16-nofuse seed-fp16-eager seed-bf16-graph seed-bf16-graph-nofuse seed-bf16-graph-cl resnet50-fp16-default resnet50-fp16-nofuse resnet50-fp16-eager seed-fp16-compile seed-fp16-compile-ro seed-bf16-compile seed-bf16-compile-ro resnet50-fp16-compile resnet50-fp16-compile-ro"}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
touch "$out/peer.jsonl"

seed=(--model simple --batch-size 256 --optimizer adam --lr 1e-3)
resnet=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last
        --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 8)

# run_row <label> <gpuperf program> <gpuperf-only args> <peer-only args> <shared args...>
run_row() {
  local label=$1 program=$2 ours=$3 theirs=$4
  shift 4
  [[ " $rows " == *" $label "* ]] || return 0
  for r in $(seq 1 "$repeats"); do
    # shellcheck disable=SC2086  # the per-side argument strings are word lists
    "$build/apps/$program" "$@" $ours --quiet --json "$out/$label-gpuperf-$r.json" >"$out/$label-gpuperf-$r.txt"
    # shellcheck disable=SC2086
    python3 "$here/python/train_peer.py" "$@" $theirs 2>/dev/null | sed "s/^{/{\"label\": \"$label\", /" >>"$out/peer.jsonl"
  done
}

# peer_row <label> <peer-only args> <shared args...>: a PyTorch variant with no gpuperf row of
# its own (torch.compile), for the summary's best-variant comparison.
peer_row() {
  local label=$1 theirs=$2
  shift 2
  [[ " $rows " == *" $label "* ]] || return 0
  for r in $(seq 1 "$repeats"); do
    # shellcheck disable=SC2086
    python3 "$here/python/train_peer.py" "$@" $theirs 2>/dev/null | sed "s/^{/{\"label\": \"$label\", /" >>"$out/peer.jsonl"
  done
}

# gpuperf's defaults (fused optimizer, whole step in a CUDA graph, conv+bias+ReLU fused) against
# the seed loop timed properly (PyTorch eager, foreach Adam); the same without the conv fusion;
# then both eager with the same kernels (unfused optimizers, no fusion); then both at their best
# in bf16 (PyTorch: fused capturable Adam in a CUDA graph), with and without gpuperf's conv
# fusion, also both channels_last.
run_row seed-fp16-default seed_benchmark "" "" "${seed[@]}" --precision fp16
run_row seed-fp16-nofuse seed_benchmark "--fuse off" "" "${seed[@]}" --precision fp16
run_row seed-fp16-eager seed_benchmark "--graph off --fused off --fuse off" "" "${seed[@]}" \
  --precision fp16
run_row seed-bf16-graph seed_benchmark "" "--fused on --graph on" "${seed[@]}" --precision bf16
run_row seed-bf16-graph-nofuse seed_benchmark "--fuse off" "--fused on --graph on" "${seed[@]}" \
  --precision bf16
run_row seed-bf16-graph-cl seed_benchmark "" "--fused on --graph on" "${seed[@]}" --precision bf16 \
  --memory-format channels_last
# ResNet-50: gpuperf's default (fused SGD, CUDA graph, BatchNorm+add+ReLU in one cuDNN call)
# against PyTorch eager with the same settings; the same without the fusion; both eager with the
# same kernels.
run_row resnet50-fp16-default resnet50_benchmark "" "" "${resnet[@]}"
run_row resnet50-fp16-nofuse resnet50_benchmark "--fuse off" "" "${resnet[@]}"
run_row resnet50-fp16-eager resnet50_benchmark "--graph off --fused off --fuse off" "" "${resnet[@]}"
# torch.compile, PyTorch's own speed path (PyTorch >= 2.0; the compile time is in compile_s):
# default and reduce-overhead (its CUDA-graph mode) for the seed in both precisions and ResNet-50.
peer_row seed-fp16-compile "--compile default --fused on" "${seed[@]}" --precision fp16
peer_row seed-fp16-compile-ro "--compile reduce-overhead --fused on" "${seed[@]}" --precision fp16
peer_row seed-bf16-compile "--compile default --fused on" "${seed[@]}" --precision bf16
peer_row seed-bf16-compile-ro "--compile reduce-overhead --fused on" "${seed[@]}" --precision bf16
peer_row resnet50-fp16-compile "--compile default --fused on" "${resnet[@]}"
peer_row resnet50-fp16-compile-ro "--compile reduce-overhead --fused on" "${resnet[@]}"
python3 "$here/python/summarize_side_by_side.py" "$out"
