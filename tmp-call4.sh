#!/usr/bin/env bash
# Device call of the twenty-sixth session (tmp-call2.sh of c0392dd with JPEG configurations
# a<threads>, f<threads>:<share>, c<threads>; ELSE_NOJPEG, ELSE_CFGS), from the repository root with $OUT set; carry [".deps"].
#   bash tmp-call2.sh     build; the GPU tests of the update beside backward (test_amp,
#                         test_models_transformer) and of the GPU loader; Llama 1B alone with
#                         --optimizer-in-backward on and off alternating (AB_ROUNDS, default 3);
#                         then, on an H200 (JPEG=1 anywhere), ResNet-50 on JPEGs at several
#                         loader settings alternating until DEADLINE
#   ON_H100=0 MODE=h200 bash tmp-call2.sh
#                         on an H200 only (else exit 3 at once): build; JPEG runs (JPEG_CFGS, default
#                         "a16 s1") until JPEG_UNTIL (320) s; then Llama 1B side by side with
#                         torch.compile (REPEATS, default 3, power sampled on both sides)
#                         (GEMM=1: on another card, tmp-gemm.cu's timings instead, then exit 3)
#                         (TIMED=1: test_models_transformer's TFILTER tests first; LMOPTS: gpuperf's
#                         extra options in the side by side; ELSE_MODE=a
#                         [ELSE_TARGETS=...]: on another card run that mode instead of exiting;
#                         ELSE_SIDE=1: mode a then runs the side by side too)
#   MODE=jpeg bash tmp-call2.sh   (warm) JPEG runs only
#   MODE=ab TARGETS=lm_benchmark bash tmp-call2.sh   (warm) the Llama A/B alone
#                         (AB_FLAG: the switch A/B'd, default optimizer-in-backward; NOJPEG=1: no
#                         JPEG folder made; TFILTER: test_models_transformer's test filter)
#   MODE=acc bash tmp-call2.sh   (or ON_H100=0 MODE=h200 ELSE_MODE=acc ELSE_TARGETS="lm_benchmark
#                         gpu_info": on another card than an H200) the language-model side by
#                         side in micro-batches: ACC_ROWS (default "gpt2-acc2 gpt2"), ACC_REPEATS
#                         (2), ACC_VARIANTS (default "graph compile")
#   MODE=side bash tmp-call2.sh
#                         (warm) Llama 1B side by side with torch.compile (REPEATS, default 3), power
#                         sampled on both sides (LMOPTS: gpuperf's extra options); then JPEG runs
#                         until DEADLINE
set -uo pipefail
source .deps/env.sh
T0=${T0:-$(date +%s)}
el() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( ${DEADLINE:-585} - $(el) )); }
cap() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
gemm_shapes() {  # Llama 1B's GEMM shapes, cublasGemmEx against cuBLASLt's algorithms (tmp-gemm.cu)
  mkdir -p "$OUT/gemm"
  nvcc -O2 -std=c++17 -arch=sm_90 tmp-gemm.cu -lcublasLt -lcublas -o /tmp/gemm || return
  nvidia-smi --query-gpu=power.draw,clocks.sm --format=csv,noheader -lms 500 >"$OUT/gemm/power.txt" &
  local smi=$!
  timeout 240 /tmp/gemm 20 3 | tee "$OUT/gemm/gemm.txt"
  kill $smi; sort -n "$OUT/gemm/power.txt" | awk 'NR % 25 == 1' | tr '\n' ' '; echo
}
case "$card" in *H200*) h200=1 ;; *) h200=0; [ "${ON_H100:-1}" = 1 ] || [ -n "${ELSE_MODE:-}" ] || {
  echo "not an H200: nothing of this call run"; [ "${GEMM:-0}" = 1 ] && gemm_shapes; exit 3; } ;; esac
# ELSE_MODE: on another card than an H200, run that mode instead (ON_H100=0 ELSE_MODE=a ...)
[ "$h200" = 0 ] && [ -n "${ELSE_MODE:-}" ] && [ "${ON_H100:-1}" = 0 ] && { MODE=$ELSE_MODE; NOJPEG=${ELSE_NOJPEG:-1}; TARGETS=${ELSE_TARGETS:-${TARGETS:-}}; JPEG_CFGS=${ELSE_CFGS:-${JPEG_CFGS:-}}; echo "not an H200: MODE=$MODE"; }
[ -z "${TARGETS:-}" ] && unset TARGETS
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs-${MODE:-a}.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
D=build-gpu/jpeg
{ [ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release; } >"$OUT/logs/configure.log" 2>&1
[ "${NOJPEG:-0}" = 1 ] || cmake --build build-gpu -j16 --target make_jpeg_folder >"$OUT/logs/build.log" 2>&1 || { tail -30 "$OUT/logs/build.log"; finish; exit 1; }
if [ "${NOJPEG:-0}" != 1 ] && [ ! -d $D/all ]; then
  ( for g in 0 1 2 3 4 5 6 7; do build-gpu/benchmarks/make_jpeg_folder --out $D/g$g --classes 8 \
      --images-per-class 100 --seed $g >/dev/null 2>&1 & done; wait
    mkdir -p $D/all
    for g in 0 1 2 3 4 5 6 7; do for c in $D/g$g/*; do mv "$c" "$D/all/g$g-$(basename "$c")"; done; done ) &
fi
tests="test_amp test_models_transformer test_train_image_folder"; [ "${MODE:-a}" = h200 ] && tests=
[ "${MODE:-a}" = h200 ] && [ "${TIMED:-0}" = 1 ] && tests=test_models_transformer
cmake --build build-gpu -j16 --target ${TARGETS:-lm_benchmark gpu_info resnet50_benchmark $tests} >>"$OUT/logs/build.log" 2>&1 || { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; finish; exit 1; }
wait; echo "built after $(el) s, $(ls $D/all/*/* 2>/dev/null | wc -l) files"
if [ "${GPUTEST:-0}" = 1 ]; then  # the GPU loader's tests first
  cmake --build build-gpu -j16 --target test_train_image_folder >>"$OUT/logs/build.log" 2>&1 || { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -60; }
  timeout -k 10 "$(cap 120)" build-gpu/tests/torch/test_train_image_folder "[gpu]" >"$OUT/logs/image-folder-gpu.txt" 2>&1
  echo "test_train_image_folder [gpu] rc=$? ($(el) s): $(tail -2 "$OUT/logs/image-folder-gpu.txt" | head -1)"
  grep -B5 -A25 "FAILED" "$OUT/logs/image-folder-gpu.txt" | head -60
fi
jpeg() {  # one ResNet-50 run on the files: $1 tag, the rest resnet50_benchmark options
  local tag=$1; shift
  timeout -k 5 60 build-gpu/apps/resnet50_benchmark --model resnet50 --batch-size 256 --precision fp16 \
    --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 \
    --windows 6 --data $D/all --compare-synthetic "$@" --json "$OUT/logs/j-$tag.json" >"$OUT/logs/j-$tag.txt" 2>&1
  local rc=$?
  python3 - "$OUT/logs/j-$tag.json" "$tag" "$rc" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1])); m = r["metrics"]
    print(f"{sys.argv[2]}: ratio {m.get('data_to_synthetic_ratio', 0):.4f} share {m.get('loader_host_decode_share', -1):.3f} timed {m.get('loader_host_decode_share_timed', -1):.3f} "
          f"waits {m.get('loader_training_waits', -1):.0f} {m.get('loader_training_wait_seconds', -1):.3f} s "
          f"late {m.get('loader_late_batches', -1):.0f} cap {m.get('loader_capacity_images_per_second', 0):.0f} "
          f"gpuwait {m.get('loader_gpu_thread_loader_wait_seconds', 0):.2f} timed {m.get('loader_gpu_thread_loader_wait_seconds_timed', -1):.2f} loss {r.get('first_loss', 0):.2f}->{r.get('final_loss', 0):.2f}")
except Exception as e:
    print(sys.argv[2], "rc", sys.argv[3], "no record:", e)
PY
}
jpeg_loop() {  # until DEADLINE, or JPEG_UNTIL seconds from the start
  local i=0 until=${JPEG_UNTIL:-100000}
  while [ "$(left)" -gt 40 ] && [ "$(el)" -lt "$until" ]; do
    i=$((i + 1))
    for cfg in ${JPEG_CFGS:-a16 s1 h05}; do
      [ "$(left)" -gt 40 ] && [ "$(el)" -lt "$until" ] || break
      case $cfg in  # a<threads>: auto; f<threads>:<share>: fixed; c<threads>: the CPU path
        a*) jpeg "$cfg-$i" --loader-threads ${cfg#a} --decode gpu --host-decode-share auto ;;
        f*) t=${cfg#f}; jpeg "${cfg/:/s}-$i" --loader-threads ${t%%:*} --decode gpu --host-decode-share ${t#*:} ;;
        c*) jpeg "$cfg-$i" --loader-threads ${cfg#c} --decode cpu ;;
      esac
    done
  done
}
if [ "${MODE:-a}" = a ] || [ "${MODE:-a}" = ab ]; then
  [ "${MODE:-a}" = ab ] || for t in test_amp test_models_transformer; do
    [ -x build-gpu/tests/torch/$t ] || continue
    filter="[gpu]"; [ $t = test_models_transformer ] && filter=${TFILTER:-[gpu]}
    timeout -k 10 "$(cap 120)" build-gpu/tests/torch/$t "$filter" >"$OUT/logs/$t-gpu.txt" 2>&1
    rc=$?; echo "$t [gpu] rc=$rc ($(el) s): $(tail -2 "$OUT/logs/$t-gpu.txt" | head -1)"
    grep -B5 -A20 "FAILED" "$OUT/logs/$t-gpu.txt" | head -60
  done
  if [ "${MODE:-a}" = a ]; then
    timeout -k 10 "$(cap 90)" build-gpu/tests/torch/test_train_image_folder "[gpu]" >"$OUT/logs/image-folder-gpu.txt" 2>&1
    echo "test_train_image_folder [gpu] rc=$? ($(el) s): $(tail -2 "$OUT/logs/image-folder-gpu.txt" | head -1)"
  fi
  for r in $(seq 1 "${AB_ROUNDS:-3}"); do
    for v in on off; do
      [ "$(left)" -gt 60 ] || break
      flag=--${AB_FLAG:-optimizer-in-backward}; [ $v = off ] && flag=--no-${AB_FLAG:-optimizer-in-backward}
      timeout -k 5 "$(cap 80)" build-gpu/apps/lm_benchmark --model llama-1b --batch-size 4 --seq-len 2048 \
        --lr 6e-4 --beta2 0.95 --weight-decay 0.1 --warmup 10 --steps-per-window 10 --windows 5 --quiet \
        $flag --json "$OUT/logs/ab-$v-$r.json" >"$OUT/logs/ab-$v-$r.txt" 2>&1
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); m=r['metrics']; print(sys.argv[2], round(m.get('tokens_per_second',0)), round(100*m.get('mfu',0),1), r['first_loss'], r['final_loss'], r['config']['kernel_fusion'][-60:])" \
        "$OUT/logs/ab-$v-$r.json" "$v-$r" 2>&1 | tail -1
    done
  done
  [ "${MODE:-a}" = a ] && { [ "$h200" = 1 ] || [ "${JPEG:-0}" = 1 ]; } && jpeg_loop
  if [ "${ELSE_SIDE:-0}" = 1 ]; then  # then the side by side (power sampled on both sides)
    LM_GPUPERF_OPTIONS=${LMOPTS:-} LM_PEER_VARIANTS=compile timeout -k 10 "$(cap 400)" \
      benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-llama-1b" "${ELSE_REPEATS:-1}" llama-1b >"$OUT/logs/lm-llama-1b.txt" 2>&1
    echo "side-by-side rc=$? ($(el) s)"; cat "$OUT/logs/lm-llama-1b/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-llama-1b.txt"
  fi
fi
if [ "${MODE:-a}" = h200 ]; then
  # TIMED=1: test_models_transformer's TFILTER tests first
  if [ "${TIMED:-0}" = 1 ]; then
    timeout -k 10 120 build-gpu/tests/torch/test_models_transformer "${TFILTER:-[gpu]}" >"$OUT/logs/test_models_transformer-gpu.txt" 2>&1
    rc=$?; echo "test_models_transformer rc=$rc ($(el) s): $(tail -2 "$OUT/logs/test_models_transformer-gpu.txt" | head -1)"
    grep -B5 -A20 "FAILED" "$OUT/logs/test_models_transformer-gpu.txt" | head -60
  fi
  JPEG_CFGS=${JPEG_CFGS:-a16 s1} JPEG_UNTIL=${JPEG_UNTIL:-320} jpeg_loop
  LM_GPUPERF_OPTIONS=${LMOPTS:-} LM_PEER_VARIANTS=compile timeout -k 10 "$(cap 330)" \
    benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-llama-1b" "${REPEATS:-3}" llama-1b >"$OUT/logs/lm-llama-1b.txt" 2>&1
  echo "side-by-side rc=$? ($(el) s)"; cat "$OUT/logs/lm-llama-1b/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-llama-1b.txt"
fi
[ "${MODE:-a}" = jpeg ] && jpeg_loop
# ACC=1: GPT-2 124M at batch 16 x 1024, one micro-batch and two (--accumulation-steps 2), when
# 50 s are left at the end
if [ "${ACC:-0}" = 1 ]; then
  for k in 1 2 2 1; do
    [ "$(left)" -gt 25 ] || break
    timeout -k 5 "$(cap 40)" build-gpu/apps/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 \
      --accumulation-steps $k --warmup 6 --steps-per-window 5 --windows 3 --quiet \
      --json "$OUT/logs/acc-$k-$(el).json" >"$OUT/logs/acc-$k.txt" 2>&1
    echo "acc $k rc=$? ($(el) s)"
  done
  python3 - "$OUT"/logs/acc-*.json <<'PY'
import json, sys
for p in sys.argv[1:]:
    r = json.load(open(p)); c = r["config"]; m = r["metrics"]
    print(p.split("/")[-1], c.get("accumulation_steps", 1), c["graph_mode"], round(m.get("tokens_per_second", 0)),
          f"peak {r['peak_memory_bytes'] / 2**30:.2f} GiB", r["first_loss"], r["final_loss"], r["window_losses"])
PY
fi
if [ "${MODE:-a}" = acc ]; then
  LM_PEER_VARIANTS=${ACC_VARIANTS:-graph compile} timeout -k 10 "$(cap 560)" \
    benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-acc" "${ACC_REPEATS:-2}" "${ACC_ROWS:-gpt2-acc2 gpt2}" >"$OUT/logs/lm-acc.txt" 2>&1
  echo "side-by-side rc=$? ($(el) s)"; cat "$OUT/logs/lm-acc/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-acc.txt"
fi
if [ "${MODE:-a}" = side ]; then
  LM_GPUPERF_OPTIONS=${LMOPTS:-} LM_PEER_VARIANTS=compile timeout -k 10 "$(cap 480)" \
    benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-llama-1b" "${REPEATS:-3}" llama-1b >"$OUT/logs/lm-llama-1b.txt" 2>&1
  echo "side-by-side rc=$? ($(el) s)"; cat "$OUT/logs/lm-llama-1b/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-llama-1b.txt"
  jpeg_loop
fi
finish
