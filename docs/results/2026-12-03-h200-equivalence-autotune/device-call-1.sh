#!/usr/bin/env bash
# Device call 1 (one fresh H200), tree $GPUPERF_COMMIT: build; the whole [gpu] suite (the fused
# ResNet test's new tolerance, the checkpoint round trip); the equivalence run with five PyTorch
# variants (layout, cuDNN search, fused SGD, deterministic) and gpuperf with torch::optim's SGD;
# then single inference headline repeats (default modes) while the time lasts.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
save() { tar czf $OUT/logs.tgz -C $OUT logs; }
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch, torchvision; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torchvision.__version__)'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
tests="test_amp test_fusion test_train test_micro test_inference"
timeout 300 cmake --build build-gpu -j16 --target $tests equivalence_run resnet50_benchmark seed_benchmark inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
for t in $tests; do
  timeout 150 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; rc=$?; echo "$t [gpu] rc=$rc at ${SECONDS}s: $(tail -2 $L/$t-gpu.txt | tr '\n' ' ')"
  if [ $rc -ne 0 ]; then grep -B3 -A12 FAILED $L/$t-gpu.txt | head -60; fi
done
save
PYTHONUNBUFFERED=1 timeout 260 python3 benchmarks/python/equivalence.py --build build-gpu --out $L/equivalence > $L/equivalence.txt 2>&1; echo "equivalence rc=$? at ${SECONDS}s"
grep -E "^\||PASS|FAIL|Error|error" $L/equivalence.txt | head -40
save
export GPUPERF_COMMIT
for r in 1 2; do
  [ $(( 570 - SECONDS )) -lt 170 ] && break
  timeout $(( 575 - SECONDS )) benchmarks/headline.sh build-gpu $L/infer-$r 1 infer-resnet50 > $L/infer-$r.md 2> $L/infer-$r.err; echo "infer repeat $r rc=$? at ${SECONDS}s"
  save
done
save
