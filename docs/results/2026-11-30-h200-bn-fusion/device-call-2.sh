#!/usr/bin/env bash
# Device call 2: cuDNN fused BatchNorm+add+ReLU (build, [gpu] tests, ResNet-50 side by side),
# int8 GEMM side by side at two shapes, then the whole ctest as time allows.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
left() { echo $(( 575 - SECONDS )); }
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "torchvision", torchvision.__version__)'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1; grep -E "cuDNN|cudnn" $L/configure.txt
timeout 300 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A3 'error|FAILED' $L/build.txt | head -40
timeout 120 ./build-gpu/tests/test_fusion "[gpu]" > $L/test_fusion.txt 2>&1; echo "test_fusion rc=$?"; grep -E -B2 -A12 "FAILED|failed" $L/test_fusion.txt | head -80; tail -2 $L/test_fusion.txt
timeout 120 ./build-gpu/tests/test_train "[gpu]" > $L/test_train.txt 2>&1; echo "test_train rc=$?"; tail -2 $L/test_train.txt
echo "at ${SECONDS}s"
timeout $(( $(left) - 150 )) benchmarks/side_by_side.sh build-gpu $L/resnet 3 "resnet50-fp16-default resnet50-fp16-nofuse" > $L/resnet-summary.md 2>&1; head -6 $L/resnet-summary.md
grep -h "kernel_fusion" $L/resnet/*gpuperf-1.json | head -3
echo "at ${SECONDS}s"
for shape in 8192x8192x8192 16384x16384x4096; do
  GEMM_SHAPE=$shape DTYPES=int8 timeout 50 benchmarks/micro_side_by_side.sh build-gpu $L/int8-$shape 3 > $L/int8-$shape.md 2>&1; grep -E "gemm/int8|ratio" $L/int8-$shape.md | head -3
done
echo "at ${SECONDS}s, ctest with $(left)s"
timeout $(( $(left) - 10 )) ctest --test-dir build-gpu -j6 -LE "tsan|gpu2" --output-on-failure --timeout 200 > $L/ctest.txt 2>&1; echo "ctest rc=$?"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run' $L/ctest.txt | head -20
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
