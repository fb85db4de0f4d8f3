#!/usr/bin/env bash
# Device call 5 (one H200): after call 4, the batch search also destroys its tries' fused-
# convolution plans (cuDNN's compiled kernels sit in the CUDA context, outside the caching
# allocator: call 4's measured run at ResNet-50's largest batch failed to instantiate its graph),
# and an image model's reserved peak is extrapolated from the probes' reserved peaks. The memory
# tests, the image-model rows and ResNet-50's --batch-size max search.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark lm_benchmark \
    test_training_memory; } >"$OUT/logs/build.log" 2>&1 ||
  { tail -40 "$OUT/logs/build.log"; tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
timeout 60 ./build-gpu/tests/test_training_memory >"$OUT/logs/test_training_memory.txt" 2>&1
echo "test_training_memory rc=$?"; tail -2 "$OUT/logs/test_training_memory.txt"
export GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown}
m=benchmarks/memory_validation.sh
timeout 90 $m build-gpu "$OUT/logs/mem" "seed resnet" >"$OUT/logs/mem-image.txt" 2>&1; echo "seed resnet rc=$?"
b=build-gpu/examples/resnet50_benchmark
timeout 200 $b --batch-size max --lr 0.02 --warmup 5 --steps-per-window 5 --windows 2 \
  --no-oom-back-off --json "$OUT/logs/mem/resnet50-max.json" >"$OUT/logs/mem/resnet50-max.txt" 2>&1
echo "resnet50 max rc=$?"
python3 benchmarks/python/summarize_memory.py "$OUT/logs/mem" | cut -c1-230
grep -h "batch [0-9]*:\|fit the search\|largest batch\|rror" "$OUT"/logs/mem/*max*.txt | cut -c1-300 | head -40
tar czf "$OUT/logs.tgz" -C "$OUT" logs
rm -rf "$OUT/logs"
