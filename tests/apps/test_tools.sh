#!/usr/bin/env bash
# Exit codes and one-line errors of gpuperf_compare, gpuperf_report and gpuperf_advise:
# bad input -> exit 2 with the file/field named on exactly one line of stderr, nothing on stdout
# and no file created, changed or removed; good input -> 0; inputs are never rewritten.
#   test_tools.sh <bin dir> <source dir>
set -uo pipefail
bin="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "${tmp}"' EXIT
ex="${src}/docs/examples"
fail=0

listing() {  # every file under ${tmp} but the captured streams, with its checksum
  (cd "${tmp}" && find . -path ./out -prune -o -path ./err -prune -o -type f -print0 |
     sort -z | xargs -0 -r sha256sum)
}

expect() {  # expect <code> <text in stderr/stdout> <command...>
  local code="$1" text="$2"; shift 2
  local before; before="$(listing)"
  "$@" > "${tmp}/out" 2> "${tmp}/err"; local got=$?
  local why=""
  if [[ ${got} -ne ${code} ]]; then
    why="exit ${got} (want ${code})"
  elif ! cat "${tmp}/out" "${tmp}/err" | grep -qF -- "${text}"; then
    why="output lacks '${text}'"
  elif [[ ${code} -eq 2 && "$(grep -c '' "${tmp}/err")" -ne 1 ]]; then
    why="$(grep -c '' "${tmp}/err") lines on stderr, want 1"
  elif [[ ${code} -eq 2 && -s "${tmp}/out" ]]; then
    why="something on stdout"
  elif [[ ${code} -eq 2 && "$(listing)" != "${before}" ]]; then
    why="files created, changed or removed"
  fi
  if [[ -n "${why}" ]]; then
    echo "FAIL: $* -> ${why}, output:"; cat "${tmp}/out" "${tmp}/err"; fail=1
  else
    echo "ok: exit ${got}: $*"
  fi
}

# Output that cannot arrive is a failure: --version, --help and gpu_info's report into /dev/full
# exit 1 and say so on stderr (they exited 0 with nothing written).
for args in "gpu_info --version" "gpu_info --help" "gpu_info" "gpuperf_compare --version"; do
  read -r -a argv <<< "${args}"
  "${bin}/${argv[0]}" "${argv[@]:1}" > /dev/full 2> "${tmp}/full.err"; rc=$?
  if [[ ${rc} -eq 1 ]] && grep -q "cannot write to standard output" "${tmp}/full.err"; then
    echo "ok: exit 1: ${args} > /dev/full"
  else
    echo "FAIL: ${args} > /dev/full -> exit ${rc}: $(cat "${tmp}/full.err")"; fail=1
  fi
done
rm -f "${tmp}/full.err"

cp "${ex}/h200-resnet50-fp16-cl.json" "${tmp}/a.json"
sum_before="$(sha256sum "${tmp}/a.json")"
printf '{"schema": "gpuperf.run/1"' > "${tmp}/broken.json"
: > "${tmp}/empty.json"

expect 0 "baseline" "${bin}/gpuperf_compare" "${tmp}/a.json" "${ex}/h200-resnet50-fp16-cl-repeat.json"
expect 2 "required" "${bin}/gpuperf_compare"
# --fail-on: a CI gate. slow.json is the example run with every window 25% longer (rates x0.8).
python3 - "${ex}/h200-resnet50-fp16-cl.json" "${tmp}/slow.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["window_throughput"] = [v * 0.8 for v in r["window_throughput"]]
r["window_seconds"] = [v * 1.25 for v in r["window_seconds"]]
for k in ("mean", "median", "min", "max", "q1", "q3", "ci95_low", "ci95_high", "stdev", "iqr"):
    if isinstance(r["throughput"].get(k), (int, float)):
        r["throughput"][k] *= 0.8
r["overall_throughput"] *= 0.8
r["timed_seconds"] *= 1.25
json.dump(r, open(sys.argv[2], "w"))
PY
base="${ex}/h200-resnet50-fp16-cl.json"
expect 0 "faster" "${bin}/gpuperf_compare" "${tmp}/slow.json" "${base}" --fail-on slower
expect 1 "--fail-on any:" "${bin}/gpuperf_compare" "${tmp}/slow.json" "${base}" --fail-on any
expect 1 "(slower)" "${bin}/gpuperf_compare" "${base}" "${tmp}/slow.json" --fail-on slower
expect 0 "slower" "${bin}/gpuperf_compare" "${base}" "${tmp}/slow.json"
expect 2 "--fail-on" "${bin}/gpuperf_compare" "${base}" --fail-on sometimes
expect 2 "broken.json: run record: not valid JSON" "${bin}/gpuperf_compare" "${tmp}/broken.json"
expect 2 "empty.json' is empty" "${bin}/gpuperf_compare" "${tmp}/empty.json"
expect 2 "gpu_specs.json: field 'schema' is 'gpuperf.specs/1', expected 'gpuperf.run/1'" \
  "${bin}/gpuperf_compare" "${src}/libgpuperf/data/gpu_specs.json"
expect 2 "--baseline: 'Voodoo 5'" "${bin}/gpuperf_compare" "${tmp}/a.json" --baseline "Voodoo 5"
expect 2 "--format: unknown format 'xml'" "${bin}/gpuperf_compare" "${tmp}/a.json" --format xml
expect 2 "refusing to overwrite" "${bin}/gpuperf_compare" "${tmp}/a.json" -o "${tmp}/a.json"
expect 2 "nope.json' not found" "${bin}/gpuperf_compare" "${tmp}/a.json" --specs "${tmp}/nope.json"
expect 0 "wrote" "${bin}/gpuperf_report" "${tmp}/a.json" -o "${tmp}/r.html"
expect 2 "refusing to overwrite" "${bin}/gpuperf_report" "${tmp}/a.json" -o "${tmp}/a.json"
expect 2 "--price-per-hour: must be >= 0, got '-3'" "${bin}/gpuperf_report" "${tmp}/a.json" --price-per-hour=-3 -o "${tmp}/r.html"
expect 0 "Reasons:" "${bin}/gpuperf_advise" --model resnet50 --batch-size 256 --results "${tmp}/a.json"
expect 2 "--parameters: must be > 0 and <= 1e15, got '-5'" "${bin}/gpuperf_advise" --parameters=-5
expect 2 "--budget: must be >= 0, got '-1'" "${bin}/gpuperf_advise" --model resnet50 --budget=-1
expect 2 "--model: 'gpt9' has no built-in count" "${bin}/gpuperf_advise" --model gpt9
expect 2 "model name or a parameter count" "${bin}/gpuperf_advise"
printf '{"schema": "gpuperf.specs/1", "gpus": [{"id": "x", "price_usd": -1}]}' > "${tmp}/user.json"
expect 2 "user.json: field 'gpus[0] (x).name' is missing" \
  "${bin}/gpuperf_advise" --model resnet50 --specs-extra "${tmp}/user.json"

# Inference results (real H200 files written before fingerprints were stored).
cp "${ex}/h200-resnet50-infer-fp16-cl-eager.json" "${tmp}/i.json"
inf_before="$(sha256sum "${tmp}/i.json")"
expect 0 "| inference resnet50 bs1 fp16 channels_last eager |" \
  "${bin}/gpuperf_compare" "${tmp}/i.json" "${ex}/h200-resnet50-infer-fp16-cl-graph.json" "${tmp}/a.json"
expect 0 "percentiles only" "${bin}/gpuperf_compare" "${tmp}/i.json" "${tmp}/i.json"
expect 0 "1 inference result(s)" "${bin}/gpuperf_report" "${tmp}/i.json" "${tmp}/a.json" -o "${tmp}/r.html"
expect 0 "Basis: measured on H200 SXM 141GB" "${bin}/gpuperf_advise" --model resnet50 \
  --mode inference --precision fp16 --latency-budget-ms 5 --results "${tmp}/i.json"
# The shipped MLPerf H100 figure ranks in a table of its own only when no PyTorch figure exists.
printf '{"schema": "gpuperf.published/1", "results": [%s]}' '{"gpu": "8x H100", "gpu_id":
  "h100-sxm5-80gb", "gpu_count": 8, "model": "resnet50", "precision": "amp",
  "images_per_second": 56800, "stack": "mlperf", "source": "MLPerf v3.0"}' > "${tmp}/mlperf.json"
expect 0 "### MLPerf figures" "${bin}/gpuperf_advise" --model resnet50 --precision fp16 \
  --published "${tmp}/mlperf.json"
sed 's/"mlperf"/"mxnet"/' "${tmp}/mlperf.json" > "${tmp}/mxnet.json"
expect 2 "field 'results[0].stack' is 'mxnet', expected 'pytorch' or 'mlperf'" \
  "${bin}/gpuperf_advise" --model resnet50 --published "${tmp}/mxnet.json"
expect 0 "Basis: datasheet figures only: no measured inference result matches this workload \
(advise() was given none)" \
  "${bin}/gpuperf_advise" --model resnet50 --mode inference
expect 2 "--latency-budget-ms: must be > 0, got '-1'" "${bin}/gpuperf_advise" --model resnet50 \
  --mode inference --latency-budget-ms=-1
expect 2 "--latency-budget-ms: '5' applies to --mode inference only" "${bin}/gpuperf_advise" \
  --model resnet50 --latency-budget-ms 5
# Per-GPU prices and a run (#32): 1e9 tokens of a 7e9-parameter model at 30% of the H200's 989.4
# bf16 TFLOPS take 6 x 7e9 x 1e9 / 296.82e12 / 3600 = 39.31 h, at 3.5 USD/h 137.57 USD.
expect 0 "run cost: 39.31 h x 1 GPU(s) x 3.500 USD per GPU-hour (given for this GPU) = 137.57 USD" \
  "${bin}/gpuperf_advise" --parameters 7e9 --sequence-length 4096 --tokens 1e9 --price h200=3.5
# The default rental-price table (#32): a GPU given no price takes the table's dated on-demand
# price; the run above at a table's 4 USD/h for the H200 costs 39.31 h x 4 = 157.22 USD.
printf '{"schema": "gpuperf.rental_prices/1", "prices": [%s]}' '{"gpu_id": "h200-sxm-141gb",
  "usd_per_gpu_hour": 4, "provider": "Test Cloud", "source": "https://example.com/pricing",
  "date": "2026-01-31"}' > "${tmp}/prices.json"
expect 0 "run cost: 39.31 h x 1 GPU(s) x 4.000 USD per GPU-hour (on-demand at Test Cloud, \
2026-01-31) = 157.22 USD" "${bin}/gpuperf_advise" --parameters 7e9 --sequence-length 4096 \
  --tokens 1e9 --default-prices "${tmp}/prices.json"
expect 0 "cost basis: 3.49 USD per GPU-hour, on-demand at RunPod (Secure Cloud), 2026-09-25" \
  "${bin}/gpuperf_advise" --model resnet50
expect 0 "cost basis: price 30000 USD (upper end of a third-party range) over 3 years" \
  "${bin}/gpuperf_advise" --model resnet50 --no-default-prices
sed 's/"usd_per_gpu_hour": 4/"usd_per_gpu_hour": 0/' "${tmp}/prices.json" > "${tmp}/free.json"
expect 2 "free.json: field 'prices[0] (h200-sxm-141gb).usd_per_gpu_hour' is 0, expected > 0" \
  "${bin}/gpuperf_advise" --model resnet50 --default-prices "${tmp}/free.json"
# 16e9 parameters on 8 H100s: ZeRO-2, 2 x 16e9 + 14 x 16e9 / 8 + 5e9 reserve = 65e9 per GPU.
expect 0 "| H100 SXM5 80GB | ZeRO-2 | 65 GB / 80 GB |" \
  "${bin}/gpuperf_advise" --parameters 16e9 --gpus 8
expect 2 "--price: 'h100-sxm5-80gb=0' must be a finite price > 0" "${bin}/gpuperf_advise" \
  --model resnet50 --price h100-sxm5-80gb=0
expect 2 "--tokens: '1e+09' applies to a parameter-count model" "${bin}/gpuperf_advise" \
  --model resnet50 --tokens 1e9
# Will it fit (#36): 10B parameters with AMP Adam need ZeRO-1 on 8 x 80 GB, offload on one.
expect 0 "| A100 SXM4 80GB | 80 | no | yes | yes | yes | yes | yes | ZeRO-1 |" \
  "${bin}/gpuperf_advise" --fit --parameters 10e9 --gpus 8
expect 0 "| A100 SXM4 80GB | 80 | no | no | yes | checkpointing + offload |" \
  "${bin}/gpuperf_advise" --fit --parameters 10e9 --gpu a100-sxm4-80gb
expect 2 "--top: applies to the ranking, not to --fit" "${bin}/gpuperf_advise" --fit \
  --parameters 10e9 --top 3
sed 's/"p50_s": [0-9.e-]*/"p50_s": "fast"/' "${tmp}/i.json" > "${tmp}/bad-infer.json"
expect 2 "bad-infer.json: inference result: field 'batches[0].latency.p50_s' is not a number" \
  "${bin}/gpuperf_compare" "${tmp}/bad-infer.json"
sed 's/"gpuperf.inference\/1"/"gpuperf.inference\/9"/' "${tmp}/i.json" > "${tmp}/future.json"
expect 2 "future.json: field 'schema' is 'gpuperf.inference/9'" \
  "${bin}/gpuperf_report" "${tmp}/future.json" -o "${tmp}/r.html"
# Records that contradict themselves: a second device name (a reader would keep the last and
# read another GPU), a median far from its windows. Every program refuses them in one line.
sed 's/"name": "NVIDIA H200"/"name": "NVIDIA H200", "name": "Tesla V100-SXM2-16GB"/' \
  "${tmp}/a.json" > "${tmp}/twice.json"
sed 's/"median": [0-9.e+-]*/"median": 9e14/' "${tmp}/a.json" > "${tmp}/median.json"
for bad in "twice.json: run record: field 'device.name' appears twice" \
           "median.json: run record: field 'throughput.median' is 9e+14"; do
  file="${tmp}/${bad%%:*}"
  expect 2 "${bad}" "${bin}/gpuperf_compare" "${file}"
  expect 2 "${bad}" "${bin}/gpuperf_report" "${file}" -o "${tmp}/r.html"
  expect 2 "${bad}" "${bin}/gpuperf_advise" --model resnet50 --batch-size 256 --results "${file}"
done
if [[ "$(sha256sum "${tmp}/i.json")" != "${inf_before}" ]]; then
  echo "FAIL: an inference result changed after being read"; fail=1
fi

if [[ "$(sha256sum "${tmp}/a.json")" != "${sum_before}" ]]; then
  echo "FAIL: a result file changed after being read"; fail=1
fi
exit "${fail}"
