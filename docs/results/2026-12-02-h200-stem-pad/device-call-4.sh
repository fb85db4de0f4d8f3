#!/usr/bin/env bash
# Device call 4 (one H200): the final tree (the A/B switch removed; the cast kernel on 4-element
# vectors; a 1x1 weight's gradient batched though its strides differ from the weight's along the
# size-1 dimensions). Build, the [gpu] tests of test_fusion, test_train and test_inference, two
# ResNet-50 training runs and a kernel trace, in the session's last device minutes.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 150 cmake --build build-gpu -j16 --target resnet50_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
for t in test_fusion test_train test_inference; do
  timeout 60 build-gpu/tests/$t "[gpu]" > $L/$t-gpu.txt 2>&1; echo "$t [gpu] rc=$? at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
  grep -B3 -A14 FAILED $L/$t-gpu.txt | head -40
done
B=build-gpu/examples
R=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry)
for r in 1 2; do timeout 40 $B/resnet50_benchmark "${R[@]}" --json $L/train-final-$r.json > /dev/null; echo "train $r at ${SECONDS}s"; done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 30 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf.json > /dev/null; echo "trace rc=$? at ${SECONDS}s"
python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-gpuperf.json --steps 5 --batch-size 256 --top 30 > $L/trace-resnet50-gpuperf.txt 2>&1
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
head -10 $L/trace-resnet50-gpuperf.txt | cut -c1-150; grep -E "cast_kernel|direct_copy" $L/trace-resnet50-gpuperf.txt | cut -c1-150; tail -1 $L/trace-resnet50-gpuperf.txt
gzip $L/trace-*.json
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
