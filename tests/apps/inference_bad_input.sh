#!/usr/bin/env bash
# Bad input to inference_benchmark: exit code 2, one line on stderr naming the option and the
# value, and no output file. Then --help exits 0 and a tiny CPU run (with a simulated serving
# sweep) writes a complete JSON result.
# Usage: inference_bad_input.sh <path to inference_benchmark>
set -u
program=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")  # absolute: the script changes directory
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
source "$here/usage_error_check.sh"
outputs=("$work/out.json")

expect_usage_error() {  # <expected text> <args...>: on the CPU, with --json out.json unless set
  local expected=$1
  shift
  local json=(--json "$work/out.json")
  [[ " $* " == *" --json "* ]] && json=()
  check_usage_error "$expected" "$program" --device cpu "${json[@]}" "$@"
}

expect_usage_error "--batch-sizes: a batch size must be > 0, got 0" --batch-sizes 1,0
expect_usage_error "--batch-sizes: '1,x' is not a comma-separated list of integers" --batch-sizes 1,x
expect_usage_error "--batch-sizes: no batch sizes in ''" --batch-sizes ""
expect_usage_error "--max-batch: must be >= 1, got 0" --max-batch 0
expect_usage_error "--cudnn-benchmark-from: must be >= 1, got 0" --cudnn-benchmark-from 0 --max-batch 1
expect_usage_error "--max-batch" --batch-sizes 1,2 --max-batch 4
expect_usage_error "--precision: unknown value 'fp8'" --precision fp8
expect_usage_error "--memory-format: unknown value 'nhwc'" --memory-format nhwc
expect_usage_error "--graph: unknown value 'maybe'" --graph maybe
expect_usage_error "--graph on: CUDA graphs need a CUDA device; device is cpu" --graph on --max-batch 1
expect_usage_error "--iterations: must be >= 1, got 0" --iterations 0
expect_usage_error "--warmup: must be >= 0, got -1" --warmup -1
expect_usage_error "--threads: must be <= " --threads 100000
expect_usage_error "--batch-sizes: 1 is listed twice" --batch-sizes 1,1,1
expect_usage_error "--serve-seconds: must be > 0 and <= 86400" --serve-rates 10 --serve-mode measured --serve-seconds 1e300
expect_usage_error "--serve-rates: a rate must be <= 1e9 requests/s, got '1e300'" --serve-rates 1e300
expect_usage_error "--serve-rates: a rate must be > 0 requests/s, got '-5'" --serve-rates 10,-5
expect_usage_error "--serve-rates: '10,,20' is not a comma-separated list of numbers" --serve-rates 10,,20
expect_usage_error "--max-batch-delay-ms: must be >= 0" --serve-rates 10 --max-batch-delay-ms -1
expect_usage_error "--serve-max-batch: 16 exceeds the largest batch size measured, 8" --max-batch 8 --serve-rates 10 --serve-max-batch 16
expect_usage_error "--serve-requests: must be >= 1 and <= 10000000, got '0'" --serve-rates 10 --serve-requests 0
expect_usage_error "--serve-mode: unknown value 'live' (choose simulated or measured)" --serve-rates 10 --serve-mode live
expect_usage_error "--serve-seconds: must be > 0" --serve-rates 10 --serve-seconds 0
expect_usage_error "--keep-latencies: must be 0..100000, got 100001" --keep-latencies 100001
expect_usage_error "--keep-latencies: must be 0..100000, got -1" --keep-latencies -1
expect_usage_error "unknown model 'vgg99'" --model vgg99
expect_usage_error "--json: cannot write '/nonexistent-dir/r.json'" --json /nonexistent-dir/r.json
if ! "$program" --help >/dev/null 2>&1; then
  echo "FAIL: --help did not exit 0"; failures=$((failures + 1))
fi

# A tiny real run with a serving sweep writes a complete result.
if "$program" --device cpu --max-batch 4 --warmup 1 --iterations 5 --quiet \
     --serve-rates 5,50 --serve-requests 200 --json "$work/ok.json" >"$work/stdout"; then
  grep -q "^Batch-1 latency p50: [0-9.]* ms" "$work/stdout" || { echo "FAIL: no batch-1 line"; failures=$((failures + 1)); }
  grep -q "^Best throughput: [0-9.]* samples/s at batch [0-9]*" "$work/stdout" || { echo "FAIL: no best-throughput line"; failures=$((failures + 1)); }
  grep -q "SIMULATED" "$work/stdout" || { echo "FAIL: serving not marked as simulated"; failures=$((failures + 1)); }
  grep -q '"schema": "gpuperf.inference/3"' "$work/ok.json" || { echo "FAIL: JSON result incomplete"; failures=$((failures + 1)); }
  grep -q '"device": {' "$work/ok.json" || { echo "FAIL: JSON result has no device object"; failures=$((failures + 1)); }
  grep -q '"latencies_s": \[' "$work/ok.json" || { echo "FAIL: JSON result has no per-call latencies"; failures=$((failures + 1)); }
  grep -q '"simulated": true' "$work/ok.json" || { echo "FAIL: JSON serving not marked simulated"; failures=$((failures + 1)); }
  [ "$(grep -c '"batch_size"' "$work/ok.json")" -eq 3 ] || { echo "FAIL: expected batch sizes 1, 2, 4 in the JSON"; failures=$((failures + 1)); }
else
  echo "FAIL: a valid run exited non-zero"; failures=$((failures + 1))
fi
# The measured serving mode: arrivals in real time, every batch executed (1 s of arrivals at
# 100 req/s = the 100-request minimum).
if "$program" --device cpu --batch-sizes 1,2 --warmup 1 --iterations 5 --quiet \
     --serve-mode measured --serve-rates 100 --serve-seconds 1 --json "$work/measured.json" \
     >"$work/measured.out"; then
  grep -q "MEASURED" "$work/measured.out" || { echo "FAIL: measured serving not marked"; failures=$((failures + 1)); }
  grep -q '"simulated": false' "$work/measured.json" || { echo "FAIL: JSON serving not marked measured"; failures=$((failures + 1)); }
  grep -q '"requests": 100' "$work/measured.json" || { echo "FAIL: measured serving did not run 100 requests"; failures=$((failures + 1)); }
else
  echo "FAIL: a measured serving run exited non-zero"; failures=$((failures + 1))
fi
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
