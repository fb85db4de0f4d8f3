#!/usr/bin/env bash
# Device call 4 (one H200; run twice: the first run's 300 kernels were all model set-up): gpuperf's fused inference also doubles its time at batch 1 eagerly
# (1.78 vs 0.96 ms, call 3), so it runs other kernels there: list them with Nsight Compute (one
# eager call, cuDNN benchmark off so that no autotuning kernels run), batch 1 against batch 2.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
NCU=$(ls /usr/local/cuda*/bin/ncu | head -1)
B=build-gpu/examples/inference_benchmark
for b in 1 2; do
  timeout 200 $NCU --csv --metrics gpu__time_duration.sum --launch-count 4000 $B --model resnet50 --precision fp16 \
    --memory-format channels_last --graph off --no-cudnn-benchmark --warmup 0 --iterations 1 --batch-sizes $b --quiet \
    > $L/ncu-$b.csv 2> $L/ncu-$b.err; echo "ncu batch $b rc=$? at ${SECONDS}s"
done
tail -3 $L/ncu-1.err
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
