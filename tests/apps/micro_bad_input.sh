#!/usr/bin/env bash
# Bad input to microbench: exit code 2, one line on stderr naming the option and the value, and
# no output file (JSON or Markdown). Then --help exits 0 and a tiny CPU run writes both files.
# Usage: micro_bad_input.sh <path to microbench> [gloo|no-gloo]  (whether the build has Gloo)
set -u
program=$1
gloo=${2:-gloo}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
source "$here/usage_error_check.sh"
outputs=("$work/out.json" "$work/out.md")

expect_usage_error() {  # <expected text> <args...>: with --json and --markdown unless set
  local expected=$1
  shift
  local markdown=(--markdown "$work/out.md")
  [[ " $* " == *" --markdown "* ]] && markdown=()
  check_usage_error "$expected" "$program" --json "$work/out.json" "${markdown[@]}" "$@"
}

expect_usage_error "--dtypes: unknown data type 'fp12'" --dtypes fp32,fp12
expect_usage_error "--dtypes: empty item" --dtypes fp32,
expect_usage_error "--gemm-size: must be > 0 and <= 1048576, got '0'" --gemm-size 0
expect_usage_error "--gemm-shape: must be N or MxNxK with positive integers, got '8x8'" --gemm-shape 8x8
expect_usage_error "--gemm-shape: give either --gemm-size or --gemm-shape, got both" --gemm-size 64 --gemm-shape 8x8x8
expect_usage_error "--host-size-mib: must be > 0 and <= 1048576, got '0'" --host-size-mib 0
expect_usage_error "is also the --json file" --markdown "$work/out.json"
expect_usage_error "--windows: must be >= 1, got 0" --windows 0
expect_usage_error "--device: unknown value 'tpu'" --device tpu
expect_usage_error "--markdown: cannot write '/nonexistent-dir/r.md'" --markdown /nonexistent-dir/r.md
expect_usage_error "--specs: " --specs /nonexistent-dir/specs.json --device cpu
expect_usage_error "--collectives: unknown collective 'broadcast'" --collectives all-reduce,broadcast
expect_usage_error "--collective-sizes: not a size, got '1X'" --collective-sizes 1M,1X
expect_usage_error "--collective-sizes: a sweep must not end below its start, got '4M..1M'" --collective-sizes 4M..1M
expect_usage_error "--p2p-size-mib: must be > 0 and <= 1048576, got '0'" --p2p-size-mib 0
expect_usage_error "--ranks: must be >= 2 and <= 64 (0: the default), got '1'" --ranks 1
if ! "$program" --help >/dev/null 2>&1; then
  echo "FAIL: --help did not exit 0"; failures=$((failures + 1))
fi

if "$program" --device cpu --gemm-size 32 --memory-size-mib 1 --warmup 0 --windows 2 \
     --calls-per-window 1 --quiet --json "$work/ok.json" --markdown "$work/ok.md" >"$work/ok.out"; then
  grep -q '"schema": "gpuperf.micro/1"' "$work/ok.json" || { echo "FAIL: JSON lacks the schema"; failures=$((failures + 1)); }
  grep -q 'CPU variant' "$work/ok.md" || { echo "FAIL: Markdown does not say CPU variant"; failures=$((failures + 1)); }
  grep -q '| memory/host-copy | 1 MiB |' "$work/ok.out" || { echo "FAIL: stdout lacks the host copy row"; failures=$((failures + 1)); }
else
  echo "FAIL: tiny CPU run failed"; failures=$((failures + 1))
fi
# The interconnect on a machine without GPUs: Gloo over loopback, labelled as no interconnect; a
# build without Gloo says so and how to get it.
if [ "$gloo" = no-gloo ]; then
  "$program" --device cpu --no-gemm --no-memory --interconnect --collectives all-reduce \
    --collective-sizes 16K --warmup 0 --windows 2 --calls-per-window 1 --quiet \
    --json "$work/ic.json" >"$work/ic.out" 2>&1
  grep -q 'built without Gloo.*libgloo-dev' "$work/ic.out" || { echo "FAIL: a build without Gloo does not say so"; failures=$((failures + 1)); }
elif "$program" --device cpu --no-gemm --no-memory --interconnect --collectives all-reduce,all-gather \
     --collective-sizes 16K --warmup 0 --windows 2 --calls-per-window 1 --quiet \
     --json "$work/ic.json" >"$work/ic.out"; then
  grep -q '"interconnect": "CPU, Gloo over loopback: not an interconnect' "$work/ic.json" || { echo "FAIL: JSON lacks the Gloo label"; failures=$((failures + 1)); }
  grep -q '| all-reduce | 16 KiB |' "$work/ic.out" || { echo "FAIL: stdout lacks the all-reduce row"; failures=$((failures + 1)); }
  grep -q 'no P2P copies' "$work/ic.out" || { echo "FAIL: stdout does not say P2P was skipped"; failures=$((failures + 1)); }
elif grep -q "built without Gloo" "$work/ic.out" 2>/dev/null; then
  echo "skip: this build has no Gloo"
else
  echo "FAIL: tiny CPU interconnect run failed"; failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] && echo "all microbench bad-input checks passed"
exit "$failures"
