#!/usr/bin/env bash
# Device call: GPT-2 124M and GPT-2 774M side by side with the best PyTorch variants after
# gpuperf's linear layers run as nn.Linear does (at::linear: the bias in the GEMM's epilogue);
# the GPU tests of the transformer; a profile of the captured step; Llama 1B alone.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark test_transformer; } >"$OUT/logs/build.log" 2>&1 ||
  { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; finish; exit 1; }
timeout 60 ./build-gpu/tests/test_transformer "[gpu]" >"$OUT/logs/test_transformer_gpu.txt" 2>&1
echo "gpu cases rc=$?"; tail -3 "$OUT/logs/test_transformer_gpu.txt"
echo "== gpt2 side by side"
LM_PEER_VARIANTS="compile" GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown} timeout 240 \
  benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 2 gpt2 >"$OUT/logs/lm.txt" 2>&1
echo "side-by-side rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
echo "== gpt2-large side by side"
LM_PEER_VARIANTS="compile" GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown} timeout 150 \
  benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-large" 1 gpt2-large >"$OUT/logs/lm-large.txt" 2>&1
echo "side-by-side rc=$?"; cat "$OUT/logs/lm-large/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-large.txt"
echo "== llama-1b alone"
timeout 45 ./build-gpu/examples/lm_benchmark --model llama-1b --batch-size 4 --seq-len 2048 --lr 6e-4 \
  --beta2 0.95 --weight-decay 0.1 --warmup 10 --steps-per-window 10 --windows 5 --quiet \
  --json "$OUT/logs/llama-1b-gpuperf.json" >"$OUT/logs/llama-1b-gpuperf.txt" 2>&1
echo "llama rc=$?"
finish
