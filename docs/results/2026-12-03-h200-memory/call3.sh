#!/usr/bin/env bash
# Device call 3 (one H200): as call 2, after its table: an image model's workspaces term is what
# the probe's measured intercept leaves of the planned states, the search's final run of an image
# model skips the probe, and the allocation test warms cuBLAS up first. The memory tests,
# then every row of benchmarks/memory_validation.sh and the two --batch-size max searches.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark resnet50_benchmark seed_benchmark \
    test_training_memory; } >"$OUT/logs/build.log" 2>&1 ||
  { tail -40 "$OUT/logs/build.log"; tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
timeout 60 ./build-gpu/tests/test_training_memory >"$OUT/logs/test_training_memory.txt" 2>&1
echo "test_training_memory rc=$?"; tail -2 "$OUT/logs/test_training_memory.txt"
export GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown}
m=benchmarks/memory_validation.sh
timeout 150 $m build-gpu "$OUT/logs/mem" "lm seed" >"$OUT/logs/mem-lm.txt" 2>&1; echo "lm seed rc=$?"
timeout 190 $m build-gpu "$OUT/logs/mem" "max" >"$OUT/logs/mem-max.txt" 2>&1; echo "max rc=$?"
timeout 100 $m build-gpu "$OUT/logs/mem" "resnet" >"$OUT/logs/mem-resnet.txt" 2>&1; echo "resnet rc=$?"
python3 benchmarks/python/summarize_memory.py "$OUT/logs/mem" | cut -c1-230
cat "$OUT/logs/mem/failures.txt" 2>/dev/null
grep -h "batch [0-9]*:" "$OUT"/logs/mem/*max*.txt | head -40
tar czf "$OUT/logs.tgz" -C "$OUT" logs
rm -rf "$OUT/logs"
