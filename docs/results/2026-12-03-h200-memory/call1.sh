#!/usr/bin/env bash
# Device call 1 (one H200): build, the memory tests (checkpointing, the counted activations
# against the allocator, the prediction in a record) and the language-model and CUDA-graph tests
# they touch, then the validation rows of benchmarks/memory_validation.sh (lm, seed, resnet).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark resnet50_benchmark seed_benchmark \
    test_training_memory test_transformer test_train; } >"$OUT/logs/build.log" 2>&1 ||
  { tail -40 "$OUT/logs/build.log"; tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
for t in test_training_memory test_transformer; do
  timeout 120 ./build-gpu/tests/$t >"$OUT/logs/$t.txt" 2>&1; echo "$t rc=$?"; tail -3 "$OUT/logs/$t.txt"
done
timeout 90 ./build-gpu/tests/test_train "[gpu]" >"$OUT/logs/test_train.txt" 2>&1; echo "test_train [gpu] rc=$?"
tail -3 "$OUT/logs/test_train.txt"
export GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown}
timeout 200 benchmarks/memory_validation.sh build-gpu "$OUT/logs/mem" "lm seed" >"$OUT/logs/mem-lm.txt" 2>&1
echo "lm seed rc=$?"
timeout 120 benchmarks/memory_validation.sh build-gpu "$OUT/logs/mem" "resnet" >"$OUT/logs/mem-resnet.txt" 2>&1
echo "resnet rc=$?"
python3 benchmarks/python/summarize_memory.py "$OUT/logs/mem" | cut -c1-220
cat "$OUT/logs/mem/failures.txt" 2>/dev/null
tar czf "$OUT/logs.tgz" -C "$OUT" logs
rm -rf "$OUT/logs"
