#!/usr/bin/env bash
# Device call 4 (one H200): test_fusion's [gpu] tests after a refactor of the tests alone (the
# three copies of a BatchNorm and their results in shared helpers).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target test_fusion > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
timeout 100 build-gpu/tests/test_fusion "[gpu]~[gpu2]" > $L/test_fusion-gpu.txt 2>&1; rc=$?; echo "test_fusion [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/test_fusion-gpu.txt
if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/test_fusion-gpu.txt | head -60; fi
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
