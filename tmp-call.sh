#!/usr/bin/env bash
# Device call: the nvJPEG test's figures (its pixels against libjpeg's); the GPU loader against
# torchvision's GPU decode with transforms and its decode alone (3 alternating repeats);
# ResNet-50 on the same files decoded on the CPU threads and on the GPU, beside the synthetic rate.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 370 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 250 cmake --build build-gpu -j16 --target resnet50_benchmark gpu_loader_bench make_jpeg_folder test_train_image_folder; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -120; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done
timeout "$(cap 30)" build-gpu/tests/torch/test_train_image_folder "JPEGs decoded by nvJPEG*" >"$OUT/logs/nvjpeg-test.txt" 2>&1
echo "nvjpeg test rc=$?"; grep -E "nvJPEG vs|passed|failed" "$OUT/logs/nvjpeg-test.txt"
wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data ready after $(( $(date +%s) - start )) s"
timeout "$(cap 110)" benchmarks/gpu_loader_side_by_side.sh build-gpu $data 3 8 20 >"$OUT/logs/loader-gpu.txt" 2>&1
echo "loader side by side rc=$?"; tail -5 "$OUT/logs/loader-gpu.txt"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6)
for decode in cpu gpu; do
  timeout "$(cap 75)" build-gpu/apps/resnet50_benchmark "${common[@]}" --data $data --decode $decode --loader-threads 16 \
    --compare-synthetic --json "$OUT/logs/train-$decode.json" >"$OUT/logs/train-$decode.txt" 2>&1
  echo "train decode $decode rc=$?"; grep -E "^Throughput|On synthetic|input-bound|rror" "$OUT/logs/train-$decode.txt" | head -5
done
echo "done after $(( $(date +%s) - start )) s"
finish
