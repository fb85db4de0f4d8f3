#!/usr/bin/env bash
# Device call 5 (one H200): the learning rate in device memory (issue #14, point 3) on top of call 4:
# build, every test but the 2-GPU ones (the [gpu] graph tests compare with eager from step 0 and
# feed other batch shapes after capture), then the seed and ResNet-50 defaults side by side with
# PyTorch again (their throughput must not move).
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
left() { echo $(( 585 - SECONDS )); }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 280 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -40
timeout 180 ctest --test-dir build-gpu -j6 -LE "tsan|gpu2" --output-on-failure --timeout 170 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run|^gpu |^cpu ' $L/ctest.txt | head -20
grep -E -B3 -A12 'FAILED:' $L/ctest.txt | head -60
timeout $(( $(left) - 5 )) benchmarks/side_by_side.sh build-gpu $L/train 1 "seed-fp16-default resnet50-fp16-default" > $L/train-summary.md 2>&1; head -5 $L/train-summary.md
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
