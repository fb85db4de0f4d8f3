#!/usr/bin/env bash
# Device call 1: build, all single-GPU tests, inference side by side, seed profile.
set -uo pipefail
source .deps/env.sh
mkdir -p $OUT/logs
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "torchvision", torchvision.__version__)';
  git log -1 --format='%H %s'; } > $OUT/logs/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $OUT/logs/configure.txt 2>&1
cmake --build build-gpu -j16 -- -k 0 > $OUT/logs/build.txt 2>&1; echo "build rc=$?"
grep -E 'error|FAILED' $OUT/logs/build.txt | head -40
ctest --test-dir build-gpu -j4 -LE tsan --output-on-failure --timeout 300 > $OUT/logs/ctest.txt 2>&1; echo "ctest rc=$?"
grep -E 'tests passed|Failed|\*\*\*' $OUT/logs/ctest.txt | head -20
timeout 300 benchmarks/inference_side_by_side.sh build-gpu $OUT/logs/infer 3 1,64,256,512 > $OUT/logs/infer-summary.md 2>&1
cat $OUT/logs/infer-summary.md
./build-gpu/examples/region_timing 100 256 > $OUT/logs/region_timing.txt 2>&1; tail -12 $OUT/logs/region_timing.txt
(cd benchmarks/python && python3 profile_step.py --model simple --memory-format contiguous --optimizer adam --steps 50 --top 30) > $OUT/logs/profile-simple.txt 2>&1
grep -v warn $OUT/logs/profile-simple.txt | head -45
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
