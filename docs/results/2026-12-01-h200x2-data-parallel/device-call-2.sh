#!/usr/bin/env bash
# Device call 2 (one H200; the 2-GPU kind still not lent): the data-parallel code built against
# the wheel's c10d (NCCL + Gloo), every test but the 2-GPU ones, among them the Gloo-on-CUDA
# gradient test against the fp64 reference and the CPU launcher tests.
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
grep -E "gpuperf:" $L/configure.txt | head
timeout 300 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -40
timeout 200 ctest --test-dir build-gpu -j6 -LE "tsan|gpu2" --output-on-failure --timeout 180 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run|Skipped|^gpu |^cpu ' $L/ctest.txt | head -20
grep -E -A12 'dist_launch|CUDA tensors over Gloo' $L/ctest.txt | grep -E "ok:|FAIL|Passed|Failed" | head -20
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
