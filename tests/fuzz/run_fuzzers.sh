#!/usr/bin/env bash
# Builds the libFuzzer targets for the result-file (training and inference) and spec-file readers with clang and
# AddressSanitizer + UndefinedBehaviorSanitizer, then runs each for a bounded time.
#
#   tests/fuzz/run_fuzzers.sh [seconds-per-target]     (default 60)
#
# Needs Debian's clang-14 (apt-get install clang-14 libclang-rt-14-dev libfuzzer-14-dev) plus
# nlohmann-json3-dev. Exit status: 0 when no target crashed, hung or leaked; crash inputs are kept
# in build-fuzz/artifacts/. The seed corpus is the project's own data and example files.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${root}/build-fuzz"
cxx="${CXX_FUZZ:-clang++-14}"
mkdir -p "${out}/artifacts"

flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"${root}/libgpuperf/include" -I"${root}/libgpuperf/src")
common=("${root}/libgpuperf/src/report/run_record_json.cpp"
        "${root}/libgpuperf/src/timing/statistics.cpp"
        "${root}/libgpuperf/src/specs/specs.cpp"
        "${root}/libgpuperf/src/specs/published.cpp"
        "${root}/libgpuperf/src/telemetry/clock_events.cpp")

echo "building fuzz targets with ${cxx}"
"${cxx}" "${flags[@]}" "${root}/tests/fuzz/fuzz_run_record.cpp" "${common[@]}" -o "${out}/fuzz_run_record"
"${cxx}" "${flags[@]}" "${root}/tests/fuzz/fuzz_specs.cpp" "${common[@]}" -o "${out}/fuzz_specs"
"${cxx}" "${flags[@]}" "${root}/tests/fuzz/fuzz_inference_result.cpp" "${common[@]}" \
  "${root}"/libgpuperf/src/infer/{inference_result,latency,serving}.cpp -o "${out}/fuzz_inference_result"

# Seed corpora: valid files teach the fuzzer the structure it has to get past.
rm -rf "${out}/corpus_run_record" "${out}/corpus_specs" "${out}/corpus_inference_result"
mkdir -p "${out}/corpus_run_record" "${out}/corpus_specs" "${out}/corpus_inference_result"
cp "${root}"/docs/examples/*.json "${out}/corpus_run_record/"
cp "${root}"/libgpuperf/data/*.json "${out}/corpus_specs/"
cp "${root}"/docs/examples/*infer*.json \
  "${root}"/docs/results/2026-11-29-h200-fusion/inference-frozen/gpuperf-default-1.json \
  "${out}/corpus_inference_result/"

status=0
for target in fuzz_run_record fuzz_specs fuzz_inference_result; do
  corpus="${out}/corpus_${target#fuzz_}"
  echo "running ${target} for ${seconds} s"
  if ! "${out}/${target}" "${corpus}" -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -artifact_prefix="${out}/artifacts/${target}-" -print_final_stats=1 \
       > "${out}/${target}.log" 2>&1; then
    echo "FAILED: ${target} (see ${out}/${target}.log and ${out}/artifacts/)"
    status=1
  fi
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|Done [0-9]+ runs" "${out}/${target}.log" || true
done
[[ ${status} -eq 0 ]] && echo "fuzzing: no crash, hang or leak"
exit "${status}"
