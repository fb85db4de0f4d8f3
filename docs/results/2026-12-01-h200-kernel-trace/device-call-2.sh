#!/usr/bin/env bash
# Device call 2 (one H200): conv1 + shortcut as one GEMM node (conv1x1_and_shortcut) against
# autograd's data gradient + add (GPUPERF_EXPERIMENT_JUNCTION=aten, a switch of this call's tree
# only), alternating, 2 repeats; kernel traces of the ResNet-50 step, of the seed step in both
# memory formats and of batch-1 inference; the seed in both formats; the [gpu] tests.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
D=docs/results/2026-12-01-h200-kernel-trace
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -5
B=build-gpu/examples
for t in test_fusion test_train test_inference test_infer; do
  [[ -x build-gpu/tests/$t ]] && timeout 100 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1
  echo "$t [gpu] rc=$? at ${SECONDS}s: $(grep -E 'test cases|All tests passed' $L/$t-gpu.txt | tail -1)"
done
grep -E "FAILED|with expansion|: fused" $L/test_fusion-gpu.txt | head -20
R=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry)
for r in 1 2; do
  GPUPERF_EXPERIMENT_JUNCTION=aten timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-add-$r.json > /dev/null
  timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-gemm-$r.json > /dev/null
  echo "train repeat $r at ${SECONDS}s"
done
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf.json > /dev/null; echo "trace rc=$?"
S=(--model simple --batch-size 256 --precision bf16 --optimizer adam --lr 1e-3 --quiet --no-telemetry)
for r in 1 2; do
  for f in contiguous channels_last; do
    timeout 60 $B/seed_benchmark "${S[@]}" --memory-format $f --json $L/seed-$f-$r.json > /dev/null
  done
done
for f in contiguous channels_last; do
  timeout 60 $B/seed_benchmark "${S[@]}" --memory-format $f --steps-per-window 20 --windows 1 --json '' --kernel-trace $L/trace-seed-$f.json > /dev/null
done
echo "seed at ${SECONDS}s"
I=(--model resnet50 --precision fp16 --memory-format channels_last --warmup 20 --iterations 200 --quiet)
timeout 60 $B/inference_benchmark "${I[@]}" --batch-sizes 1,8,256 --json $L/infer-1.json > /dev/null
timeout 60 $B/inference_benchmark "${I[@]}" --batch-sizes 1 --json '' --kernel-trace $L/trace-infer-b1.json > /dev/null; echo "infer trace rc=$? at ${SECONDS}s"
P=benchmarks/python/profile_step.py
python3 $P --trace $L/trace-resnet50-gpuperf.json --steps 5 --batch-size 256 --top 30 > $L/trace-resnet50-gpuperf.txt 2>&1
for f in contiguous channels_last; do python3 $P --trace $L/trace-seed-$f.json --steps 20 --batch-size 256 --top 20 > $L/trace-seed-$f.txt 2>&1; done
python3 $P --trace $L/trace-infer-b1.json --steps 10 --batch-size 1 --top 40 > $L/trace-infer-b1.txt 2>&1
echo "== summary"; python3 $D/summarize_call.py $L
for f in $L/trace-*.txt; do echo "== $(basename $f)"; head -11 $f; tail -1 $f; done
gzip $L/trace-*.json
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
