#!/usr/bin/env bash
# Device call 8 (one H200, the last device minutes): the final tree builds with the wheel's
# LibTorch, and the bad-input tests of the two programs whose option checks changed pass there.
set -uo pipefail
source .deps/env.sh
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null 2>&1
timeout 170 cmake --build build-gpu -j16 --target seed_benchmark inference_benchmark test_report \
  > build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"; grep -E -A5 'error|FAILED' build.txt | head -20
timeout 40 ctest --test-dir build-gpu -R "cli_bad_input|inference_bad_input|Input files must" \
  --output-on-failure 2>&1 | grep -E "Test +#|tests passed|FAIL"
echo "end at ${SECONDS}s"
