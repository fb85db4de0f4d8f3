#!/usr/bin/env bash
# Device call 3 (one H200): call 2's tree with the fused statistics switched off where PyTorch asks
# for determinism (call 2 showed two eager runs differ with the GenStats engines cuDNN offers
# under its determinism flag too). Builds test_fusion and test_train; runs their [gpu] tests.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target test_fusion test_train > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
for t in test_fusion test_train; do
  timeout 150 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; rc=$?; echo "$t [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
  if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/$t-gpu.txt | head -60; fi
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
