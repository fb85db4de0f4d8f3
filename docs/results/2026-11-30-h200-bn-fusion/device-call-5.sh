#!/usr/bin/env bash
# Device call 5: the final tree (CUDA-graph capture shared by training and inference): full build,
# every test but the 2-GPU one, the seed rows side by side (memory with the two-node fusion,
# bf16 graph), ResNet-50 default once more.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
left() { echo $(( 470 - SECONDS )); }
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A3 'error|FAILED' $L/build.txt | head -30
timeout 150 ctest --test-dir build-gpu -j6 -LE tsan -E "gpu2:" --output-on-failure --timeout 120 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run' $L/ctest.txt | head -20
timeout 200 benchmarks/side_by_side.sh build-gpu $L/seed 3 "seed-fp16-default seed-bf16-graph seed-bf16-graph-cl" > $L/seed-summary.md 2>&1; head -7 $L/seed-summary.md
echo "at ${SECONDS}s"
timeout $(( $(left) - 5 )) benchmarks/side_by_side.sh build-gpu $L/resnet 2 "resnet50-fp16-default" > $L/resnet-summary.md 2>&1; head -5 $L/resnet-summary.md
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
