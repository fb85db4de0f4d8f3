#!/usr/bin/env bash
# The seed benchmark on the CPU (bf16 autocast, Adam) against the same loop in Debian's
# python3-torch (the same LibTorch 1.13 underneath), alternating, several repeats each.
# Usage: benchmarks/cpu_side_by_side.sh <gpuperf build dir> <output dir> [repeats] [batch size]
# Needs: apt-get install python3-torch (run with Debian's /usr/bin/python3).
set -euo pipefail
build=$1
out=$2
repeats=${3:-5}
batch=${4:-64}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: >"$out/peer.jsonl"
args=(--device cpu --model simple --batch-size "$batch" --precision bf16 --optimizer adam --lr 1e-3
      --warmup 3 --steps-per-window 5 --windows 6)
for r in $(seq 1 "$repeats"); do
  "$build/apps/seed_benchmark" "${args[@]}" --quiet --json "$out/seed-cpu-gpuperf-$r.json" >"$out/seed-cpu-gpuperf-$r.txt"
  /usr/bin/python3 "$here/python/train_peer.py" "${args[@]}" | sed 's/^{/{"label": "seed-cpu", /' >>"$out/peer.jsonl"
done
python3 "$here/python/summarize_side_by_side.py" "$out"
