#!/usr/bin/env bash
# Device call 4: the final tree: [gpu] fusion and training tests, measured serving mode on the
# H200 next to the simulated one (same measured batch timings), ResNet-50 fused profile check.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target test_fusion test_train inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A3 'error|FAILED' $L/build.txt | head -20
timeout 120 ./build-gpu/tests/test_fusion "[gpu]" > $L/test_fusion.txt 2>&1; echo "test_fusion rc=$?"; grep -E -B2 -A8 "FAILED" $L/test_fusion.txt | head -40; tail -2 $L/test_fusion.txt
timeout 120 ./build-gpu/tests/test_train "[gpu]" > $L/test_train.txt 2>&1; echo "test_train rc=$?"; tail -2 $L/test_train.txt
for mode in simulated measured; do
  timeout 90 ./build-gpu/examples/inference_benchmark --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8,32,128 --serve-rates 500,2000,8000 --serve-mode $mode --serve-seconds 3 --json $L/serve-$mode.json > $L/serve-$mode.txt 2>&1; echo "serve $mode rc=$?"
  grep -i -A8 "serving" $L/serve-$mode.txt | head -14
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
