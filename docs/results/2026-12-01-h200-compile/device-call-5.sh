#!/usr/bin/env bash
# Device call 5 (one H200): the batch-1 fix (fused calls without autograd call cuDNN directly):
# build, the fusion tests on the GPU, gpuperf's inference at batches 1, 2, 4 and 8, then the
# headline's seed-training and inference sections, 3 alternating repeats (benchmarks/headline.sh).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; git describe --always --dirty; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 250 cmake --build build-gpu -j16 --target inference_benchmark seed_benchmark resnet50_benchmark test_fusion > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -20
timeout 120 build-gpu/tests/test_fusion "[gpu]" > $L/test-fusion-gpu.txt 2>&1; echo "test_fusion [gpu] rc=$? at ${SECONDS}s"; tail -3 $L/test-fusion-gpu.txt
timeout 60 build-gpu/examples/inference_benchmark --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,2,4,8 --warmup 20 --iterations 200 --quiet --json $L/infer-1-2-4-8.json > /dev/null 2>&1
python3 -c "
import json; r=json.load(open('$L/infer-1-2-4-8.json')); print('batch p50 ms:', ' '.join(f\"{b['batch_size']}={b['latency']['p50_s']*1e3:.3f}\" for b in r['batches']))"
timeout $(( 560 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-seed infer-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -4 $L/headline.err
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
