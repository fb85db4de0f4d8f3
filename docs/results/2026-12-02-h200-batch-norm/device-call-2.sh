#!/usr/bin/env bash
# Device call 2 (one H200): call 1's kernels with faster totals (four loads in flight per thread,
# a tree over the stripes) and the batch norm alone on them too (ResNet's downsampling shortcut).
# Build, the [gpu] tests of test_fusion (the call stops if they fail), ResNet-50 training
# alternating baseline (GPUPERF_EXPERIMENT_BN=cudnn: cuDNN's batch norm, as before this session) /
# new, bf16, a kernel trace, the [gpu] tests of test_train and test_inference, then the headline's
# ResNet-50 training section (3 alternating repeats) in the time left.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
timeout 150 build-gpu/tests/test_fusion "[gpu]" > $L/test_fusion-gpu.txt 2>&1; rc=$?; echo "test_fusion [gpu] rc=$rc at ${SECONDS}s"; tail -3 $L/test_fusion-gpu.txt
if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/test_fusion-gpu.txt | head -120; tar czf $OUT/logs.tgz -C $OUT logs; exit 1; fi
B=build-gpu/examples
R=(--model resnet50 --batch-size 256 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry)
for r in 1 2 3; do
  GPUPERF_EXPERIMENT_BN=cudnn timeout 60 $B/resnet50_benchmark "${R[@]}" --precision fp16 --json $L/train-baseline-$r.json > /dev/null
  timeout 60 $B/resnet50_benchmark "${R[@]}" --precision fp16 --json $L/train-new-$r.json > /dev/null
  echo "train repeat $r at ${SECONDS}s"
done
timeout 60 $B/resnet50_benchmark "${R[@]}" --precision bf16 --json $L/bf16-new-1.json > /dev/null
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-new.json > /dev/null; echo "trace rc=$? at ${SECONDS}s"
for t in test_train test_inference; do
  timeout 120 build-gpu/tests/$t "[gpu]" > $L/$t-gpu.txt 2>&1; echo "$t [gpu] rc=$? at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
done
python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-new.json --steps 5 --batch-size 256 --top 40 > $L/trace-resnet50-new.txt 2>&1
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
f=$L/trace-resnet50-new.txt; head -10 $f | cut -c1-150; grep -E "batch|statistics|finalize|apply|reduce" $f | cut -c1-170; tail -1 $f
gzip $L/trace-*.json
echo "headline from ${SECONDS}s"
timeout $(( 590 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -3 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
