#!/usr/bin/env bash
# Device call: the column sums with 32 partial rows a block, the cross-entropy's forward pass one
# rescale per pack (hardware exp for 16-bit logits), weight gradients in float32 from the GEMM:
# the fp64 tests, the GPT-2 step's profile, GPT-2 124M side by side with torch.compile (2
# repeats), the Llama-style 1B and GPT-2 774M side by side (1 repeat each).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
start=$(date +%s)
left() { echo $(( ${DEADLINE:-585} - ($(date +%s) - start) )); }
cap() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark test_transformer; } >"$OUT/logs/build.log" 2>&1 ||
  { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -100; finish; exit 1; }
echo "built after $(( $(date +%s) - start )) s"
timeout "$(cap 90)" ./build-gpu/tests/test_transformer "[gpu]" >"$OUT/logs/test_transformer_gpu.txt" 2>&1
echo "gpu cases rc=$?"; grep -E -B3 -A12 "FAILED|failed" "$OUT/logs/test_transformer_gpu.txt" | head -60
tail -3 "$OUT/logs/test_transformer_gpu.txt"
echo "== graph profile (gpt2)"
timeout "$(cap 60)" ./build-gpu/examples/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 --warmup 5 \
  --steps-per-window 10 --windows 1 --quiet --json '' \
  --kernel-trace "$OUT/logs/gpuperf_trace.json" >"$OUT/logs/profile_run.txt" 2>&1
python3 benchmarks/python/profile_step.py --trace "$OUT/logs/gpuperf_trace.json" --steps 10 \
  --batch-size 16 --top 30 >"$OUT/logs/gpuperf_profile.txt" 2>&1
rm -f "$OUT/logs/gpuperf_trace.json"
head -26 "$OUT/logs/gpuperf_profile.txt"
echo "== gpt2 side by side ($(left) s left)"
LM_PEER_VARIANTS="compile" timeout "$(cap 250)" \
  benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 2 gpt2 >"$OUT/logs/lm.txt" 2>&1
echo "side-by-side rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
echo "== llama-1b side by side ($(left) s left)"
LM_PEER_VARIANTS="compile" timeout "$(cap 200)" \
  benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-llama" 1 llama-1b >"$OUT/logs/lm-llama.txt" 2>&1
echo "side-by-side rc=$?"; cat "$OUT/logs/lm-llama/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-llama.txt"
echo "== gpt2-large side by side ($(left) s left)"
if [ "$(left)" -gt 70 ]; then
  LM_PEER_VARIANTS="compile" timeout "$(cap 150)" \
    benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-large" 1 gpt2-large >"$OUT/logs/lm-large.txt" 2>&1
  echo "side-by-side rc=$?"; cat "$OUT/logs/lm-large/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-large.txt"
fi
finish
