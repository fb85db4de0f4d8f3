#!/usr/bin/env bash
# Device call 1 of the thirteenth session: the resize kernel's GPU tests (8deb77f) and, on an H200,
# ResNet-50 on JPEGs (auto / 0 alternating) then Llama 1B side by side; on an H100, the Llama
# float32 spread run (lm_equivalence.py --runs S) instead (ON_H100=0: nothing, exit 3).
set -uo pipefail
export T0=$(date +%s)
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
case "$card" in *H200*) ;; *) [ "${ON_H100:-1}" = 1 ] || { echo "not an H200: nothing run"; exit 3; } ;; esac
case "$card" in *H200*) jd=${JD:-270};; *) jd=0;; esac
DEADLINE=$jd bash tmp-jpeg.sh
case "$card" in
  *H200*) DEADLINE=585 ROWS="llama-1b:3" TESTS="test_models_transformer" TAG=call1 bash tmp-call.sh rows ;;
  *) DEADLINE=585 EQ_MODEL=llama-1b EQ_ONLY=1 EQ_DATA=bigram EQ_DATA_VOCAB=512 EQ_LR=1e-4 EQ_BATCH=8 \
       EQ_SEQ=512 EQ_STEPS=200 EQ_FP32=on EQ_RUNS=S EQ_CAP=300 TAG=call1 bash tmp-call.sh eq ;;
esac
