#!/usr/bin/env bash
# Device call (the session's last 240 s): ResNet-50 on nvJPEG-decoded files with the loader
# threads decoding half of each batch (--host-decode-share 0.5), one run, printed as it ends.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
start=$(date +%s)
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 140 cmake --build build-gpu -j16 --target resnet50_benchmark make_jpeg_folder; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
[ $rc -ne 0 ] && { tail -20 "$OUT/logs/build.log"; exit 1; }
data=/tmp/imnet; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >/dev/null 2>&1 & done; wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data ready after $(( $(date +%s) - start )) s"
build-gpu/apps/resnet50_benchmark --model resnet50 --batch-size 256 --precision fp16 \
  --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 10 --steps-per-window 10 --windows 4 \
  --data $data --decode gpu --host-decode-share 0.5 --loader-threads 16 --no-telemetry \
  --json "$OUT/logs/train-share-0.5.json" 2>&1 | tee "$OUT/logs/train-share-0.5.txt" | grep -E "^Throughput|input-bound|rror|loss"
echo "done after $(( $(date +%s) - start )) s"
