#!/usr/bin/env bash
# Device call: which operator launches gpuperf's 48 strided float adds per GPT-2 step (an eager
# step's kernel trace with input shapes), and the step's profile and rate after the fused norm
# kernels' backward occupancy change; GPT-2 124M side by side with torch.compile (1 repeat).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark test_transformer; } >"$OUT/logs/build.log" 2>&1 ||
  { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; finish; exit 1; }
timeout 120 ./build-gpu/tests/test_transformer "[gpu]" >"$OUT/logs/test_transformer_gpu.txt" 2>&1
echo "gpu cases rc=$?"; tail -3 "$OUT/logs/test_transformer_gpu.txt"
common=(--model gpt2 --batch-size 16 --seq-len 1024 --warmup 3 --steps-per-window 2 --windows 1 --quiet --json '')
echo "== eager trace: the strided adds"
timeout 90 ./build-gpu/examples/lm_benchmark "${common[@]}" --graph off \
  --kernel-trace "$OUT/logs/eager_trace.json" >"$OUT/logs/eager_run.txt" 2>&1
python3 benchmarks/python/trace_ops.py "$OUT/logs/eager_trace.json" "elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add" | head -20
python3 benchmarks/python/profile_step.py --trace "$OUT/logs/eager_trace.json" --steps 2 --batch-size 16 --top 12 | head -20
gzip "$OUT/logs/eager_trace.json"
echo "== graph profile"
timeout 90 ./build-gpu/examples/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 --warmup 5 \
  --steps-per-window 10 --windows 1 --quiet --json '' \
  --kernel-trace "$OUT/logs/gpuperf_trace.json" >"$OUT/logs/profile_run.txt" 2>&1
python3 benchmarks/python/profile_step.py --trace "$OUT/logs/gpuperf_trace.json" --steps 10 \
  --batch-size 16 --top 30 >"$OUT/logs/gpuperf_profile.txt" 2>&1
rm -f "$OUT/logs/gpuperf_trace.json"
head -24 "$OUT/logs/gpuperf_profile.txt"
echo "== gpt2 side by side"
LM_PEER_VARIANTS="compile" GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown} timeout 200 \
  benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 1 gpt2 >"$OUT/logs/lm.txt" 2>&1
echo "side-by-side rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
finish
