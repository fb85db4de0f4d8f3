#!/usr/bin/env bash
# Bad input to a benchmark program: exit code 2, one line on stderr naming the option and the
# value, and no output file. Then --help exits 0 and a tiny run writes a complete JSON result.
# Usage: cli_bad_input.sh <path to seed_benchmark>
set -u
program=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
source "$here/usage_error_check.sh"
outputs=("$work/out.json")

expect_usage_error() {  # <expected text> <args...>: with --json out.json unless the args set it
  local expected=$1
  shift
  local json=(--json "$work/out.json")
  [[ " $* " == *" --json "* ]] && json=()
  check_usage_error "$expected" "$program" "${json[@]}" "$@"
}

expect_usage_error "--batch-size: must be > 0, got 0" --batch-size 0
expect_usage_error "--batch-size: must be > 0, got -5" --batch-size -5
expect_usage_error "unknown model 'vgg99'" --model vgg99
expect_usage_error "--precision: unknown value 'fp8'" --precision fp8
expect_usage_error "--device cuda:99" --device cuda:99 --precision bf16
expect_usage_error "--memory-format: unknown value 'nhwc'" --memory-format nhwc
expect_usage_error "--optimizer: unknown value 'lamb'" --optimizer lamb
expect_usage_error "--windows: must be >= 1, got 0" --windows 0
expect_usage_error "--max-windows: must be >= --min-windows, got 3" --adaptive --min-windows 5 --max-windows 3
expect_usage_error "--threads: must be <= " --threads 100000
expect_usage_error "--lr: must be a finite number, got 'inf'" --lr inf
expect_usage_error "--momentum: must be a finite number, got 'inf'" --momentum inf
expect_usage_error "'/tmp' is a directory" --json /tmp
expect_usage_error "--batch-size" --batch-size many
expect_usage_error "--accumulation-steps: must be >= 1 and <= --batch-size (4), got 8" --batch-size 4 --accumulation-steps 8
expect_usage_error "--accumulation-steps: must be >= 1 and <= --batch-size (4), got 0" --batch-size 4 --accumulation-steps 0
expect_usage_error "--json: cannot write '/nonexistent-dir/r.json'" --json /nonexistent-dir/r.json
if ! "$program" --help >/dev/null 2>&1; then
  echo "FAIL: --help did not exit 0"; failures=$((failures + 1))
fi

# Without a GPU, fp16 needs CPU autocast support for fp16 (LibTorch >= 2.4): either the run
# works and its record says fp16, or it is refused as bad usage naming --precision fp16.
"$program" --device cpu --precision fp16 --batch-size 2 --warmup 0 --windows 1 \
  --steps-per-window 1 --quiet --json "$work/fp16.json" >/dev/null 2>"$work/fp16.err"
rc=$?
if [ "$rc" -eq 0 ]; then
  if ! grep -q '"precision": "fp16"' "$work/fp16.json"; then
    echo "FAIL: an fp16 run on the CPU wrote no fp16 record"; failures=$((failures + 1))
  else
    echo "ok: fp16 on the CPU runs (this LibTorch autocasts fp16 on the CPU)"
  fi
elif [ "$rc" -ne 2 ] || ! grep -q -- "--precision fp16" "$work/fp16.err" ||
     [ -e "$work/fp16.json" ]; then
  echo "FAIL: fp16 on the CPU: exit $rc, $(cat "$work/fp16.err")"; failures=$((failures + 1))
else
  echo "ok: fp16 on the CPU refused: $(cat "$work/fp16.err")"
fi

# A tiny real run writes a complete result.
if "$program" --device cpu --batch-size 4 --warmup 1 --windows 2 --steps-per-window 1 --quiet \
     --json "$work/ok.json" >"$work/stdout"; then
  grep -q "^Throughput: [0-9.]* samples/sec" "$work/stdout" || { echo "FAIL: no throughput line"; failures=$((failures + 1)); }
  grep -q '"schema": "gpuperf.run/1"' "$work/ok.json" || { echo "FAIL: JSON result incomplete"; failures=$((failures + 1)); }
else
  echo "FAIL: a valid run exited non-zero"; failures=$((failures + 1))
fi
# A read-only result file is refused before the run and left as it was.
echo "keep" >"$work/ro.json" && chmod 444 "$work/ro.json"
err=$("$program" --device cpu --batch-size 2 --warmup 0 --windows 1 --steps-per-window 1 --quiet \
  --json "$work/ro.json" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q -- "--json: '$work/ro.json' is read-only" <<<"$err" ||
   [ "$(cat "$work/ro.json")" != keep ]; then
  echo "FAIL: a read-only --json: exit $rc, $err, content '$(cat "$work/ro.json")'"
  failures=$((failures + 1))
else
  echo "ok: a read-only --json is refused and kept: $err"
fi

# A write that fails after the run (its folder removed while the JSON is being written, held at
# the writer's FIFO seam): exit 1, not 2, with the cause; the JSON written before it removed.
mkfifo "$work/hold" && mkdir "$work/gone"
GPUPERF_TEST_HOLD_WRITE="$work/hold" "$program" --device cpu --batch-size 4 --warmup 1 --windows 2 \
  --steps-per-window 1 --quiet --json "$work/late.json" --csv "$work/gone/late.csv" \
  >/dev/null 2>"$work/late.err" &
pid=$!
# Opening the FIFO waits for the JSON's write to hold there; closing it lets the write go on.
(exec 3>"$work/hold"; rm -rf "$work/gone") &
opener=$!
wait "$pid"
rc=$?
kill "$opener" 2>/dev/null; wait "$opener" 2>/dev/null
if [ "$rc" -ne 1 ] || ! grep -q -- "--csv: the run finished, but its CSV was not written" "$work/late.err" ||
   ! grep -q "No such file or directory" "$work/late.err" || [ -e "$work/late.json" ]; then
  echo "FAIL: a write failing after the run: exit $rc, json $( [ -e "$work/late.json" ] && echo kept || echo removed), $(cat "$work/late.err")"
  failures=$((failures + 1))
else
  echo "ok: a write failing after the run: exit 1, $(cat "$work/late.err")"
fi
# A library warning reaches the console in the program's words (its flags) and the record in the
# library's (the fields): an adaptive run far over its time limit.
"$program" --device cpu --batch-size 2 --warmup 0 --steps-per-window 5 --adaptive --max-seconds 0.0001 \
  --min-windows 2 --json "$work/limit.json" >"$work/limit.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q -- "against --max-seconds" "$work/limit.out" ||
   grep -q "MeasureOptions::" "$work/limit.out" ||
   ! grep -q "against MeasureOptions::max_seconds" "$work/limit.json"; then
  echo "FAIL: a warning in the program's words: exit $rc; console: $(grep -i "max.seconds" "$work/limit.out")"
  failures=$((failures + 1))
else
  echo "ok: a warning in the program's words: $(grep -o "against --max-seconds[^;]*" "$work/limit.out" | head -1)"
fi
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
