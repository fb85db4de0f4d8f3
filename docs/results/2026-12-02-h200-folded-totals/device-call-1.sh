#!/usr/bin/env bash
# Device call 1 (one H200): the batch norm totals folded into the reducing passes (tree
# $GPUPERF_COMMIT) against the previous tree (0288f39, unpacked by `git archive` into ab-old/ for
# this call only). Both built at once; the [gpu] tests of test_fusion (the call stops if they
# fail); ResNet-50 training fp16 alternating previous / new (3 runs each); a kernel trace of each;
# the [gpu] tests of test_train and test_inference in the time left.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
( cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1 &&
  timeout 330 cmake --build build-gpu -j11 --target resnet50_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s" ) &
( cmake -S ab-old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure-old.txt 2>&1 &&
  timeout 330 cmake --build build-old -j5 --target resnet50_benchmark > $L/build-old.txt 2>&1; echo "old build rc=$? at ${SECONDS}s" ) &
wait
grep -E "error|FAILED" $L/build.txt $L/build-old.txt | head -20
timeout 150 build-gpu/tests/test_fusion "[gpu]~[gpu2]" > $L/test_fusion-gpu.txt 2>&1; rc=$?; echo "test_fusion [gpu] rc=$rc at ${SECONDS}s"; tail -3 $L/test_fusion-gpu.txt
if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/test_fusion-gpu.txt | head -120; tar czf $OUT/logs.tgz -C $OUT logs; exit 1; fi
R=(--model resnet50 --batch-size 256 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry --precision fp16)
for r in 1 2 3; do
  timeout 60 build-old/examples/resnet50_benchmark "${R[@]}" --json $L/train-previous-$r.json > /dev/null
  timeout 60 build-gpu/examples/resnet50_benchmark "${R[@]}" --json $L/train-new-$r.json > /dev/null
  echo "train repeat $r at ${SECONDS}s"
done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 build-old/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-previous.json > /dev/null; echo "trace rc=$? at ${SECONDS}s"
timeout 60 build-gpu/examples/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-new.json > /dev/null; echo "trace rc=$? at ${SECONDS}s"
for t in test_train test_inference; do
  if [ $SECONDS -gt 470 ]; then echo "$t [gpu] not run: no time left"; continue; fi
  timeout $(( 580 - SECONDS )) build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; echo "$t [gpu] rc=$? at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
done
for v in previous new; do
  python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-$v.json --steps 5 --batch-size 256 --top 40 > $L/trace-resnet50-$v.txt 2>&1
done
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
for v in previous new; do head -4 $L/trace-resnet50-$v.txt | cut -c1-150; tail -1 $L/trace-resnet50-$v.txt; done
gzip $L/trace-*.json
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
