#!/usr/bin/env bash
# Device call 3 (one H200), tree $GPUPERF_COMMIT (call 2's code): the headline's ResNet-50
# training section (benchmarks/headline.sh, 3 alternating repeats against eager and torch.compile
# default / reduce-overhead), to see that the training row reproduces on the final tree.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
timeout $(( 590 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -3 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
