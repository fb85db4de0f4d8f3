#!/usr/bin/env bash
# Device call 1 (2x H200): the restructured tree built with the wheel's LibTorch, every test
# (CPU, [gpu], [gpu2]), data-parallel smoke runs (ResNet-50 and the seed model on 2 GPUs through
# --nproc-per-node, CUDA graph with NCCL inside), then the seed model side by side with DDP.
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
left() { echo $(( 585 - SECONDS )); }
{ date -u; git log -1 --format=%H 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  nvidia-smi topo -m; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.nccl.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 260 cmake --build build-gpu -j32 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A3 'error|FAILED' $L/build.txt | head -30
timeout 150 ctest --test-dir build-gpu -j8 -LE tsan --output-on-failure --timeout 140 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run|Label|gpu ' $L/ctest.txt | head -20
B=build-gpu/examples
timeout 90 $B/resnet50_benchmark --nproc-per-node 2 --windows 3 --json $L/smoke-resnet50-2gpu.json > $L/smoke-resnet50-2gpu.txt 2>&1; echo "resnet50 2gpu smoke rc=$? at ${SECONDS}s"
grep -E 'Workload|Throughput|Data-parallel|global|gradients|warning' $L/smoke-resnet50-2gpu.txt | head -12
timeout 60 $B/seed_benchmark --nproc-per-node 2 --windows 3 --json $L/smoke-seed-2gpu.json > $L/smoke-seed-2gpu.txt 2>&1; echo "seed 2gpu smoke rc=$? at ${SECONDS}s"
grep -E 'Workload|Throughput|Data-parallel|global|gradients|warning' $L/smoke-seed-2gpu.txt | head -12
timeout $(( $(left) - 5 )) benchmarks/dp_side_by_side.sh build-gpu $L/seed-dp 2 simple > $L/seed-dp-summary.md 2>&1; cat $L/seed-dp-summary.md | tail -8
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
