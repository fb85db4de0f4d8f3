#!/usr/bin/env bash
# Device call 2 (one H200): the language-model tests (the fused cross-entropy against fp64),
# gpuperf vs PyTorch from the same weights (lm_equivalence.py), the loss of lm_benchmark with the
# graph and the fused optimizer switched off, and one alternating repeat of GPT-2 124M, GPT-2
# 774M and the Llama-style 1B against PyTorch eager, graph and compile.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build-gpu -j16 --target lm_benchmark test_transformer equivalence_run; } >"$OUT/logs/build.log" 2>&1 ||
  { tail -40 "$OUT/logs/build.log"; tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
./build-gpu/tests/test_transformer >"$OUT/logs/test_transformer.txt" 2>&1; echo "test_transformer rc=$?"
tail -2 "$OUT/logs/test_transformer.txt"
echo "== equivalence"
timeout 200 python3 benchmarks/python/lm_equivalence.py --build build-gpu --out "$OUT/logs/eq" \
  >"$OUT/logs/eq.txt" 2>&1; echo "lm_equivalence rc=$?"
cat "$OUT/logs/eq.txt" | tail -20
rm -f "$OUT"/logs/eq/*.safetensors
echo "== lm_benchmark loss by mode"
for mode in "" "--graph off" "--graph off --fused off"; do
  # shellcheck disable=SC2086
  ./build-gpu/examples/lm_benchmark --quiet --json '' $mode 2>&1 | grep -E "Tokens|final loss" | tr '\n' ' '
  echo " [$mode]"
done
echo "== rows"
GPUPERF_COMMIT=${GPUPERF_COMMIT:-unknown} LM_PEER_VARIANTS="eager graph compile" \
  timeout 330 benchmarks/lm_side_by_side.sh build-gpu "$OUT/logs/lm" 1 "gpt2 gpt2-large llama-1b" >"$OUT/logs/lm.txt" 2>&1
echo "rows rc=$?"; cat "$OUT/logs/lm/lm.md" 2>/dev/null || tail -20 "$OUT/logs/lm.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs
rm -rf "$OUT/logs"
