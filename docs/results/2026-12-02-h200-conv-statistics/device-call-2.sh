#!/usr/bin/env bash
# Device call 2 (one H200): the final tree (call 1's code with the GPUPERF_EXPERIMENT_CONV_STATS
# switch removed, the sums no longer zeroed, no zero gradients made up for them, deterministic
# engines only where cuDNN determinism is asked for). Build, the [gpu] tests of test_fusion,
# test_train and test_inference (failures listed, the call goes on), then the headline's
# ResNet-50 training section (3 alternating repeats against eager and torch.compile default /
# reduce-overhead).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
for t in test_fusion test_train test_inference; do
  timeout 150 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; rc=$?; echo "$t [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
  if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/$t-gpu.txt | head -60; fi
done
echo "headline from ${SECONDS}s"
timeout $(( 590 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -3 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
