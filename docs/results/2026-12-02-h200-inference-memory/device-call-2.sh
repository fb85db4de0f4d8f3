#!/usr/bin/env bash
# Device call 2 (one H200), tree $GPUPERF_COMMIT: the training record's kernel_fusion says whether
# the batch norms' statistics came from the convolutions (conv-statistics+batchnorm+add+relu).
# Build; the [gpu] tests of test_fusion, test_train and test_inference (failures listed, the call
# goes on); then a short ResNet-50 training run to show the record's kernel_fusion.
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
timeout 120 build-gpu/examples/resnet50_benchmark --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 3 --quiet --json $L/resnet50.json > $L/resnet50.txt 2>&1; echo "resnet50 rc=$? at ${SECONDS}s"
python3 -c "import json; r=json.load(open('$L/resnet50.json')); print('kernel_fusion:', r['config']['kernel_fusion'], '| median', round(r['throughput']['median']), 'img/s | peak', round(r['peak_memory_bytes']/2**30, 2), 'GiB')"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
