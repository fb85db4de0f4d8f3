#!/usr/bin/env bash
# Device call: the GPU tree again (thread-local graph capture, the peer's file bytes as arrays,
# the nvJPEG test's diagnostics); the image-folder tests; the GPU loader against torchvision's GPU
# decode; ResNet-50 on JPEGs decoded by nvJPEG beside the synthetic rate.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 540 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark gpu_loader_bench make_jpeg_folder test_train_image_folder; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -120; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done
timeout "$(cap 60)" build-gpu/tests/torch/test_train_image_folder >"$OUT/logs/image-folder-tests.txt" 2>&1
echo "image folder tests rc=$?"; grep -E "nvJPEG vs|batch [0-9]|loader_gpu|passed|failed|FAILED|with expansion" -A2 "$OUT/logs/image-folder-tests.txt" | head -60
wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data ready after $(( $(date +%s) - start )) s"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6)
timeout "$(cap 100)" build-gpu/apps/resnet50_benchmark "${common[@]}" --data $data --decode gpu --loader-threads 8 \
  --compare-synthetic --json "$OUT/logs/train-gpu-decode.json" >"$OUT/logs/train-gpu-decode.txt" 2>&1
echo "train rc=$?"; grep -E "^Throughput|On synthetic|input-bound|rror|graph" "$OUT/logs/train-gpu-decode.txt" | head
python3 -c "
import json; r = json.load(open('$OUT/logs/train-gpu-decode.json')); m = r['metrics']
print({k: round(v, 4) for k, v in m.items() if k.startswith('loader') or 'synthetic' in k or 'loss' in k})" 2>&1 | head -5
timeout "$(cap 200)" benchmarks/gpu_loader_side_by_side.sh build-gpu $data 3 8 20 >"$OUT/logs/loader-gpu.txt" 2>&1
echo "loader side by side rc=$?"; tail -6 "$OUT/logs/loader-gpu.txt"
echo "done after $(( $(date +%s) - start )) s"
finish
