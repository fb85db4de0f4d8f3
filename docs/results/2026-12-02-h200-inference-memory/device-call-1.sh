#!/usr/bin/env bash
# Device call 1 (one H200), tree $GPUPERF_COMMIT: inference records each batch size's peak memory
# (gpuperf: the caching allocator's peak from just before the first call to the last timed one;
# infer_peer.py: torch.cuda.max_memory_allocated() over the same span). Build, the [gpu] tests of
# test_inference, then the headline's inference section (benchmarks/headline.sh, 3 alternating
# repeats against eager, CUDA graph and torch.compile + CUDA graph).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
timeout 100 build-gpu/tests/test_inference "[gpu]~[gpu2]" > $L/test_inference-gpu.txt 2>&1; rc=$?; echo "test_inference [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/test_inference-gpu.txt
if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/test_inference-gpu.txt | head -60; fi
timeout $(( 590 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "infer-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -3 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
