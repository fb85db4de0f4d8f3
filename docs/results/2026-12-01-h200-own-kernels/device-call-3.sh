#!/usr/bin/env bash
# Device call 3 (one H200): the max-pool kernels with their window loops unrolled (K = 3 forward,
# ceil(kernel / stride) windows backward): build, the [gpu] tests of test_fusion (the call stops
# if they fail), a kernel trace of the training step; then the headline's ResNet-50 training
# section (benchmarks/headline.sh, 3 alternating repeats against eager and torch.compile).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
D=docs/results/2026-12-01-h200-own-kernels
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -10
timeout 100 build-gpu/tests/test_fusion "[gpu]" > $L/test_fusion-gpu.txt 2>&1; rc=$?; echo "test_fusion [gpu] rc=$rc at ${SECONDS}s"; tail -3 $L/test_fusion-gpu.txt
if [ $rc -ne 0 ]; then grep -B3 -A12 FAILED $L/test_fusion-gpu.txt | head -60; tar czf $OUT/logs.tgz -C $OUT logs; exit 1; fi
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 build-gpu/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf.json > /dev/null; echo "trace rc=$? at ${SECONDS}s"
python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-gpuperf.json --steps 5 --batch-size 256 --top 30 > $L/trace-resnet50-gpuperf.txt 2>&1
head -10 $L/trace-resnet50-gpuperf.txt | cut -c1-160; grep "\[pool" $L/trace-resnet50-gpuperf.txt | cut -c1-160; tail -1 $L/trace-resnet50-gpuperf.txt
gzip $L/trace-*.json
timeout $(( 590 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -3 $L/headline.err
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
