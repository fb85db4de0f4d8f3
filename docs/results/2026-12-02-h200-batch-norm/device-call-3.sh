#!/usr/bin/env bash
# Device call 3 (one H200): the final tree (call 2's code with the A/B switch removed). Build, the
# [gpu] tests of test_fusion, test_train and test_inference, then the headline's ResNet-50
# inference section (3 alternating repeats against eager, the manual CUDA graph and
# torch.compile), which the previous session's stem and pool kernels changed.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
for t in test_fusion test_train test_inference; do
  timeout 120 build-gpu/tests/$t "[gpu]" > $L/$t-gpu.txt 2>&1; echo "$t [gpu] rc=$? at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
done
echo "headline from ${SECONDS}s"
timeout $(( 585 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "infer-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -4 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
