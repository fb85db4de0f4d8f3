#!/usr/bin/env bash
# Device call 1 (one H200; the 2-GPU kind was not lent): the restructured tree built with the
# wheel's LibTorch, every test but the 2-GPU ones, then the single-GPU training rows side by side
# with PyTorch to show the restructuring cost nothing (same rows as 2026-11-30's call 5).
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
left() { echo $(( 585 - SECONDS )); }
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.nccl.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 280 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A3 'error|FAILED' $L/build.txt | head -30
timeout 150 ctest --test-dir build-gpu -j6 -LE "tsan|gpu2" --output-on-failure --timeout 140 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run|^gpu |^cpu ' $L/ctest.txt | head -20
timeout $(( $(left) - 5 )) benchmarks/side_by_side.sh build-gpu $L/resnet 2 "resnet50-fp16-default" > $L/resnet-summary.md 2>&1; head -5 $L/resnet-summary.md
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
