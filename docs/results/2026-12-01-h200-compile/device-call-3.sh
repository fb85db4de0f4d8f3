#!/usr/bin/env bash
# Device call 3 (one H200): why gpuperf's batch-1 inference is slower than its batch 2 when the
# same folded, fused calls from Python (call 2) are not: inference_benchmark at batch 1 in
# several orders and settings; nsys's kernel summary of batch 1 and of batch 2 where nsys exists.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -20
B=build-gpu/examples/inference_benchmark
common=(--model resnet50 --precision fp16 --memory-format channels_last --warmup 20 --iterations 200 --quiet)
run() { local name=$1; shift; timeout 60 $B "${common[@]}" "$@" --json $L/$name.json > $L/$name.txt 2>&1;
  python3 -c "
import json,sys; r=json.load(open('$L/$name.json'))
print('$name'.ljust(22), ' '.join(f\"b{b['batch_size']}={b['latency']['p50']*1e3:.3f}ms\" for b in r['batches']), r.get('graph', r.get('cuda_graph','')))" 2>&1 | cut -c1-300; }
run default-1-2-8 --batch-sizes 1,2,8
run order-2-1-8 --batch-sizes 2,1,8
run alone-1 --batch-sizes 1
run nobench-1-2 --batch-sizes 1,2 --no-cudnn-benchmark
run eager-fused-1-2 --batch-sizes 1,2 --graph off
python3 - <<PY
import json; r=json.load(open("$L/default-1-2-8.json")); print({k: v for k, v in r.items() if k not in ("batches","device","telemetry")})
PY
if command -v nsys >/dev/null; then
  for b in 1 2; do
    timeout 90 nsys profile -o $L/nsys-$b --force-overwrite true $B "${common[@]}" --batch-sizes $b --iterations 50 > /dev/null 2>&1
    timeout 60 nsys stats --report cuda_gpu_kern_sum --format csv $L/nsys-$b.nsys-rep > $L/kern-$b.csv 2>/dev/null
    echo "== batch $b kernels (top 25 by total time)"; python3 - <<PY
import csv
rows=list(csv.DictReader(l for l in open("$L/kern-$b.csv") if l.count(",")>3))
for r in rows[:25]: print(r.get("Time (%)"), r.get("Total Time (ns)"), r.get("Instances"), r.get("Avg (ns)"), r.get("Name","")[:110])
PY
  done
  rm -f $L/*.nsys-rep $L/*.sqlite
else echo "no nsys here: $(ls /usr/local/cuda*/bin 2>/dev/null | tr '\n' ' ' | cut -c1-300)"; fi
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
