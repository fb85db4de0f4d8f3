#!/usr/bin/env bash
# make_jpeg_folder and cpu_loader_bench end to end (and gpu_loader_bench's refusals): a generated folder with the bad-input cases
# planted, loaded by two threads (the bad files skipped and counted, never fatal); bad options
# exit 2 naming the option and write nothing.
# Usage: input_programs.sh <bin dir of make_jpeg_folder> <bin dir of cpu_loader_bench> <work dir>
set -u
make=$1/make_jpeg_folder
bench=$2/cpu_loader_bench
work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

out=$("$make" --out "$work/data" --classes 3 --images-per-class 6 --seed 3 --bad-files) ||
  fail "make_jpeg_folder exited $?: $out"
echo "$out"
echo "$out" | grep -q "Wrote 18 JPEG files" || fail "no summary line"
echo "$out" | grep -q "Planted 1[0-9] bad-input files" || fail "no planted line"
[ -d "$work/data/class_empty" ] || fail "no empty class folder"

out=$("$bench" --data "$work/data" --threads 2 --batch-size 4 --batches 3 2>&1) ||
  fail "cpu_loader_bench exited $?: $out"
echo "$out"
echo "$out" | grep -q "img/s per core\|per busy core" || fail "no throughput line"
echo "$out" | grep -Eq "skipped [1-9]" || fail "the bad files were not skipped"

# --strict: the first bad file ends the run with exit 2, naming it.
out=$("$bench" --data "$work/data" --threads 2 --batch-size 4 --batches 3 --strict 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "cpu_loader_bench --strict exited $rc, not 2: $out"
echo "$out" | grep -q "cpu_loader_bench: error: $work/data/class_0000/bad_" ||
  fail "--strict did not name the bad file: $out"

# Bad options: exit 2, the option and value named, nothing written.
check_usage() {
  local expect=$1
  shift
  local text rc
  text=$("$make" "$@" 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] || fail "make_jpeg_folder $* exited $rc, not 2: $text"
  echo "$text" | grep -q -- "$expect" || fail "make_jpeg_folder $*: '$text' does not say '$expect'"
}
check_usage "--classes: must be in 1..100000, got 0" --out "$work/none" --classes 0
check_usage "--quality: must be in 1..100, got 101" --out "$work/none" --quality 101
check_usage "--out $work/data: exists and is not an empty folder" --out "$work/data"
[ ! -e "$work/none" ] || fail "a refused run wrote $work/none"
out=$("$bench" --data "$work/none" 2>&1)
[ $? -eq 2 ] || fail "cpu_loader_bench on a missing folder did not exit 2: $out"
# gpu_loader_bench (LibTorch; it runs only on a GPU): bad settings are named first, on any machine.
gpu_bench=$2/gpu_loader_bench
[ -x "$gpu_bench" ] || fail "no $gpu_bench (benchmarks/ builds it beside cpu_loader_bench)"
out=$("$gpu_bench" --data "$work/data" --host-decode-share 3 2>&1)
[ $? -eq 2 ] || fail "gpu_loader_bench --host-decode-share 3 did not exit 2: $out"
echo "$out" | grep -q -- "--host-decode-share: must be in 0..1, got 3" ||
  fail "gpu_loader_bench did not name --host-decode-share: $out"
out=$("$gpu_bench" --data "$work/data" --decode nvjpeg 2>&1)
[ $? -eq 2 ] || fail "gpu_loader_bench --decode nvjpeg did not exit 2: $out"
echo "$out" | grep -q -- "--decode: unknown value 'nvjpeg'" ||
  fail "gpu_loader_bench did not name --decode: $out"
out=$("$gpu_bench" --data "$work/data" --decode cpu --gpu-decode-threads 2 2>&1)
[ $? -eq 2 ] || fail "gpu_loader_bench --decode cpu --gpu-decode-threads 2 did not exit 2: $out"
echo "$out" | grep -q -- "--gpu-decode-threads 2: applies to decoding on the GPU" ||
  fail "gpu_loader_bench did not name --gpu-decode-threads: $out"
out=$("$gpu_bench" --data "$work/data" --decode cpu --host-decode-share auto 2>&1)
[ $? -eq 2 ] || fail "gpu_loader_bench --decode cpu --host-decode-share auto did not exit 2: $out"
echo "$out" | grep -q -- "--host-decode-share auto: applies to --decode gpu" ||
  fail "gpu_loader_bench did not name --host-decode-share auto: $out"
out=$("$gpu_bench" --data "$work/data" --host-decode-share most 2>&1)
[ $? -eq 2 ] || fail "gpu_loader_bench --host-decode-share most did not exit 2: $out"
echo "$out" | grep -q -- "--host-decode-share: must be a finite number or 'auto', got 'most'" ||
  fail "gpu_loader_bench did not name --host-decode-share most: $out"
echo "ok: generated, loaded with the bad files skipped, bad options refused"
