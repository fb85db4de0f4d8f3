#!/usr/bin/env bash
# Device call: the GPU tree with --compare-synthetic; ResNet-50 on generated JPEGs with the
# synthetic comparison in the same record (16 loader threads, 2 repeats); the CPU loader against
# DataLoader + ImageFolder + PIL on the host's 16 cores and on one; the image-folder GPU tests.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 330 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 220 cmake --build build-gpu -j16 --target resnet50_benchmark cpu_loader_bench make_jpeg_folder test_train_image_folder; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done; wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data ready after $(( $(date +%s) - start )) s"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6)
for r in 1 2; do
  timeout "$(cap 80)" build-gpu/apps/resnet50_benchmark "${common[@]}" --data $data --loader-threads 16 \
    --compare-synthetic --json "$OUT/logs/compare-$r.json" >"$OUT/logs/compare-$r.txt" 2>&1
  echo "compare $r rc=$?"; grep -E "^Throughput|On synthetic|input-bound" "$OUT/logs/compare-$r.txt"
done
timeout "$(cap 60)" benchmarks/loader_side_by_side.sh build-gpu $data 3 16 30 >"$OUT/logs/loader-16.txt" 2>&1
echo "loader 16 rc=$?"; cat "$OUT/logs/loader-16.txt"
timeout "$(cap 60)" benchmarks/loader_side_by_side.sh build-gpu $data 3 1 6 >"$OUT/logs/loader-1.txt" 2>&1
echo "loader 1 rc=$?"; cat "$OUT/logs/loader-1.txt"
timeout "$(cap 40)" ctest --test-dir build-gpu -R "image folder|JPEG" --output-on-failure >"$OUT/logs/ctest-image.txt" 2>&1
echo "image-folder tests rc=$? after $(( $(date +%s) - start )) s"; grep -E "tests passed|Failed|\*\*\*" "$OUT/logs/ctest-image.txt" | head
finish
