#!/usr/bin/env bash
# Device call (nvidia-h200), from the repository root with $OUT set; carry [".deps"].
#   bash tmp-call.sh tests        build build-gpu, every single-GPU test
#   ROUNDS=2 SHARES="0 0.5" PLAIN_SHARES="0.6 auto" bash tmp-call.sh ab
#                                 benchmarks/library_ab.sh: training on the side stream (new)
#                                 against the legacy default stream (old), alternating, on 6,400
#                                 JPEGs; then single runs at other shares
#   bash tmp-call.sh lm           GPT-2 124M step profile, side by side with torch.compile
#   bash tmp-call.sh final        build; the language models' GPU tests; GPT-2 and Llama 1B side by
#                                 side with torch.compile (LARGE=1: GPT-2 774M after them)
#   ROWS="gpt2:3 gpt2-b32:2" bash tmp-call.sh rows
#                                 build lm_benchmark; each row side by side with torch.compile
#                                 (PROFILE=1: GPT-2 124M's step profile first; LLAMA_PROFILE=1:
#                                 Llama 1B's)
#   EQ_MODEL=llama-1b EQ_BATCH=4 EQ_SEQ=2048 EQ_ONLY=1 bash tmp-call.sh eq
#                                 Llama 1B in the side by side's regime (PyTorch's own spread there)
#   bash tmp-call.sh autotune     Llama 1B's torch.compile max-autotune peer alone (AUTOTUNE_CAP
#                                 seconds): Inductor's cache lives in build-gpu/inductor-cache,
#                                 which a warm machine keeps, so a second call compiles from it
#   bash tmp-call.sh eq           the side by side's GPT-2 batch (16 x 1024, one batch, lr 6e-4) from
#                                 the same weights in gpuperf and PyTorch (lm_equivalence.py --data
#                                 fixed), then lm_benchmark's final loss with the graph on and off
set -uo pipefail
mode=${1:-tests}
source .deps/env.sh
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$PWD/build-gpu/inductor-cache}
mkdir -p "$OUT/logs"
start=${T0:-$(date +%s)}
left() { echo $(( ${DEADLINE:-585} - ($(date +%s) - start) )); }
cap() { local l; l=$(left); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
finish() { tar czf "$OUT/logs-${TAG:-$mode}.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
build() {
  { [ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release; } &&
    cmake --build build-gpu -j16 "$@"
}
if [ "$mode" = tests ]; then
  build >"$OUT/logs/build.log" 2>&1 || { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -100; finish; exit 1; }
  echo "built after $(( $(date +%s) - start )) s"
  timeout -k 10 "$(cap 300)" ctest --test-dir build-gpu -L '^gpu$' -R "${TESTS_REGEX:-.}" -E "${TESTS_EXCLUDE:-^$}" -j4 --output-on-failure >"$OUT/logs/ctest-gpu.txt" 2>&1
  echo "ctest rc=$?"; grep -E "tests passed|FAILED|Failed|\(Failed\)" "$OUT/logs/ctest-gpu.txt" | head -20
fi
if [ "$mode" = eq ]; then
  # Why gpuperf's GPT-2 memorises the side by side's one batch more slowly than PyTorch: the
  # same weights and batch through TrainStep (equivalence_run) and PyTorch at lr 6e-4.
  build --target equivalence_run lm_benchmark >"$OUT/logs/build-eq.log" 2>&1 || { tail -30 "$OUT/logs/build-eq.log"; finish; exit 1; }
  timeout -k 10 "$(cap ${EQ_CAP:-240})" python3 benchmarks/python/lm_equivalence.py --build build-gpu --out "$OUT/logs/eq" \
    --model "${EQ_MODEL:-gpt2}" --data "${EQ_DATA:-fixed}" --lr "${EQ_LR:-6e-4}" --batch-size "${EQ_BATCH:-16}" \
    --seq-len "${EQ_SEQ:-1024}" --steps "${EQ_STEPS:-60}" --fp32-trajectory "${EQ_FP32:-on}" \
    ${EQ_DATA_VOCAB:+--data-vocab "$EQ_DATA_VOCAB"} ${EQ_RUNS:+--runs "$EQ_RUNS"} >"$OUT/logs/eq.txt" 2>&1
  echo "eq rc=$?"; grep -E "^\[|^\| |^PASS|^FAIL|^NOT RUN" "$OUT/logs/eq.txt" | cut -c1-160
  rm -f "$OUT"/logs/eq/*.safetensors
  [ "${EQ_ONLY:-0}" = 1 ] && { finish; exit 0; }
  # The side by side's own run, then without the graph, then torch::optim's AdamW (no fused
  # kernels at all): each window's last loss printed (window_losses).
  for v in "--graph on" "--graph off" "--fused off --graph off"; do
    tag=$(echo "$v" | tr -d ' -')
    timeout -k 10 "$(cap 90)" ./build-gpu/apps/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 $v \
      --lr 6e-4 --beta2 0.95 --weight-decay 0.1 --warmup 10 --steps-per-window 10 --windows 5 --quiet \
      --json "$OUT/logs/lm-$tag.json" >/dev/null 2>&1
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r['first_loss'], r.get('window_losses'), r['config']['kernel_fusion'])" \
      "$OUT/logs/lm-$tag.json" "lm_benchmark $v:" 2>&1 | tail -1
  done
  timeout -k 10 "$(cap 60)" python3 benchmarks/python/lm_peer.py --model gpt2 --batch-size 16 --seq-len 1024 --variant eager \
    --lr 6e-4 --beta2 0.95 --weight-decay 0.1 --warmup 10 --steps-per-window 10 --windows 5 2>/dev/null \
    | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print('lm_peer eager:', r['first_loss'], r.get('window_losses'))"
fi
if [ "$mode" = final ]; then
  # ONLY_LM=1: lm_benchmark alone, no tests (a second call after the tests passed).
  if [ "${ONLY_LM:-0}" = 1 ]; then set -- --target lm_benchmark
  else set -- --target test_amp test_models_transformer test_train_memory lm_benchmark; fi
  build "$@" >"$OUT/logs/build.log" 2>&1 || { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -100; finish; exit 1; }
  echo "built after $(( $(date +%s) - start )) s"
  [ "${ONLY_LM:-0}" = 1 ] || for t in test_amp test_models_transformer test_train_memory; do
    timeout -k 10 "$(cap 90)" build-gpu/tests/torch/$t "[gpu]" >"$OUT/logs/$t-gpu.txt" 2>&1
    echo "$t [gpu] rc=$?: $(tail -2 "$OUT/logs/$t-gpu.txt" | head -1)"
  done
  grep -B3 -A12 "FAILED" "$OUT"/logs/test_*-gpu.txt | head -60
  [ "${GPT2_REPEATS:-2}" = 0 ] || { echo "== gpt2 side by side ($(left) s left)"
  LM_PEER_VARIANTS="compile" timeout -k 10 "$(cap 260)" \
    benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" "${GPT2_REPEATS:-2}" gpt2 >"$OUT/logs/lm.txt" 2>&1
  echo "side-by-side rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"; }
  if [ "${LLAMA:-1}" = 1 ] && [ "$(left)" -gt 150 ]; then
    LM_PEER_VARIANTS="compile" timeout -k 10 "$(cap 220)" \
      benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-llama" 1 llama-1b >"$OUT/logs/lm-llama.txt" 2>&1
    echo "side-by-side rc=$?"; cat "$OUT/logs/lm-llama/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-llama.txt"
  fi
  if [ "${LARGE:-0}" = 1 ] && [ "$(left)" -gt 150 ]; then
    LM_PEER_VARIANTS="compile" timeout -k 10 "$(cap 220)" \
      benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-large" 1 gpt2-large >"$OUT/logs/lm-large.txt" 2>&1
    echo "side-by-side rc=$?"; cat "$OUT/logs/lm-large/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-large.txt"
  fi
fi
if [ "$mode" = rows ]; then
  # ROWS="gpt2:3 gpt2-b32:2 llama-1b:1": each row side by side with torch.compile (VARIANTS="compile
  # max-autotune": also max-autotune, in the first repeat), its repeats,
  # while at least MIN_LEFT (150) seconds are left; lm_benchmark built first.
  # TESTS="test_models_transformer ...": those built too and their [gpu] cases run first.
  build --target lm_benchmark ${TESTS:-} >"$OUT/logs/build.log" 2>&1 || { grep -B2 -A12 "error" "$OUT/logs/build.log" | head -100; finish; exit 1; }
  echo "built after $(( $(date +%s) - start )) s"
  for t in ${TESTS:-}; do
    timeout -k 10 "$(cap 90)" build-gpu/tests/torch/$t "[gpu]" >"$OUT/logs/$t-gpu.txt" 2>&1
    rc=$?; echo "$t [gpu] rc=$rc: $(tail -2 "$OUT/logs/$t-gpu.txt" | head -1)"
    grep -B3 -A12 "FAILED" "$OUT/logs/$t-gpu.txt" | head -40
    [ "$rc" = 0 ] || { echo "a test failed: no rows"; finish; exit 1; }
  done
  if [ "${PROFILE:-0}" = 1 ]; then
    timeout -k 10 "$(cap 60)" ./build-gpu/apps/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 --warmup 5 \
      --steps-per-window 10 --windows 1 --quiet --json '' \
      --kernel-trace "$OUT/logs/gpuperf_trace.json" >"$OUT/logs/profile_run.txt" 2>&1
    python3 benchmarks/python/profile_step.py --trace "$OUT/logs/gpuperf_trace.json" --steps 10 \
      --batch-size 16 --top 30 >"$OUT/logs/gpuperf_profile.txt" 2>&1
    rm -f "$OUT/logs/gpuperf_trace.json"
    head -36 "$OUT/logs/gpuperf_profile.txt" | cut -c1-150; grep -E "tokens/s|MFU" "$OUT/logs/profile_run.txt" | head -3
  fi
  if [ "${LLAMA_PROFILE:-0}" = 1 ]; then
    timeout -k 10 "$(cap 90)" ./build-gpu/apps/lm_benchmark --model llama-1b --batch-size 4 --seq-len 2048 \
      --warmup 5 --steps-per-window 5 --windows 1 --quiet --json '' \
      --kernel-trace "$OUT/logs/llama_trace.json" >"$OUT/logs/llama_profile_run.txt" 2>&1
    python3 benchmarks/python/profile_step.py --trace "$OUT/logs/llama_trace.json" --steps 5 \
      --batch-size 4 --top 30 >"$OUT/logs/llama_profile.txt" 2>&1
    rm -f "$OUT/logs/llama_trace.json"
    head -24 "$OUT/logs/llama_profile.txt" | cut -c1-150; grep -E "tokens/s|MFU" "$OUT/logs/llama_profile_run.txt" | head -3
  fi
  for rr in ${ROWS:-gpt2:3}; do
    row=${rr%%:*}; n=${rr##*:}
    [ "$(left)" -gt "${MIN_LEFT:-150}" ] || { echo "== $row skipped ($(left) s left)"; continue; }
    echo "== $row x$n ($(left) s left)"
    LM_PEER_VARIANTS="${VARIANTS:-compile}" timeout -k 10 "$(cap 400)" \
      benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-$row" "$n" "$row" >"$OUT/logs/lm-$row.txt" 2>&1
    echo "side-by-side rc=$?"; cat "$OUT/logs/lm-$row/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-$row.txt"
  done
fi
if [ "$mode" = autotune ]; then
  timeout -k 10 "$(cap ${AUTOTUNE_CAP:-540})" python3 benchmarks/python/lm_peer.py --model llama-1b \
    --batch-size 4 --seq-len 2048 --lr 6e-4 --beta2 0.95 --weight-decay 0.1 --warmup 10 \
    --steps-per-window 10 --windows 5 --variant max-autotune >"$OUT/logs/autotune.jsonl" \
    2>"$OUT/logs/autotune.err"
  echo "max-autotune rc=$? after $(( $(date +%s) - start )) s; $(du -sh "$TORCHINDUCTOR_CACHE_DIR" | cut -f1) cached"
  cut -c1-400 "$OUT/logs/autotune.jsonl"
fi
if [ "$mode" = ab ]; then
  if [ ! -d data/all ]; then
    for g in 0 1 2 3 4 5 6 7; do build-gpu/benchmarks/make_jpeg_folder --out data/g$g \
      --classes 8 --images-per-class 100 --seed $g >"$OUT/logs/make-$g.txt" 2>&1 & done; wait
    mkdir -p data/all
    for g in 0 1 2 3 4 5 6 7; do for c in data/g$g/*; do mv "$c" "data/all/g$g-$(basename "$c")"; done; done
    cat data/all/*/* > /dev/null
  fi
  for s in ${SHARES:-0 0.5}; do
    [ "$(left)" -lt 100 ] && break
    timeout -k 10 "$(cap 400)" benchmarks/library_ab.sh build-gpu libgpuperf/torch/src/train/training_run.cpp \
      's/^  const SideStreamScope stream(r.device);$//' "$OUT/logs/ab-$s" "${ROUNDS:-1}" -- \
      build-gpu/apps/resnet50_benchmark --model resnet50 --batch-size 256 --precision fp16 \
      --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 \
      --windows 6 --data data/all --loader-threads 16 --compare-synthetic --decode gpu \
      --host-decode-share "$s" --json "$OUT/logs/ab-$s/{variant}-{round}.json"
    grep -h "synthetic" "$OUT"/logs/ab-$s/*-*.txt | tail -4
  done
  for s in ${PLAIN_SHARES:-}; do
    [ "$(left)" -lt 60 ] && break
    timeout -k 10 "$(cap 60)" build-gpu/apps/resnet50_benchmark --model resnet50 --batch-size 256 \
      --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 \
      --steps-per-window 10 --windows 6 --data data/all --loader-threads 16 --compare-synthetic \
      --decode gpu --host-decode-share "$s" --json "$OUT/logs/share-$s.json" >"$OUT/logs/share-$s.txt" 2>&1
    echo "share $s: $(grep -i synthetic "$OUT/logs/share-$s.txt" | tail -1)"
  done
fi
if [ "$mode" = lm ]; then
  build --target lm_benchmark >"$OUT/logs/build.log" 2>&1 || { tail -40 "$OUT/logs/build.log"; finish; exit 1; }
  timeout -k 10 "$(cap 60)" ./build-gpu/apps/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 --warmup 5 \
    --steps-per-window 10 --windows 1 --quiet --json '' \
    --kernel-trace "$OUT/logs/gpuperf_trace.json" >"$OUT/logs/profile_run.txt" 2>&1
  python3 benchmarks/python/profile_step.py --trace "$OUT/logs/gpuperf_trace.json" --steps 10 \
    --batch-size 16 --top 30 >"$OUT/logs/gpuperf_profile.txt" 2>&1
  rm -f "$OUT/logs/gpuperf_trace.json"
  head -40 "$OUT/logs/gpuperf_profile.txt"
  [ "${LLAMA:-1}" = 1 ] && timeout -k 10 "$(cap 90)" ./build-gpu/apps/lm_benchmark --model llama-1b --batch-size 4 --seq-len 2048 \
    --warmup 5 --steps-per-window 5 --windows 1 --quiet --json '' \
    --kernel-trace "$OUT/logs/llama_trace.json" >"$OUT/logs/llama_profile_run.txt" 2>&1
  python3 benchmarks/python/profile_step.py --trace "$OUT/logs/llama_trace.json" --steps 5 \
    --batch-size 4 --top 30 >"$OUT/logs/llama_profile.txt" 2>&1
  rm -f "$OUT/logs/llama_trace.json"
  head -12 "$OUT/logs/llama_profile.txt"
  [ "${SIDE:-1}" = 1 ] || { finish; exit 0; }
  echo "== gpt2 side by side ($(left) s left)"
  LM_PEER_VARIANTS="compile" timeout -k 10 "$(cap 300)" \
    benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 2 gpt2 >"$OUT/logs/lm.txt" 2>&1
  echo "side-by-side rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
  if [ "$(left)" -gt 150 ]; then
    LM_PEER_VARIANTS="compile" timeout -k 10 "$(cap 200)" \
      benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm-llama" 1 llama-1b >"$OUT/logs/lm-llama.txt" 2>&1
    echo "side-by-side rc=$?"; cat "$OUT/logs/lm-llama/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm-llama.txt"
  fi
fi
finish
