#!/usr/bin/env bash
# Device call: the LM equivalence from the same weights on bigram tokens, with PyTorch's float32
# trajectory as the reference, at lr 1e-4 and at the benchmark's lr 6e-4.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 575 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 300 cmake --build build-gpu -j16 --target equivalence_run; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
for lr in 1e-4 6e-4; do
  timeout "$(cap 200)" python3 benchmarks/python/lm_equivalence.py --build build-gpu --lr $lr \
    --out "$OUT/logs/eq-$lr" >"$OUT/logs/eq-$lr.txt" 2>&1
  echo "equivalence lr $lr rc=$? after $(( $(date +%s) - start )) s"; tail -16 "$OUT/logs/eq-$lr.txt"
  rm -f "$OUT"/logs/eq-$lr/*.safetensors
done
finish
