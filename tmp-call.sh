#!/usr/bin/env bash
# Device call: the whole GPU tree after the comm move (NCCL process group, collectives), then
# every single-GPU test (label gpu) and the installed-programs check.
set -uo pipefail
source .deps/env.sh
mkdir -p "$OUT/logs"
finish() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; rm -rf "$OUT/logs"; }
start=$(date +%s)
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  timeout 400 cmake --build build-gpu -j16; } >"$OUT/logs/build.log" 2>&1
rc=$?; echo "build rc=$rc after $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then grep -B2 -A12 "error" "$OUT/logs/build.log" | head -80; tail -5 "$OUT/logs/build.log"; finish; exit 1; fi
left=$(( 560 - ($(date +%s) - start) ))
timeout $left ctest --test-dir build-gpu -L '^gpu$' -j4 --output-on-failure >"$OUT/logs/ctest-gpu.txt" 2>&1
echo "ctest rc=$? after $(( $(date +%s) - start )) s"
grep -E "tests passed|Failed|\*\*\*|Not Run|Timeout" "$OUT/logs/ctest-gpu.txt" | head -40
finish
