#!/usr/bin/env bash
# Device call: the whole GPU tree (thread-local graph capture, the decode stream at high
# priority, the reworked nvJPEG tests) and every single-GPU test; ResNet-50 on JPEGs decoded by
# nvJPEG beside the synthetic rate (2 repeats); the GPU loader against torchvision's GPU decode
# fed by a thread pool (3 alternating repeats).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 560 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 300 cmake --build build-gpu -j16; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -120; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done
timeout "$(cap 220)" ctest --test-dir build-gpu -L '^gpu$' -j4 --output-on-failure >"$OUT/logs/ctest-gpu.txt" 2>&1
echo "ctest rc=$? after $(( $(date +%s) - start )) s"
grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout" "$OUT/logs/ctest-gpu.txt" | head -20
grep -E "nvJPEG vs" "$OUT/logs/ctest-gpu.txt"
wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
echo "data ready after $(( $(date +%s) - start )) s"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6)
for r in 1 2; do
  timeout "$(cap 80)" build-gpu/apps/resnet50_benchmark "${common[@]}" --data $data --decode gpu --loader-threads 8 \
    --compare-synthetic --json "$OUT/logs/train-gpu-decode-$r.json" >"$OUT/logs/train-gpu-decode-$r.txt" 2>&1
  echo "train $r rc=$?"; grep -E "^Throughput|On synthetic|input-bound|rror" "$OUT/logs/train-gpu-decode-$r.txt" | head -5
done
timeout "$(cap 150)" benchmarks/gpu_loader_side_by_side.sh build-gpu $data 3 8 20 >"$OUT/logs/loader-gpu.txt" 2>&1
echo "loader side by side rc=$?"; tail -6 "$OUT/logs/loader-gpu.txt"
echo "done after $(( $(date +%s) - start )) s"
finish
