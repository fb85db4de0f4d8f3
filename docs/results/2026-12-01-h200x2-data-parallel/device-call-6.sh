#!/usr/bin/env bash
# Device call 6 (one H200): gradient accumulation and checkpoints (issue #14, points 4-5) built
# with the wheel's LibTorch (the fused optimizer's save/load compiles only there), every test but
# the 2-GPU ones.
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 280 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -40
timeout 200 ctest --test-dir build-gpu -j6 -LE "tsan|gpu2" --output-on-failure --timeout 190 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run|^gpu |^cpu ' $L/ctest.txt | head -20
grep -E -B3 -A14 'FAILED:' $L/ctest.txt | head -60
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
