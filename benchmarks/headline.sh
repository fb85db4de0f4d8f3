#!/usr/bin/env bash
# The headline table in one command: gpuperf against every PyTorch variant of the same workload
# (eager, manual CUDA graph, torch.compile default and reduce-overhead; for the seed model also
# its hand rewrite, eager-graphed and compiled), alternating within each repeat, then the medians
# over repeats, their spread and the ratios, as Markdown and JSON
# (benchmarks/python/headline.py writes <out>/headline.md and <out>/headline.json). A training
# run must prove it trained (a finite final loss below its first): headline.py marks any other
# INVALID, leaves it out of the medians and exits 1 when a whole variant is INVALID.
#
# Usage: benchmarks/headline.sh <gpuperf build dir> <output dir> [repeats] [sections]
#   sections: any of train-resnet50 train-seed infer-resnet50 (default: all three)
#   INFER_PEER_MODES: the PyTorch inference variants (default: eager graph compile-graph
#   compile-freeze-graph; add compile-max-autotune where its compile, minutes per batch size,
#   fits the time)
# The sections can run in separate calls into separate folders; headline.py merges folders:
#   python3 benchmarks/python/headline.py <folder> [<folder> ...]
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
sections=${4:-"train-resnet50 train-seed infer-resnet50"}
here=$(cd "$(dirname "$0")" && pwd)
for s in $sections; do
  case $s in
    train-resnet50 | train-seed | infer-resnet50) ;;
    *) echo "headline.sh: unknown section '$s' (train-resnet50, train-seed, infer-resnet50)" >&2; exit 2 ;;
  esac
done
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "headline.sh: repeats must be >= 1, got '$repeats'" >&2; exit 2; }
for program in resnet50_benchmark seed_benchmark inference_benchmark; do
  [[ -x $build/apps/$program ]] || { echo "headline.sh: $build/apps/$program not built" >&2; exit 2; }
done
mkdir -p "$out"
# A failed run stops the table (no partial table presented as complete) and says where to look.
trap 'echo "headline.sh: a run failed (line $LINENO, exit $?); the peers'"'"' errors are in $out/peer.err" >&2' ERR
# What ran, for the table's header: GPUPERF_COMMIT names the tree where git cannot (a copy of
# the working tree whose .git is not the one it came from).
commit=${GPUPERF_COMMIT:-$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)}
printf '{"commit": "%s", "started_utc": "%s", "sections": "%s", "repeats": %s}\n' \
  "$commit" "$(date -u +%Y-%m-%dT%H:%MZ)" "$sections" "$repeats" >"$out/run.json"
peer_log=$out/peer.jsonl
touch "$peer_log"

resnet=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last
        --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 8)
seed=(--model simple --batch-size 256 --precision bf16 --optimizer adam --lr 1e-3)
infer=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8,256
       --warmup 20 --iterations 200 --cudnn-benchmark-from 128)

# peer <section> <variant> <repeat> <script> <args...>: one PyTorch run, its JSON line tagged.
peer() {
  local section=$1 variant=$2 repeat=$3 script=$4
  shift 4
  python3 "$here/python/$script" "$@" 2>>"$out/peer.err" |
    sed "s/^{/{\"section\": \"$section\", \"variant\": \"$variant\", \"repeat\": $repeat, /" >>"$peer_log"
}

progress() { echo "headline: repeat $1/$repeats, $2 done at ${SECONDS}s" >&2; }

for r in $(seq 1 "$repeats"); do
  if [[ " $sections " == *" train-resnet50 "* ]]; then
    "$build/apps/resnet50_benchmark" "${resnet[@]}" --quiet --json "$out/train-resnet50-gpuperf-$r.json" >/dev/null
    peer train-resnet50 eager "$r" train_peer.py "${resnet[@]}"
    peer train-resnet50 compile "$r" train_peer.py "${resnet[@]}" --compile default --fused on
    peer train-resnet50 compile-reduce-overhead "$r" train_peer.py "${resnet[@]}" --compile reduce-overhead --fused on
    progress "$r" train-resnet50
  fi
  if [[ " $sections " == *" train-seed "* ]]; then
    "$build/apps/seed_benchmark" "${seed[@]}" --quiet --json "$out/train-seed-gpuperf-$r.json" >/dev/null
    peer train-seed eager "$r" train_peer.py "${seed[@]}"
    peer train-seed graph "$r" train_peer.py "${seed[@]}" --fused on --graph on
    peer train-seed compile "$r" train_peer.py "${seed[@]}" --compile default --fused on
    peer train-seed compile-reduce-overhead "$r" train_peer.py "${seed[@]}" --compile reduce-overhead --fused on
    # The rewrite gpuperf's seed model runs inside (channels_last, fc on the (H, W, C) flatten),
    # by hand: with fused capturable Adam and the whole step in a CUDA graph, and compiled.
    peer train-seed hand-tuned "$r" train_peer.py "${seed[@]}" --rewrite on --fused on --graph on
    peer train-seed compile-rewrite "$r" train_peer.py "${seed[@]}" --rewrite on --compile reduce-overhead --fused on
    progress "$r" train-seed
  fi
  if [[ " $sections " == *" infer-resnet50 "* ]]; then
    "$build/apps/inference_benchmark" "${infer[@]}" --quiet --json "$out/infer-resnet50-gpuperf-$r.json" >/dev/null
    for mode in ${INFER_PEER_MODES:-eager graph compile-graph compile-freeze-graph}; do
      peer infer-resnet50 "$mode" "$r" infer_peer.py "${infer[@]}" --mode "$mode"
    done
    progress "$r" infer-resnet50
  fi
done
# headline.py writes the table, and exits 1 when every run of a variant is INVALID (it says which
# on stderr): that exit is the script's, without the failed-run message.
trap - ERR
python3 "$here/python/headline.py" "$out"
