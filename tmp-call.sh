#!/usr/bin/env bash
# Device call (one H200): build lm_benchmark and test_transformer, the GPU tests of the
# transformer (the fused residual add + LayerNorm among them), a kernel-trace profile of
# gpuperf's GPT-2 124M step, then GPT-2 124M side by side with torch.compile (2 repeats).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark test_transformer; } >"$OUT/logs/build.log" 2>&1 ||
  { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; finish; exit 1; }
echo "== tests"
(cd build-gpu && timeout 120 ctest -R "test_transformer" --output-on-failure) >"$OUT/logs/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "tests passed|Failed|FAILED|SKIPPED|Passed" "$OUT/logs/tests.txt" | head -20
timeout 120 ./build-gpu/tests/test_transformer "[gpu]" >"$OUT/logs/test_transformer_gpu.txt" 2>&1
echo "gpu cases rc=$?"; tail -4 "$OUT/logs/test_transformer_gpu.txt"
echo "== profile"
timeout 90 ./build-gpu/examples/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 --warmup 5 \
  --steps-per-window 10 --windows 1 --quiet --json '' \
  --kernel-trace "$OUT/logs/gpuperf_trace.json" >"$OUT/logs/profile_run.txt" 2>&1
python3 benchmarks/python/profile_step.py --trace "$OUT/logs/gpuperf_trace.json" --steps 10 \
  --batch-size 16 --top 30 >"$OUT/logs/gpuperf_profile.txt" 2>&1
rm -f "$OUT/logs/gpuperf_trace.json"
head -40 "$OUT/logs/gpuperf_profile.txt"
echo "== gpt2 side by side"
LM_PEER_VARIANTS="compile" GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown} timeout 270 \
  benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 2 gpt2 >"$OUT/logs/lm.txt" 2>&1
echo "side-by-side rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
echo "== gpuperf alone: gpt2-large (8 x 1024), llama-1b (4 x 2048)"
for row in "gpt2-large 8 1024" "llama-1b 4 2048"; do
  set -- $row
  timeout 60 ./build-gpu/examples/lm_benchmark --model $1 --batch-size $2 --seq-len $3 --lr 6e-4 \
    --beta2 0.95 --weight-decay 0.1 --warmup 10 --steps-per-window 10 --windows 5 --quiet \
    --json "$OUT/logs/$1-gpuperf.json" >"$OUT/logs/$1-gpuperf.txt" 2>&1
  echo "$1 rc=$?"; tail -3 "$OUT/logs/$1-gpuperf.txt"
done
finish
