#!/usr/bin/env bash
# Device call 2 (one H200), tree $GPUPERF_COMMIT (call 1's code). Call 1's traces showed the two
# arms running different kernels: cuDNN's per-process autotuning, not the branch, decided the
# difference. Here ResNet-50 inference fp16 at batch 1 and 8, 3 alternating repeats of four arms:
# cuDNN autotuning on / off (--no-cudnn-benchmark: cuDNN's heuristics, the same choice in every
# process) x serial (GPUPERF_EXPERIMENT_SERIAL_BRANCH=1) / concurrent shortcut; one run of each
# at batch 256; kernel traces at batch 1 with autotuning off, serial and concurrent.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
B=build-gpu/examples
I=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8 --warmup 20 --iterations 400 --quiet)
arm() {  # arm <unused> <serial 0|1> <cuDNN autotuning on|off> <args...>
  local serial=$2 bench=--cudnn-benchmark; [ "$3" = off ] && bench=--no-cudnn-benchmark; shift 3
  if [ "$serial" = 1 ]; then
    GPUPERF_EXPERIMENT_SERIAL_BRANCH=1 timeout 60 $B/inference_benchmark "$@" $bench > /dev/null
  else
    timeout 60 $B/inference_benchmark "$@" $bench > /dev/null
  fi
}
for r in 1 2 3; do
  arm x 1 on "${I[@]}" --json $L/infer-tuned-serial-$r.json
  arm x 0 on "${I[@]}" --json $L/infer-tuned-branch-$r.json
  arm x 1 off "${I[@]}" --json $L/infer-heuristic-serial-$r.json
  arm x 0 off "${I[@]}" --json $L/infer-heuristic-branch-$r.json
  echo "infer repeat $r at ${SECONDS}s"
done
I256=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 256 --warmup 10 --iterations 50 --quiet)
arm x 1 on "${I256[@]}" --json $L/infer256-tuned-serial-1.json
arm x 0 on "${I256[@]}" --json $L/infer256-tuned-branch-1.json
arm x 1 off "${I256[@]}" --json $L/infer256-heuristic-serial-1.json
arm x 0 off "${I256[@]}" --json $L/infer256-heuristic-branch-1.json
echo "b256 at ${SECONDS}s"
TR=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1 --warmup 20 --iterations 50 --quiet --json '')
arm x 1 off "${TR[@]}" --kernel-trace $L/trace-infer-b1-heuristic-serial.json
arm x 0 off "${TR[@]}" --kernel-trace $L/trace-infer-b1-heuristic-branch.json
for v in heuristic-serial heuristic-branch; do
  python3 benchmarks/python/profile_step.py --trace $L/trace-infer-b1-$v.json --steps 10 --batch-size 1 --top 25 > $L/trace-infer-b1-$v.txt 2>&1
done
echo "== summary"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
for v in heuristic-serial heuristic-branch; do head -1 $L/trace-infer-b1-$v.txt | cut -c1-150; tail -2 $L/trace-infer-b1-$v.txt; done
gzip $L/trace-*.json
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
