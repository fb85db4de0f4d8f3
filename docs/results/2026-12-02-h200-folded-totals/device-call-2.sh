#!/usr/bin/env bash
# Device call 2 (one H200): the totals kernels with 8 channels x 128 stripes per block (was 32 x
# 32) loading parameters before they wait, and programmatic dependent launch between the batch
# norm kernels (tree $GPUPERF_COMMIT), against the previous tree (06651e0, unpacked by
# `git archive` into ab-old/ for this call only). GPUPERF_EXPERIMENT_PDL=off (this tree only)
# turns the dependent launches off, leaving the totals kernels' change. Both trees built at once;
# the [gpu] tests of test_fusion, test_train and test_inference (the call stops if one fails);
# ResNet-50 training fp16 alternating previous / new without PDL / new (3 runs each); a kernel
# trace of each.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
( cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1 &&
  timeout 330 cmake --build build-gpu -j11 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s" ) &
( cmake -S ab-old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure-old.txt 2>&1 &&
  timeout 330 cmake --build build-old -j5 --target resnet50_benchmark > $L/build-old.txt 2>&1; echo "old build rc=$? at ${SECONDS}s" ) &
wait
grep -E "error|FAILED" $L/build.txt $L/build-old.txt | head -20
for t in test_fusion test_train test_inference; do
  timeout 120 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; rc=$?; echo "$t [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
  if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/$t-gpu.txt | head -80; tar czf $OUT/logs.tgz -C $OUT logs; exit 1; fi
done
R=(--model resnet50 --batch-size 256 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry --precision fp16)
for r in 1 2 3; do
  timeout 60 build-old/examples/resnet50_benchmark "${R[@]}" --json $L/train-previous-$r.json > /dev/null
  GPUPERF_EXPERIMENT_PDL=off timeout 60 build-gpu/examples/resnet50_benchmark "${R[@]}" --json $L/train-totals-$r.json > /dev/null
  timeout 60 build-gpu/examples/resnet50_benchmark "${R[@]}" --json $L/train-new-$r.json > /dev/null
  echo "train repeat $r at ${SECONDS}s"
done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 build-old/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-previous.json > /dev/null
GPUPERF_EXPERIMENT_PDL=off timeout 60 build-gpu/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-totals.json > /dev/null
timeout 60 build-gpu/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-new.json > /dev/null; echo "traces at ${SECONDS}s"
for v in previous totals new; do
  python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-$v.json --steps 5 --batch-size 256 --top 40 > $L/trace-resnet50-$v.txt 2>&1
done
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
for v in previous totals new; do head -2 $L/trace-resnet50-$v.txt | cut -c1-150; tail -1 $L/trace-resnet50-$v.txt; done
gzip $L/trace-*.json
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
