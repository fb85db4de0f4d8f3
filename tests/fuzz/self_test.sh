#!/usr/bin/env bash
# fuzz:self_test: run_fuzz_target.sh must fail a run on each planted defect of fuzz_self_test.cpp
# (heap overflow, signed overflow, leak, stray exception), with the sanitizer's or libFuzzer's
# report in its output, and pass a run without one. (libFuzzer's own exit code for a finding is
# 77, CTest's "skipped", unless the runner overrides it: this is the check that it does.)
#
#   self_test.sh RUNNER FUZZER WORK_DIR
set -uo pipefail
runner=$1 fuzzer=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
failures=0

run() {  # run NAME SEED_TEXT -> the runner's exit status; output in $work/NAME.out
  mkdir -p "$work/$1-seeds"
  printf '%s' "$2" > "$work/$1-seeds/seed.json"
  GPUPERF_FUZZ_RUNS=20 GPUPERF_FUZZ_SEED=1 "$runner" "$fuzzer" "$work/$1" 20 4096 \
    "$work/$1-seeds" > "$work/$1.out" 2>&1
}

for plant in "ASAN:AddressSanitizer: heap-buffer-overflow" \
             "UBSAN:runtime error: signed integer overflow" \
             "LEAK:LeakSanitizer: detected memory leaks" \
             "THROW:terminate called after throwing"; do
  word=${plant%%:*} report=${plant#*:}
  run "$word" "$word planted"
  status=$?
  if [[ $status -ne 1 ]]; then
    echo "FAILED: planted $word: the runner exited $status, expected 1"; failures=$((failures + 1))
  elif ! grep -q "$report" "$work/$word.out"; then
    echo "FAILED: planted $word: no '$report' in the output"; failures=$((failures + 1))
  else
    echo "ok: planted $word fails the run ($report)"
  fi
done
run clean '{"harmless": true}'
status=$?
if [[ $status -ne 0 ]]; then
  echo "FAILED: a clean run exited $status"; cat "$work/clean.out"; failures=$((failures + 1))
else
  echo "ok: a clean run passes"
fi
[[ $failures -eq 0 ]] || exit 1
