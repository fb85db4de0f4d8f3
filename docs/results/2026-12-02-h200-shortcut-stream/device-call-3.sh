#!/usr/bin/env bash
# Device call 3 (one H200), tree $GPUPERF_COMMIT: inference lets cuDNN time its algorithms only
# from --cudnn-benchmark-from (default 16) up. Build; the [gpu] tests of test_fusion and
# test_inference (the call stops if one fails); ResNet-50 inference fp16 at batch sizes 1 to 256,
# 3 alternating repeats of three arms: autotuned everywhere (--cudnn-benchmark-from 1), heuristics
# everywhere (--no-cudnn-benchmark), the default; then the PyTorch peer at batch 1 and 8 with the
# same two policies (graph: 2 alternating runs each; compile-graph: 1 each).
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target inference_benchmark test_fusion test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -20
for t in test_inference test_fusion; do
  timeout 150 build-gpu/tests/$t "[gpu]~[gpu2]" > $L/$t-gpu.txt 2>&1; rc=$?; echo "$t [gpu] rc=$rc at ${SECONDS}s"; tail -2 $L/$t-gpu.txt
  if [ $rc -ne 0 ]; then grep -B3 -A16 FAILED $L/$t-gpu.txt | head -80; tar czf $OUT/logs.tgz -C $OUT logs; exit 1; fi
done
B=build-gpu/examples
I=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,2,4,8,16,32,64,128,256 --warmup 20 --iterations 200 --quiet)
for r in 1 2 3; do
  timeout 90 $B/inference_benchmark "${I[@]}" --cudnn-benchmark-from 1 --json $L/infer-tuned-$r.json > /dev/null
  timeout 90 $B/inference_benchmark "${I[@]}" --no-cudnn-benchmark --json $L/infer-heuristic-$r.json > /dev/null
  timeout 90 $B/inference_benchmark "${I[@]}" --json $L/infer-default-$r.json > /dev/null
  echo "infer repeat $r at ${SECONDS}s"
done
echo "== gpuperf"; python3 docs/results/2026-12-01-h200-own-kernels/summarize_call.py $L
P=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8 --warmup 20 --iterations 200)
for r in 1 2; do
  for from in 1 16; do
    timeout 120 python3 benchmarks/python/infer_peer.py "${P[@]}" --mode graph --cudnn-benchmark-from $from | sed "s/^{/{\"from\": $from, \"repeat\": $r, /" >> $L/peer.jsonl 2>> $L/peer.err
  done
  echo "peer graph repeat $r at ${SECONDS}s"
done
for from in 1 16; do
  timeout 200 python3 benchmarks/python/infer_peer.py "${P[@]}" --mode compile-graph --cudnn-benchmark-from $from | sed "s/^{/{\"from\": $from, \"repeat\": 1, /" >> $L/peer.jsonl 2>> $L/peer.err
  echo "peer compile-graph from $from at ${SECONDS}s"
done
echo "== peer (p50 ms)"
python3 - $L/peer.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(f"{d['mode']:14s} from {d['from']:>2} repeat {d['repeat']} b{d['batch_size']:<3} p50 {1e3 * d['p50_s']:.3f} ms")
PY
tail -3 $L/peer.err
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
