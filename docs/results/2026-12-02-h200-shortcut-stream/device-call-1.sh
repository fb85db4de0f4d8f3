#!/usr/bin/env bash
# Device call 1 (one H200): the folded ResNet's shortcut convolution on a second stream
# (ConcurrentBranch), tree $GPUPERF_COMMIT. While it builds, probe_batch1_convs.py times batch 1's
# 3x3 convolutions and the stem's weight layouts. Then the [gpu] tests of test_fusion and
# test_inference (the call stops if one fails); ResNet-50 inference fp16 alternating serial
# (GPUPERF_EXPERIMENT_SERIAL_BRANCH=1: the branch in place) / concurrent, 3 runs each at batch 1
# and 8, one each at 256; a kernel trace at batch 1 of each.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
D=docs/results/2026-12-02-h200-shortcut-stream
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
( cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1 &&
  timeout 330 cmake --build build-gpu -j15 --target inference_benchmark test_fusion test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s" ) &
timeout 200 python3 $D/probe_batch1_convs.py > $L/probe-batch1-convs.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"
wait
grep -E "error|FAILED" $L/build.txt | head -20
for t in test_fusion test_inference; do
  timeout 150 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; rc=$?; echo "$t [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
  if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/$t-gpu.txt | head -80; tar czf $OUT/logs.tgz -C $OUT logs; exit 1; fi
done
B=build-gpu/examples
I=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8 --warmup 20 --iterations 400 --quiet)
for r in 1 2 3; do
  GPUPERF_EXPERIMENT_SERIAL_BRANCH=1 timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-serial-$r.json > /dev/null
  timeout 40 $B/inference_benchmark "${I[@]}" --json $L/infer-branch-$r.json > /dev/null
  echo "infer repeat $r at ${SECONDS}s"
done
I256=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 256 --warmup 10 --iterations 50 --quiet)
GPUPERF_EXPERIMENT_SERIAL_BRANCH=1 timeout 60 $B/inference_benchmark "${I256[@]}" --json $L/infer256-serial-1.json > /dev/null
timeout 60 $B/inference_benchmark "${I256[@]}" --json $L/infer256-branch-1.json > /dev/null
TR=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1 --warmup 20 --iterations 50 --quiet --json '')
GPUPERF_EXPERIMENT_SERIAL_BRANCH=1 timeout 60 $B/inference_benchmark "${TR[@]}" --kernel-trace $L/trace-infer-b1-serial.json > /dev/null
timeout 60 $B/inference_benchmark "${TR[@]}" --kernel-trace $L/trace-infer-b1-branch.json > /dev/null; echo "traces at ${SECONDS}s"
for v in serial branch; do
  python3 benchmarks/python/profile_step.py --trace $L/trace-infer-b1-$v.json --steps 10 --batch-size 1 --top 25 > $L/trace-infer-b1-$v.txt 2>&1
done
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
cat $L/probe-batch1-convs.txt
for v in serial branch; do head -1 $L/trace-infer-b1-$v.txt | cut -c1-150; tail -2 $L/trace-infer-b1-$v.txt; done
gzip $L/trace-*.json
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
