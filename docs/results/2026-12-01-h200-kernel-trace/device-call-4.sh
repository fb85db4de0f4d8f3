#!/usr/bin/env bash
# Device call 4 (one H200, the final tree, the experiment switches of calls 1-3 removed): the
# [gpu] tests of the changed code, then the headline's seed-training and ResNet-50 inference
# sections (benchmarks/headline.sh, 3 alternating repeats against eager, the manual CUDA graph
# and torch.compile).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train test_inference test_infer > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -5
for t in test_fusion test_train test_inference test_infer; do
  timeout 60 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1
  echo "$t [gpu] rc=$? at ${SECONDS}s: $(grep -E 'test cases|All tests passed|No test cases' $L/$t-gpu.txt | tail -1)"
done
grep -E "FAILED" -A8 $L/test_*-gpu.txt | head -30
timeout $(( 590 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-seed infer-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -4 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
