#!/usr/bin/env bash
# Device call 3 (one H200): the headline rows for GPT-2 124M with the fused cross-entropy:
# gpuperf vs PyTorch eager, manual CUDA graph, torch.compile and (first repeat) max-autotune,
# 3 alternating repeats; then the final loss of both sides from three seeds (60 steps at lr 6e-4).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark; } >"$OUT/logs/build.log" 2>&1 ||
  { tail -40 "$OUT/logs/build.log"; tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
echo "== gpt2 side by side"
GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown} timeout 400 benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 3 gpt2 \
  >"$OUT/logs/lm.txt" 2>&1
echo "side-by-side rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
echo "== final loss by seed (gpuperf | pytorch eager)"
for seed in 1 2; do
  ./build-gpu/examples/lm_benchmark --quiet --json '' --seed $seed 2>&1 | grep -o "final loss [0-9.]*" | tr '\n' ' '
  python3 benchmarks/python/lm_peer.py --seed $seed 2>/dev/null | python3 -c "import json,sys; print('| peer', json.load(sys.stdin)['final_loss'])"
done
tar czf "$OUT/logs.tgz" -C "$OUT" logs
rm -rf "$OUT/logs"
