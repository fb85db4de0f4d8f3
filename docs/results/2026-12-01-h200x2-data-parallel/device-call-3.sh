#!/usr/bin/env bash
# Device call 3 (2x H200): build, the 2-GPU tests (NCCL gradients against the fp64 reference,
# NCCL ranks inside a CUDA graph, the interconnect test), a data-parallel smoke run, then
# ResNet-50 side by side with PyTorch DDP under torchrun on 1 and 2 GPUs, with NVLink, host
# memory only and sockets only (benchmarks/dp_side_by_side.sh, 1 repeat: the device minutes left).
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
left() { echo $(( 540 - SECONDS )); }
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  nvidia-smi topo -m; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j32 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -30
timeout 120 ctest --test-dir build-gpu -L gpu2 --output-on-failure --timeout 110 > $L/ctest-gpu2.txt 2>&1; echo "ctest gpu2 rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|rank 0:|with expansion' $L/ctest-gpu2.txt | head -20
B=build-gpu/examples
timeout 90 $B/resnet50_benchmark --nproc-per-node 2 --windows 3 --json $L/smoke-resnet50-2gpu.json > $L/smoke-resnet50-2gpu.txt 2>&1; echo "resnet50 2-GPU smoke rc=$? at ${SECONDS}s"
grep -E 'Workload|Throughput|Data-parallel|global|gradients|warning|error' $L/smoke-resnet50-2gpu.txt | head -12
timeout $(( $(left) - 5 )) benchmarks/dp_side_by_side.sh build-gpu $L/resnet-dp 1 resnet50 links > $L/resnet-dp-summary.md 2>&1; cat $L/resnet-dp-summary.md | tail -8
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
