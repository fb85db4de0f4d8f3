#!/usr/bin/env bash
# Device call 1 (one H200): build, the language-model tests, gpuperf vs PyTorch on GPT-2 124M
# (eager, manual CUDA graph, torch.compile default; 3 alternating repeats), and one profiled
# step window of each side. Run from the repository root with $OUT set.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark test_transformer test_amp; } >"$OUT/logs/build.log" 2>&1 ||
  { tail -40 "$OUT/logs/build.log"; tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
echo "== tests"
./build-gpu/tests/test_transformer >"$OUT/logs/test_transformer.txt" 2>&1; echo "test_transformer rc=$?"
tail -3 "$OUT/logs/test_transformer.txt"
./build-gpu/tests/test_amp "*fused*" >"$OUT/logs/test_amp.txt" 2>&1; echo "test_amp fused rc=$?"
tail -2 "$OUT/logs/test_amp.txt"
echo "== side by side"
GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown} LM_PEER_VARIANTS="eager graph compile" \
  timeout 420 benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 3 gpt2 >"$OUT/logs/lm.txt" 2>&1
echo "side-by-side rc=$?"
cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
echo "== profiles"
timeout 60 ./build-gpu/examples/lm_benchmark --quiet --json '' --windows 2 \
  --kernel-trace "$OUT/logs/gpuperf_trace.json" >/dev/null 2>&1
python3 benchmarks/python/profile_step.py --trace "$OUT/logs/gpuperf_trace.json" --steps 10 \
  --batch-size 16 --top 25 >"$OUT/logs/gpuperf_profile.txt" 2>&1
rm -f "$OUT/logs/gpuperf_trace.json"
timeout 120 python3 benchmarks/python/lm_peer.py --variant compile --windows 2 \
  --profile "$OUT/logs/compile_profile.txt" >/dev/null 2>>"$OUT/logs/peer_profile.err"
head -45 "$OUT/logs/gpuperf_profile.txt"
head -30 "$OUT/logs/compile_profile.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >"$OUT/logs/gpu.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs
rm -rf "$OUT/logs"
