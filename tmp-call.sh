#!/usr/bin/env bash
# Device call: the whole GPU tree with pinned loader buffers and the copy stream; the image-folder
# GPU test; ResNet-50 on generated JPEGs (CPU path, 16 threads) against synthetic batches,
# alternating, and the loader alone; then every single-GPU test (label gpu).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 560 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 330 cmake --build build-gpu -j16; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
ctest --test-dir build-gpu -R "image folder|JPEG" --output-on-failure >"$OUT/logs/ctest-image.txt" 2>&1
echo "image-folder tests rc=$?"; grep -E "tests passed|Failed|\*\*\*" "$OUT/logs/ctest-image.txt" | head
# 6,400 generated ImageNet-like JPEGs: 8 generators at once, 8 classes x 100 images each.
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done; wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data: $(find $data -name '*.jpg' | wc -l) files, $(du -sh $data | cut -f1) after $(( $(date +%s) - start )) s"; cat "$OUT/logs/make-1.txt" | tail -1
nproc
timeout "$(cap 60)" build-gpu/benchmarks/cpu_loader_bench --data $data --threads 16 --batch-size 256 \
  --batches 12 >"$OUT/logs/loader16.txt" 2>&1; echo "loader alone rc=$?"; tail -4 "$OUT/logs/loader16.txt"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6 --quiet)
for r in 1 2; do
  timeout "$(cap 90)" build-gpu/apps/resnet50_benchmark "${common[@]}" --json "$OUT/logs/synthetic-$r.json" \
    >"$OUT/logs/synthetic-$r.txt" 2>&1; echo "synthetic $r rc=$?"
  timeout "$(cap 120)" build-gpu/apps/resnet50_benchmark "${common[@]}" --data $data --loader-threads 16 \
    --json "$OUT/logs/data-$r.json" >"$OUT/logs/data-$r.txt" 2>&1; echo "data $r rc=$?"
done
python3 - "$OUT/logs" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*-[12].json"))):
    m = json.load(open(f)).get("metrics", {})
    keys = [k for k in m if "per_second" in k or k.startswith("loader") or "loss" in k]
    print(os.path.basename(f), {k: round(m[k], 1) if isinstance(m[k], float) else m[k] for k in keys})
PY
timeout "$(cap 250)" ctest --test-dir build-gpu -L '^gpu$' -j4 --output-on-failure >"$OUT/logs/ctest-gpu.txt" 2>&1
echo "ctest rc=$? after $(( $(date +%s) - start )) s"
grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout" "$OUT/logs/ctest-gpu.txt" | head -40
finish
