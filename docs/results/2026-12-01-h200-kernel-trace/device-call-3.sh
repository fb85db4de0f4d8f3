#!/usr/bin/env bash
# Device call 3 (one H200): the conv1+shortcut GEMM node with the shortcut's gradient updated in
# place, against autograd's add (GPUPERF_EXPERIMENT_JUNCTION=aten); the seed model channels_last
# inside with fc on the (H, W, C) view and GEMM bias gradients, against the previous fused path
# (GPUPERF_EXPERIMENT_SEED=nchw); the [gpu] tests; then the headline's ResNet-50 training section
# (benchmarks/headline.sh, 3 alternating repeats against eager and torch.compile).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
D=docs/results/2026-12-01-h200-kernel-trace
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark test_fusion test_train > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -5
B=build-gpu/examples
for t in test_fusion test_train; do
  timeout 100 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1
  echo "$t [gpu] rc=$? at ${SECONDS}s: $(grep -E 'test cases|All tests passed' $L/$t-gpu.txt | tail -1)"
done
grep -E "FAILED|: fused" $L/test_fusion-gpu.txt | head -20
R=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 5 --quiet --no-telemetry)
GPUPERF_EXPERIMENT_JUNCTION=aten timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-add-1.json > /dev/null
timeout 60 $B/resnet50_benchmark "${R[@]}" --json $L/train-gemm-1.json > /dev/null
S=(--model simple --batch-size 256 --precision bf16 --optimizer adam --lr 1e-3 --quiet --no-telemetry)
for r in 1 2; do
  GPUPERF_EXPERIMENT_SEED=nchw timeout 60 $B/seed_benchmark "${S[@]}" --json $L/seed-before-$r.json > /dev/null
  timeout 60 $B/seed_benchmark "${S[@]}" --json $L/seed-after-$r.json > /dev/null
done
timeout 60 $B/seed_benchmark "${S[@]}" --steps-per-window 20 --windows 1 --json '' --kernel-trace $L/trace-seed.json > /dev/null
python3 benchmarks/python/profile_step.py --trace $L/trace-seed.json --steps 20 --batch-size 256 --top 25 > $L/trace-seed.txt 2>&1
echo "== A/B at ${SECONDS}s"; python3 $D/summarize_call.py $L; head -10 $L/trace-seed.txt; tail -1 $L/trace-seed.txt
timeout $(( 590 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -3 $L/headline.err
gzip $L/trace-*.json
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
