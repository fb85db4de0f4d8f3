#!/usr/bin/env bash
# Device call 4 (one H200): gpuperf's fused inference also doubles its time at batch 1 eagerly
# (1.78 vs 0.96 ms, call 3), so it runs other kernels there: list them with Nsight Compute (one
# eager call, cuDNN benchmark off so that no autotuning kernels run), batch 1 against batch 2.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
NCU=$(ls /usr/local/cuda*/bin/ncu | head -1)
B=build-gpu/examples/inference_benchmark
for b in 1 2; do
  timeout 150 $NCU --csv --metrics gpu__time_duration.sum --launch-count 300 $B --model resnet50 --precision fp16 \
    --memory-format channels_last --graph off --no-cudnn-benchmark --warmup 0 --iterations 1 --batch-sizes $b --quiet \
    > $L/ncu-$b.csv 2> $L/ncu-$b.err; echo "ncu batch $b rc=$? at ${SECONDS}s"
  python3 - $L/ncu-$b.csv $b <<'PY'
import csv, sys, collections
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')) if r.get("Metric Name") == "gpu__time_duration.sum"]
# one eager call = the second half of the kernels (the first call is the untimed first call)
seq = [(r["Kernel Name"][:90], float(r["Metric Value"])) for r in rows]
print(f"batch {sys.argv[2]}: {len(seq)} kernels")
agg = collections.OrderedDict()
for n, t in seq:
    c, s = agg.get(n, (0, 0.0)); agg[n] = (c + 1, s + t)
for n, (c, s) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:30]:
    print(f"{c:4d} {s/1e3:9.1f} us  {n}")
PY
done
tail -3 $L/ncu-1.err
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
