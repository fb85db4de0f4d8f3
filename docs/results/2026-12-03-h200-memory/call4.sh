#!/usr/bin/env bash
# Device call 4 (one H200): image models' memory probed as the run takes its step (eager warm-up,
# capture and replay), the workspaces from the larger probe's peak, cuBLAS's per-stream
# workspaces handed back between the batch search's tries, LibTorch's CUDA state set up before the
# allocator's statistics are read or reset. The memory tests, then every row of
# benchmarks/memory_validation.sh (image models first) and both --batch-size max searches.
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
s=benchmarks/python/summarize_memory.py
timeout 90 $m build-gpu "$OUT/mem" "seed resnet" >"$OUT/logs/mem-image.txt" 2>&1; echo "seed resnet rc=$?"
python3 $s "$OUT/mem" | cut -c1-230
timeout 130 $m build-gpu "$OUT/mem" "lm" >"$OUT/logs/mem-lm.txt" 2>&1; echo "lm rc=$?"
timeout 200 $m build-gpu "$OUT/mem" "max" >"$OUT/logs/mem-max.txt" 2>&1; echo "max rc=$?"
python3 $s "$OUT/mem" | cut -c1-230
cat "$OUT/mem/failures.txt" 2>/dev/null
grep -h "batch [0-9]*:\|fit the search\|largest batch" "$OUT"/mem/*max*.txt | head -40
cp -r "$OUT/mem" "$OUT/logs/mem"
tar czf "$OUT/logs.tgz" -C "$OUT" logs
rm -rf "$OUT/logs" "$OUT/mem"
