#!/usr/bin/env bash
# Device call: the tiled resize kernel's GPU tests, then ResNet-50 on JPEG files against synthetic
# batches, --host-decode-share auto and 0 alternating, until DEADLINE seconds from T0.
set -uo pipefail
source .deps/env.sh
T0=${T0:-$(date +%s)}
el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
{ [ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release; } >"$OUT/configure.log" 2>&1
cmake --build build-gpu -j16 --target make_jpeg_folder >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
D=build-gpu/jpeg
if [ ! -d $D/all ]; then
  ( for g in 0 1 2 3 4 5 6 7; do build-gpu/benchmarks/make_jpeg_folder --out $D/g$g --classes 8 \
      --images-per-class 100 --seed $g >/dev/null 2>&1 & done; wait
    mkdir -p $D/all
    for g in 0 1 2 3 4 5 6 7; do for c in $D/g$g/*; do mv "$c" "$D/all/g$g-$(basename "$c")"; done; done ) &
fi
cmake --build build-gpu -j16 --target resnet50_benchmark test_train_image_folder >>"$OUT/build.log" 2>&1 ||
  { grep -B2 -A12 error "$OUT/build.log" | head -60; exit 1; }
wait; echo "built after $(el) s, $(ls $D/all/*/* | wc -l) files"
timeout -k 5 90 build-gpu/tests/torch/test_train_image_folder "[gpu]" >"$OUT/test-gpu.txt" 2>&1
rc=$?; echo "test_train_image_folder [gpu] rc=$rc after $(el) s: $(tail -2 "$OUT/test-gpu.txt" | head -1)"
grep -E "levels|FAILED" "$OUT/test-gpu.txt" | head -20
[ "$rc" = 0 ] || exit 1
i=0
while [ $(( $(el) + 35 )) -lt "${DEADLINE:-280}" ]; do
  i=$((i + 1))
  for s in auto 0; do
    [ $(( $(el) + 35 )) -lt "${DEADLINE:-280}" ] || break
    timeout -k 5 60 build-gpu/apps/resnet50_benchmark --model resnet50 --batch-size 256 --precision fp16 \
      --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 \
      --windows 6 --data $D/all --loader-threads 16 --compare-synthetic --decode gpu \
      --host-decode-share $s --json "$OUT/share-$s-$i.json" >"$OUT/share-$s-$i.txt" 2>&1
    echo "$i share $s rc=$? ($(el) s): $(grep -i 'synthetic batches' "$OUT/share-$s-$i.txt" | tail -1)"
  done
done
tar czf "$OUT/runs.tgz" -C "$OUT" $(cd "$OUT" && ls share-* test-gpu.txt) && (cd "$OUT" && rm -f share-*)
