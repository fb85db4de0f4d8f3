#!/usr/bin/env bash
# Device call 5 (one H200, a fresh start): the headline's ResNet-50 training section again on the
# tree of call 3's code, to see whether the figures and the ratio reproduce (compare_headlines.py
# against call 3). The GPU's UUID and the host name are recorded (earlier calls did not).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; hostname; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cat $L/session.txt
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
timeout $(( 340 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -4 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
