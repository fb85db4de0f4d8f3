#!/usr/bin/env bash
# Device call 2: kernel fusion: GPU tests, training and inference side by side.
set -uo pipefail
source .deps/env.sh
mkdir -p $OUT/logs
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "torchvision", torchvision.__version__)';
  git log -1 --format='%H %s'; } > $OUT/logs/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $OUT/logs/configure.txt 2>&1
cmake --build build-gpu -j16 --target seed_benchmark inference_benchmark test_fusion test_train test_inference > $OUT/logs/build.txt 2>&1; echo "build rc=$?"
grep -E 'error|FAILED' $OUT/logs/build.txt | head -30
ctest --test-dir build-gpu -j2 -R 'fus|fold|graph|CUDA' --output-on-failure --timeout 200 > $OUT/logs/ctest.txt 2>&1; echo "ctest rc=$?"
grep -E 'tests passed|Failed|\*\*\*|Test +#' $OUT/logs/ctest.txt | head -30
timeout 170 benchmarks/side_by_side.sh build-gpu $OUT/logs/train 3 "seed-fp16-default seed-fp16-nofuse seed-bf16-graph seed-bf16-graph-nofuse" > $OUT/logs/train-summary.md 2>&1
cat $OUT/logs/train-summary.md | tail -15
GPUPERF_MODES="default graph" timeout 250 benchmarks/inference_side_by_side.sh build-gpu $OUT/logs/infer 3 1,256,512 > $OUT/logs/infer-summary.md 2>&1
tail -12 $OUT/logs/infer-summary.md
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
