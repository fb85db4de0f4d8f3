#!/usr/bin/env bash
# Device call 1 (one H200): batch norm statistics from the convolution's epilogue (cuDNN's graph
# API, convolution + GenStats; tree $GPUPERF_COMMIT). GPUPERF_EXPERIMENT_CONV_STATS=off (a switch
# of this tree only) gives the previous path: ATen's convolution, then gpuperf's statistics pass;
# =noconv1 leaves each bottleneck's first 1x1 convolution (a GEMM) on the previous path.
# Builds; the [gpu] tests of test_fusion, test_train and test_inference (all run, failures
# listed); ResNet-50 training fp16 alternating off / noconv1 / on (3 runs each); a kernel trace of
# off and on.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
for t in test_fusion test_train test_inference; do
  timeout 150 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; rc=$?; echo "$t [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
  if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/$t-gpu.txt | head -60; fi
done
timeout 60 build-gpu/tests/test_fusion "a convolution's epilogue*" -s 2>&1 | grep -A3 "GenStats" | head -8
R=(--model resnet50 --batch-size 256 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry --precision fp16)
for r in 1 2 3; do
  S=$SECONDS; GPUPERF_EXPERIMENT_CONV_STATS=off timeout 150 build-gpu/examples/resnet50_benchmark "${R[@]}" --json $L/train-previous-$r.json > /dev/null; echo "off run $r: $((SECONDS-S)) s"
  S=$SECONDS; GPUPERF_EXPERIMENT_CONV_STATS=noconv1 timeout 150 build-gpu/examples/resnet50_benchmark "${R[@]}" --json $L/train-noconv1-$r.json > /dev/null; echo "noconv1 run $r: $((SECONDS-S)) s"
  S=$SECONDS; timeout 150 build-gpu/examples/resnet50_benchmark "${R[@]}" --json $L/train-new-$r.json > /dev/null; echo "on run $r: $((SECONDS-S)) s"
done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
GPUPERF_EXPERIMENT_CONV_STATS=off timeout 150 build-gpu/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-previous.json > /dev/null
timeout 150 build-gpu/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-new.json > /dev/null; echo "traces at ${SECONDS}s"
for v in previous new; do
  python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-$v.json --steps 5 --batch-size 256 --top 40 > $L/trace-resnet50-$v.txt 2>&1
done
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
for v in previous new; do head -10 $L/trace-resnet50-$v.txt | cut -c1-150; tail -1 $L/trace-resnet50-$v.txt; done
gzip $L/trace-*.json
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
