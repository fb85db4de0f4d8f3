#!/usr/bin/env bash
# Device call: nvJPEG decoding two loader batches per call (the new default) against one (the
# temporary switch), the nvJPEG tests through the merged path, and the committed side-by-side
# of CPU, GPU and shared decoding feeding ResNet-50.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 420 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 230 cmake --build build-gpu -j16 --target resnet50_benchmark make_jpeg_folder test_train_image_folder; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -120; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done
timeout "$(cap 60)" build-gpu/tests/torch/test_train_image_folder "JPEGs decoded by nvJPEG*,the GPU path meets*" >"$OUT/logs/nvjpeg-test.txt" 2>&1
echo "nvjpeg tests rc=$?"; grep -E "nvJPEG vs|passed|failed" "$OUT/logs/nvjpeg-test.txt"
wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data ready after $(( $(date +%s) - start )) s"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6 --data $data --loader-threads 16 --compare-synthetic)
one_per_call() {
  timeout "$(cap 60)" env GPUPERF_TMP_BATCHES_PER_CALL=1 build-gpu/apps/resnet50_benchmark "${common[@]}" --decode gpu \
    --json "$OUT/logs/gpu-per-call-1-$1.json" >"$OUT/logs/gpu-per-call-1-$1.txt" 2>&1
  echo "one batch per call ($1) rc=$?: $(grep -E '^On synthetic' "$OUT/logs/gpu-per-call-1-$1.txt")"
}
one_per_call 1
timeout "$(cap 200)" benchmarks/decode_share_side_by_side.sh build-gpu $data "$OUT/logs/side-by-side" 2 16 0.25
echo "side by side rc=$?"
one_per_call 2
for f in "$OUT"/logs/side-by-side/gpu-*.json; do python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['metrics']; print(sys.argv[1].split('/')[-1], {k.replace('loader_gpu_',''): round(v,3) for k,v in m.items() if k.startswith('loader_gpu_') and ('seconds' in k or 'capacity' in k or 'per_call' in k or 'peak' in k)})" "$f"; done
echo "done after $(( $(date +%s) - start )) s"
finish
