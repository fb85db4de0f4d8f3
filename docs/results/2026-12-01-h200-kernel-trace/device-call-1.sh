#!/usr/bin/env bash
# Device call 1 (one H200): the cuDNN max-pool against ATen's (GPUPERF_EXPERIMENT_POOL=aten, a
# switch of this call's tree only) and cuDNN autotuning over every engine
# (GPUPERF_EXPERIMENT_BENCHMARK_LIMIT=0, PyTorch's default is 10), alternating, in ResNet-50
# training and inference; Kineto kernel traces of gpuperf's steps (--kernel-trace) beside
# torch.profiler's of torch.compile's, classified by one script; the [gpu] tests of the new code.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
D=docs/results/2026-12-01-h200-kernel-trace
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 240 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -5
B=build-gpu/examples
timeout 120 build-gpu/tests/test_fusion "[gpu]" -s 2>&1 | grep -E "max-pool gradient equals|test cases|assertions|FAILED|failed" > $L/test-fusion-gpu.txt; echo "test_fusion [gpu] at ${SECONDS}s"; cat $L/test-fusion-gpu.txt
R=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry)
for r in 1 2; do
  GPUPERF_EXPERIMENT_POOL=aten timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-atenpool-$r.json > /dev/null
  timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-cudnnpool-$r.json > /dev/null
  GPUPERF_EXPERIMENT_BENCHMARK_LIMIT=0 timeout 90 $B/resnet50_benchmark "${R[@]}" --json $L/train-cudnnpool-limit0-$r.json > /dev/null
  echo "train repeat $r at ${SECONDS}s"
done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf.json > /dev/null; echo "trace rc=$?"
GPUPERF_EXPERIMENT_POOL=aten timeout 60 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf-atenpool.json > /dev/null
timeout 60 $B/seed_benchmark --model simple --batch-size 256 --precision bf16 --optimizer adam --lr 1e-3 --steps-per-window 20 --windows 1 --quiet --no-telemetry --json '' --kernel-trace $L/trace-seed-gpuperf.json > /dev/null
echo "traces at ${SECONDS}s"
I=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8,256 --warmup 20 --iterations 200 --quiet)
for r in 1 2; do
  GPUPERF_EXPERIMENT_POOL=aten timeout 60 $B/inference_benchmark "${I[@]}" --json $L/infer-atenpool-$r.json > /dev/null
  timeout 60 $B/inference_benchmark "${I[@]}" --json $L/infer-cudnnpool-$r.json > /dev/null
  GPUPERF_EXPERIMENT_BENCHMARK_LIMIT=0 timeout 90 $B/inference_benchmark "${I[@]}" --json $L/infer-cudnnpool-limit0-$r.json > /dev/null
  echo "infer repeat $r at ${SECONDS}s"
done
P=benchmarks/python/profile_step.py
for f in $L/trace-*.json; do
  n=$(basename $f .json); steps=5; b=256; [[ $n == *seed* ]] && steps=20
  python3 $P --trace $f --steps $steps --batch-size $b --top 25 > $L/$n.txt 2>&1
done
timeout $(( 560 - SECONDS )) python3 $P --model resnet50 --compile reduce-overhead --steps 5 --top 25 > $L/trace-resnet50-compile-ro.txt 2>&1; echo "compile profile rc=$? at ${SECONDS}s"
timeout $(( 580 - SECONDS )) python3 $P --model simple --memory-format contiguous --optimizer adam --precision bf16 --compile reduce-overhead --steps 20 --top 25 > $L/trace-seed-compile-ro.txt 2>&1; echo "seed compile profile rc=$? at ${SECONDS}s"
echo "== summary"; python3 $D/summarize_call.py $L
for f in $L/trace-*.txt; do echo "== $(basename $f)"; head -14 $f; tail -1 $f; done
gzip $L/trace-*.json
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
