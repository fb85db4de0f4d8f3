#!/usr/bin/env bash
# Device call (temporary): call 1-2 (commits 861650d, a51d807): nvJPEG's hardware decoder writing
# YCbCr planes that the resize kernel converts against its interleaved RGB
# (GPUPERF_TMP_INTERLEAVED=1), with and without its pipeline (GPUPERF_TMP_NO_PIPELINE=1); call 3:
# one, two and three decode threads (--gpu-decode-threads), feeding ResNet-50; the nvJPEG tests.
# `bash tmp-call.sh tests` (call 4): build everything, every single-GPU test, then GPU decode alone
# and with the host decoding 0.25 or 0.5 of each batch; `bash tmp-call.sh peers` (call 5): PyTorch's
# ResNet-50 (torch.compile default) on synthetic batches and fed by torchvision's GPU decode, eager
# fed by DataLoader + PIL, beside gpuperf's GPU decode. `bash tmp-call.sh tests`: build everything, every single-GPU test.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( ${BUDGET:-540} - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
if [ "${1:-}" = tests ]; then
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release && timeout 300 cmake --build build-gpu -j16; } >"$OUT/logs/build.log" 2>&1
  rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
  if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -120; finish; exit 1; fi
  timeout "$(cap 400)" ctest --test-dir build-gpu -L '^gpu$' -j4 --output-on-failure >"$OUT/logs/ctest-gpu.txt" 2>&1
  echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/logs/ctest-gpu.txt" | head -40
  mode=final
else
  mode=${1:-ab}
fi
if [ "$mode" = ab ]; then
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 260 cmake --build build-gpu -j16 --target resnet50_benchmark make_jpeg_folder test_train_image_folder; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -120; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
  --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done
[ -n "${SKIP_TESTS:-}" ] || timeout "$(cap 90)" build-gpu/tests/torch/test_train_image_folder "JPEGs decoded by nvJPEG*,nvJPEG's YCbCr planes*,the GPU path meets*,image folder batches on a GPU*" >"$OUT/logs/nvjpeg-test.txt" 2>&1
echo "nvjpeg tests rc=$?"; grep -E "nvJPEG|sampling|passed|failed|FAILED|with expansion" -A0 "$OUT/logs/nvjpeg-test.txt" | head -40
wait
for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
fi
if [ "$mode" = peers ]; then  # after a `tests` call on the warm machine: its build and files
  data=/tmp/imnet
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
    timeout 260 cmake --build build-gpu -j16 --target resnet50_benchmark make_jpeg_folder; } >"$OUT/logs/build.log" 2>&1
  echo "build rc=$? after $(( $(date +%s) - start )) s"
fi
if [ "$mode" = final ] || { [ "$mode" = peers ] && [ ! -d /tmp/imnet ]; }; then
  data=/tmp/imnet; rm -rf "$data" /tmp/imnet-part-*; mkdir -p "$data"
  for g in 1 2 3 4 5 6 7 8; do build-gpu/benchmarks/make_jpeg_folder --out /tmp/imnet-part-$g \
    --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done; wait
  for g in 1 2 3 4 5 6 7 8; do for c in /tmp/imnet-part-$g/*/; do mv "$c" "$data/g${g}_$(basename "$c")"; done; done
fi
echo "data ready after $(( $(date +%s) - start )) s"
common=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd
        --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6 --data $data --loader-threads 16 --compare-synthetic)
train() {  # name, env..., -- extra args...
  local name=$1; shift; local envs=(); while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  timeout "$(cap 70)" env "${envs[@]}" build-gpu/apps/resnet50_benchmark "${common[@]}" --decode gpu "$@" \
    --json "$OUT/logs/$name.json" >"$OUT/logs/$name.txt" 2>&1
  echo "$name rc=$?: $(grep -E '^On synthetic' "$OUT/logs/$name.txt")"
  python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['metrics']; print('   ', {k.replace('loader_gpu_',''): round(v,3) for k,v in m.items() if k.startswith('loader_gpu_') and ('seconds' in k or 'decoded' in k)})" "$OUT/logs/$name.json" 2>/dev/null
}
if [ "$mode" = ab ]; then
  train threads-1-1 X=1 -- --gpu-decode-threads 1
  train threads-2-1 X=1 -- --gpu-decode-threads 2
  train threads-3-1 X=1 -- --gpu-decode-threads 3
  train threads-2-share-0.25-1 X=1 -- --gpu-decode-threads 2 --host-decode-share 0.25
  train threads-1-2 X=1 -- --gpu-decode-threads 1
  train threads-2-2 X=1 -- --gpu-decode-threads 2
  train threads-3-2 X=1 -- --gpu-decode-threads 3
  train threads-2-share-0.25-2 X=1 -- --gpu-decode-threads 2 --host-decode-share 0.25
  train threads-1-3 X=1 -- --gpu-decode-threads 1
  train threads-2-3 X=1 -- --gpu-decode-threads 2
  train threads-3-3 X=1 -- --gpu-decode-threads 3
  train threads-2-share-0.25-3 X=1 -- --gpu-decode-threads 2 --host-decode-share 0.25
fi
if [ "$mode" = final ]; then
  train gpu-1 X=1 --
  train share-0.25-1 X=1 -- --host-decode-share 0.25
  train share-0.5-1 X=1 -- --host-decode-share 0.5
  train gpu-2 X=1 --
  train share-0.25-2 X=1 -- --host-decode-share 0.25
  train share-0.5-2 X=1 -- --host-decode-share 0.5
  train gpu-3 X=1 --
  train share-0.25-3 X=1 -- --host-decode-share 0.25
  train share-0.5-3 X=1 -- --host-decode-share 0.5
fi
if [ "$mode" = peers ]; then
  peer() {  # name, cap, train_peer args...
    local name=$1 t=$2; shift 2
    timeout "$(cap "$t")" python3 benchmarks/python/train_peer.py --model resnet50 --batch-size 256 --precision fp16 \
      --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6 "$@" \
      >"$OUT/logs/$name.json" 2>"$OUT/logs/$name.err"
    echo "$name rc=$?: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(round(r['median'],1), 'img/s, loss', round(r['first_loss'],3), '->', round(r['final_loss'],3), 'compile_s', r.get('compile_s'))" "$OUT/logs/$name.json" 2>&1 | tail -1)"
  }
  peer peer-compile-synthetic 100 --compile default
  peer peer-compile-gpu-decode 90 --compile default --data $data --loader gpu --loader-workers 16
  train gpu-share-0.5-peers X=1 -- --host-decode-share 0.5
  peer peer-eager-dataloader 60 --data $data --loader dataloader --loader-workers 16
fi
echo "done after $(( $(date +%s) - start )) s"
finish
