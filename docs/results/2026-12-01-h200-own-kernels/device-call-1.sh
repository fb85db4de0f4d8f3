#!/usr/bin/env bash
# Device call 1 (one H200): gpuperf's own NHWC max-pool kernels (one-byte window indices) against
# cuDNN's pooling (GPUPERF_EXPERIMENT_CUDNN_POOL=1, a switch of this call's tree only) in
# ResNet-50 training, alternating; small-batch inference variants of the stem and head
# (GPUPERF_EXPERIMENT_STEM / _HEAD_POOL / _HEAD_FC, switches of this call's tree only) and the
# same candidates timed alone in CUDA graphs (probe_small_batch.py); the [gpu] tests; a kernel
# trace of the new training step.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
D=docs/results/2026-12-01-h200-own-kernels
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
grep -E "own CUDA kernels|cuDNN fused" $L/configure.txt
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark inference_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -10
timeout 60 python3 $D/probe_small_batch.py --batches 1,8 > $L/probe-small-batch.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
for t in test_fusion test_train test_inference; do
  timeout 150 build-gpu/tests/$t "[gpu]" > $L/$t-gpu.txt 2>&1; echo "$t [gpu] rc=$? at ${SECONDS}s"; tail -3 $L/$t-gpu.txt
done
B=build-gpu/examples
R=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry)
for r in 1 2; do
  GPUPERF_EXPERIMENT_CUDNN_POOL=1 timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-cudnnpool-$r.json > /dev/null
  timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-ownpool-$r.json > /dev/null
  echo "train repeat $r at ${SECONDS}s"
done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf.json > /dev/null; echo "trace rc=$?"
I=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8 --warmup 20 --iterations 400 --quiet)
for r in 1 2; do
  GPUPERF_EXPERIMENT_CUDNN_POOL=1 timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-cudnnpool-$r.json > /dev/null
  timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-ownpool-$r.json > /dev/null
  GPUPERF_EXPERIMENT_STEM=4 timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-stem4-$r.json > /dev/null
  GPUPERF_EXPERIMENT_HEAD_POOL=view timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-poolview-$r.json > /dev/null
  GPUPERF_EXPERIMENT_HEAD_POOL=avgpool timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-poolavg-$r.json > /dev/null
  GPUPERF_EXPERIMENT_HEAD_FC=mm timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-fcmm-$r.json > /dev/null
  echo "infer repeat $r at ${SECONDS}s"
done
timeout 60 $B/inference_benchmark --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 256 --warmup 10 --iterations 50 --quiet --json $L/infer256-ownpool-1.json > /dev/null
GPUPERF_EXPERIMENT_CUDNN_POOL=1 timeout 60 $B/inference_benchmark --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 256 --warmup 10 --iterations 50 --quiet --json $L/infer256-cudnnpool-1.json > /dev/null
timeout 60 $B/inference_benchmark --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1 --warmup 20 --iterations 50 --quiet --json '' --kernel-trace $L/trace-infer-b1.json > /dev/null
python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-gpuperf.json --steps 5 --batch-size 256 --top 25 > $L/trace-resnet50-gpuperf.txt 2>&1
python3 benchmarks/python/profile_step.py --trace $L/trace-infer-b1.json --steps 10 --batch-size 1 --top 25 > $L/trace-infer-b1.txt 2>&1
echo "== summary"; python3 $D/summarize_call.py $L
echo "== probe"; cat $L/probe-small-batch.txt
for f in $L/trace-*.txt; do echo "== $(basename $f)"; head -12 $f; tail -1 $f; done
gzip $L/trace-*.json
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
