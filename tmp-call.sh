#!/usr/bin/env bash
# Device call: the whole GPU tree (layout, c10d_group's NCCL path, tidy edits), the LM
# equivalence from the same weights on bigram tokens (with torch.compile in PyTorch's spread),
# then every single-GPU test (label gpu).
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
cap() { local left=$(( 575 - ($(date +%s) - start) )); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 330 cmake --build build-gpu -j16; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
timeout "$(cap 170)" python3 benchmarks/python/lm_equivalence.py --build build-gpu \
  --out "$OUT/logs/eq" >"$OUT/logs/eq.txt" 2>&1
echo "equivalence rc=$? after $(( $(date +%s) - start )) s"; tail -20 "$OUT/logs/eq.txt"
rm -f "$OUT"/logs/eq/*.safetensors
timeout "$(cap 400)" ctest --test-dir build-gpu -L '^gpu$' -j4 --output-on-failure >"$OUT/logs/ctest-gpu.txt" 2>&1
echo "ctest rc=$? after $(( $(date +%s) - start )) s"
grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout" "$OUT/logs/ctest-gpu.txt" | head -40
finish
