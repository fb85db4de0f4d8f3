#!/usr/bin/env bash
# Device call 3 (one H200): call 2's tree with the cast node's unused gradients left undefined.
# Build, the [gpu] tests of test_fusion (the call stops if they fail), training and inference
# alternating baseline (GPUPERF_EXPERIMENT_BASELINE=1: this session's changes off) / new, kernel
# traces, the [gpu] tests of test_train and test_inference, then the headline's ResNet-50
# training section (benchmarks/headline.sh, 3 alternating repeats against eager and
# torch.compile) in the time left.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
timeout 120 build-gpu/tests/test_fusion "[gpu]" > $L/test_fusion-gpu.txt 2>&1; rc=$?; echo "test_fusion [gpu] rc=$rc at ${SECONDS}s"; tail -3 $L/test_fusion-gpu.txt
if [ $rc -ne 0 ]; then grep -B3 -A14 FAILED $L/test_fusion-gpu.txt | head -80; tar czf $OUT/logs.tgz -C $OUT logs; exit 1; fi
B=build-gpu/examples
R=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry)
for r in 1 2 3; do
  GPUPERF_EXPERIMENT_BASELINE=1 timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-baseline-$r.json > /dev/null
  timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-new-$r.json > /dev/null
  echo "train repeat $r at ${SECONDS}s"
done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf.json > /dev/null; echo "trace rc=$? at ${SECONDS}s"
for t in test_train test_inference; do
  timeout 120 build-gpu/tests/$t "[gpu]" > $L/$t-gpu.txt 2>&1; echo "$t [gpu] rc=$? at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
done
I=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8 --warmup 20 --iterations 400 --quiet)
for r in 1 2 3; do
  GPUPERF_EXPERIMENT_BASELINE=1 timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-baseline-$r.json > /dev/null
  timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-new-$r.json > /dev/null
  echo "infer repeat $r at ${SECONDS}s"
done
I256=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 256 --warmup 10 --iterations 50 --quiet)
GPUPERF_EXPERIMENT_BASELINE=1 timeout 60 $B/inference_benchmark "${I256[@]}" --json $L/infer256-baseline-1.json > /dev/null
timeout 60 $B/inference_benchmark "${I256[@]}" --json $L/infer256-new-1.json > /dev/null
timeout 60 $B/inference_benchmark --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1 --warmup 20 --iterations 50 --quiet --json '' --kernel-trace $L/trace-infer-b1.json > /dev/null
python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-gpuperf.json --steps 5 --batch-size 256 --top 30 > $L/trace-resnet50-gpuperf.txt 2>&1
python3 benchmarks/python/profile_step.py --trace $L/trace-infer-b1.json --steps 10 --batch-size 1 --top 25 > $L/trace-infer-b1.txt 2>&1
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
for f in $L/trace-*.txt; do echo "== $(basename $f)"; head -10 $f | cut -c1-150; grep -E "pool|pad_|cast_kernel" $f | cut -c1-150; tail -1 $f; done
gzip $L/trace-*.json
echo "headline from ${SECONDS}s"
timeout $(( 592 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -3 $L/headline.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
