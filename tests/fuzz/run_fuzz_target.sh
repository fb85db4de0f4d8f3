#!/usr/bin/env bash
# One bounded libFuzzer run of one target, as a CTest test (tests/fuzz/CMakeLists.txt registers
# one per target as fuzz:<name>):
#
#   run_fuzz_target.sh FUZZER WORK_DIR RUNS MAX_LEN SEED_DIR...
#   run_fuzz_target.sh --skip REASON
#
# The corpus starts from every *.json under the seed folders, plus, made here from each of the
# first eight seeds, one with 300 nested arrays in an extra field (past the readers' depth limit
# of 256), one with 100,000 (the crash of issue #17) and one large file (120 KB); MAX_LEN must
# let them in.
# The run is bounded by a number of inputs, not by time, and uses a fixed random seed, so that a
# busy machine makes it slower but not different (GPUPERF_FUZZ_RUNS and GPUPERF_FUZZ_SEED, 0 for
# a random one, override both for a longer run by hand).
#
# Exit status: 0 when every input was read or refused cleanly; 1 on a crash, a sanitizer report
# (ASan, UBSan, LeakSanitizer), an uncaught exception, a hang (one input running 10 minutes, some
# 100,000 times its usual time), over 2 GB of memory, or a run that did not finish its inputs; the input that did it is kept in WORK_DIR/artifacts/. 77
# (SKIPPED) with --skip: no clang with libFuzzer was found at configure time.
set -uo pipefail

if [[ "${1:-}" == --skip ]]; then
  echo "SKIPPED: ${2:-no libFuzzer}"
  exit 77
fi
if [[ $# -lt 5 ]]; then
  echo "usage: $0 FUZZER WORK_DIR RUNS MAX_LEN SEED_DIR... | --skip REASON" >&2
  exit 2
fi
fuzzer=$1 work=$2 runs=${GPUPERF_FUZZ_RUNS:-$3} max_len=$4
shift 4
seed=${GPUPERF_FUZZ_SEED:-1}
name=$(basename "$fuzzer")

if [[ ! -x "$fuzzer" ]]; then
  echo "FAILED: $fuzzer was not built (clang with libFuzzer was found at configure time)" >&2
  exit 1
fi

rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"

# Seeds: valid files of every kind teach the fuzzer the structure it has to get past.
n=0
for dir in "$@"; do
  [[ -d "$dir" ]] || { echo "FAILED: seed folder $dir does not exist" >&2; exit 1; }
  while IFS= read -r -d '' file; do
    n=$((n + 1))
    cp "$file" "$work/seeds/$n-$(basename "$file")"
  done < <(find "$dir" -name '*.json' -type f -print0 | sort -z)
done
[[ $n -gt 0 ]] || { echo "FAILED: no seed files under $*" >&2; exit 1; }

# Hostile seeds, each a valid file with one extra field (at the top, and in the first object with
# an "id"): deep nesting just past the limit and far past it, and a large array.
repeat() { head -c "$2" /dev/zero | tr '\0' "$1"; }
deep300="$(repeat '[' 300)$(repeat ']' 300)"
deep100k="$(repeat '[' 100000)$(repeat ']' 100000)"
large="[$(repeat '7' 30000 | sed 's/7/0.5,/g')0.5]"
# From the first files of the seed folders, in order (tests/fixtures/golden and libgpuperf/data
# first: one file of each kind).
made=0
for k in $(seq 1 "$n"); do
  file=$(ls "$work/seeds/$k-"*)
  text=$(<"$file")
  [[ "$text" == *'"schema"'* ]] || continue
  base=$(basename "$file" .json)
  for kind in deep300 deep100k large; do
    printf '%s' "${text/\"schema\"/\"extra\": ${!kind}, \"schema\"}" \
      > "$work/seeds/$kind-$base.json"
  done
  # The same inside the first object with an "id" (a spec entry, which the merge walks).
  if [[ "$text" == *'"id"'* ]]; then
    for kind in deep300 deep100k; do
      printf '%s' "${text/\"id\"/\"extra\": ${!kind}, \"id\"}" > "$work/seeds/$kind-in-$base.json"
    done
  fi
  made=$((made + 1))
  [[ $made -lt 8 ]] || break
done

echo "$name: $runs inputs (seed $seed), max_len $max_len, $(ls "$work/seeds" | wc -l) seed files"
log="$work/$name.log"
"$fuzzer" "$work/corpus" "$work/seeds" -runs="$runs" -seed="$seed" -max_len="$max_len" \
  -timeout=600 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 > "$log" 2>&1
status=$?

# A clean exit must also have run its inputs and printed no sanitizer report.
reports="ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|deadly signal"
reports+="|fuzz contract broken|terminate called"
problems=$(grep -E "$reports" "$log" | head -5)
done_line=$(grep -E "^Done [0-9]+ runs" "$log")
grep -E "^stat::(number_of_executed_units|peak_rss_mb)|^Done [0-9]+ runs|cov:" "$log" | tail -4
if [[ $status -ne 0 || -n "$problems" || -z "$done_line" ]]; then
  echo "FAILED: $name (exit $status); the input is kept in $work/artifacts/:" >&2
  ls "$work/artifacts" >&2
  [[ -n "$problems" ]] && echo "$problems" >&2
  tail -60 "$log" >&2
  exit 1
fi
echo "$name: no crash, sanitizer report, leak or hang in $runs inputs"
