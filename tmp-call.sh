#!/usr/bin/env bash
# Device call: nvJPEG decoding 1, 2 or 3 loader batches per call beside ResNet-50 training
# (temporary switch), and a kernel trace (Kineto/CUPTI: every stream's kernels and copies) of
# training on nvJPEG-decoded files.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 400 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 250 cmake --build build-gpu -j16 --target resnet50_benchmark make_jpeg_folder; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -120; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done
wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data ready after $(( $(date +%s) - start )) s"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 8 --data $data --loader-threads 16 --compare-synthetic)
run() {  # name, env assignment or -, flags...
  local name=$1 envs=$2; shift 2
  if [ "$envs" = - ]; then envs=GPUPERF_UNUSED=1; fi
  timeout "$(cap 70)" env $envs build-gpu/apps/resnet50_benchmark "${common[@]}" "$@" \
    --json "$OUT/logs/train-$name.json" >"$OUT/logs/train-$name.txt" 2>&1
  echo "$name rc=$?: $(grep -E '^On synthetic' "$OUT/logs/train-$name.txt")"
  python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['metrics']; print('   ', {k.replace('loader_gpu_',''): round(v,3) for k,v in m.items() if k.startswith('loader_gpu_') and ('seconds' in k or 'capacity' in k)})" "$OUT/logs/train-$name.json" 2>/dev/null
}
run gpu-1-traced - --decode gpu --kernel-trace "$OUT/logs/trace-gpu-1.json"
for r in 1 2; do
  run gpu-per-call-2-$r GPUPERF_TMP_BATCHES_PER_CALL=2 --decode gpu
  run gpu-per-call-1-$r - --decode gpu
  run gpu-per-call-3-$r GPUPERF_TMP_BATCHES_PER_CALL=3 --decode gpu
done
run gpu-per-call-2-traced GPUPERF_TMP_BATCHES_PER_CALL=2 --decode gpu --kernel-trace "$OUT/logs/trace-gpu-2.json"
gzip -f "$OUT"/logs/trace-*.json 2>/dev/null
echo "done after $(( $(date +%s) - start )) s"
finish
