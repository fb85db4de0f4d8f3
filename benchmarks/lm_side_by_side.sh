#!/usr/bin/env bash
# Language models side by side: gpuperf's lm_benchmark against the PyTorch peer
# (benchmarks/python/lm_peer.py: eager, a manual CUDA graph, torch.compile default, and
# max-autotune) on the same model, initial weights (the peer draws them as gpuperf does, from the
# same seed), batch, sequence, optimizer and synthetic tokens, alternating
# within each repeat; then benchmarks/python/summarize_lm.py writes <out>/lm.md and lm.json with
# the medians over repeats, MFU, peak memory, compile times and the ratio to the best PyTorch
# variant that trained (a run whose loss is not finite or did not fall is INVALID and left out).
#
# Usage: benchmarks/lm_side_by_side.sh <gpuperf build dir> <output dir> [repeats] [rows]
#   rows: any of gpt2 gpt2-b32 gpt2-large llama-1b gpt2-acc2 llama-1b-acc2 (default: gpt2;
#   gpt2-b32: micro-batch 32; -acc2: the row's batch in 2 micro-batches, --accumulation-steps 2 on
#   both sides)
#   LM_PEER_VARIANTS: the PyTorch variants (default: eager graph compile max-autotune);
#   max-autotune runs once per row whatever the repeats (its compile takes minutes)
#   LM_GPUPERF_OPTIONS: more lm_benchmark options for gpuperf's side, split at spaces (for example
#   --timed-gemm-algorithms); its records name what ran (config.kernel_fusion)
#   LM_POWER_SAMPLES=0: no power samples (by default, where <build>/apps/gpu_info is built, each
#   run's GPU utilisation, power and SM clock from NVML every 250 ms, `gpu_info --watch 0.25
#   --json`, into <row>-<side>-<repeat>.power.jsonl, the same way for both sides;
#   summarize_lm.py reports the GPU run.json names)
set -euo pipefail
build=$1
out=$2
repeats=${3:-3}
rows=${4:-gpt2}
variants=${LM_PEER_VARIANTS:-"eager graph compile max-autotune"}
read -r -a gpuperf_options <<<"${LM_GPUPERF_OPTIONS:-}"
here=$(cd "$(dirname "$0")" && pwd)
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "lm_side_by_side.sh: repeats must be >= 1, got '$repeats'" >&2; exit 2; }
[[ -x $build/apps/lm_benchmark ]] || { echo "lm_side_by_side.sh: $build/apps/lm_benchmark not built" >&2; exit 2; }
mkdir -p "$out"
touch "$out/peer.jsonl"
commit=${GPUPERF_COMMIT:-$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)}
gpu=${CUDA_VISIBLE_DEVICES:-0}
gpu=${gpu%%,*}  # the GPU the runs take (an NVML index or UUID)
printf '{"commit": "%s", "started_utc": "%s", "rows": "%s", "repeats": %s, "gpu": "%s", '\
'"gpuperf_options": "%s"}\n' "$commit" "$(date -u +%Y-%m-%dT%H:%MZ)" "$rows" "$repeats" "$gpu" \
  "${gpuperf_options[*]}" >"$out/run.json"

# Runs "$@" with gpu_info sampling the GPUs into $1 (where it is built).
sampled() {
  local samples=$1 rc=0 sampler=
  shift
  if [[ ${LM_POWER_SAMPLES:-1} != 0 && -x $build/apps/gpu_info ]]; then
    "$build/apps/gpu_info" --watch 0.25 --json --no-processes >"$samples" 2>/dev/null &
    sampler=$!
  fi
  "$@" || rc=$?
  if [[ -n $sampler ]]; then
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
  fi
  return "$rc"
}

for row in $rows; do
  case $row in
    gpt2) settings=(--model gpt2 --batch-size 16 --seq-len 1024) ;;
    gpt2-b32) settings=(--model gpt2 --batch-size 32 --seq-len 1024) ;;
    gpt2-large) settings=(--model gpt2-large --batch-size 8 --seq-len 1024) ;;
    llama-1b) settings=(--model llama-1b --batch-size 4 --seq-len 2048) ;;
    gpt2-acc2) settings=(--model gpt2 --batch-size 16 --seq-len 1024 --accumulation-steps 2) ;;
    llama-1b-acc2) settings=(--model llama-1b --batch-size 4 --seq-len 2048 --accumulation-steps 2) ;;
    *) echo "lm_side_by_side.sh: unknown row '$row' (gpt2, gpt2-b32, gpt2-large, llama-1b," \
         "gpt2-acc2, llama-1b-acc2)" >&2; exit 2 ;;
  esac
  shared=("${settings[@]}" --lr 6e-4 --beta2 0.95 --weight-decay 0.1 --warmup 10
          --steps-per-window 10 --windows 5)
  for r in $(seq 1 "$repeats"); do
    sampled "$out/$row-gpuperf-$r.power.jsonl" "$build/apps/lm_benchmark" "${shared[@]}" \
      "${gpuperf_options[@]}" --quiet --json "$out/$row-gpuperf-$r.json" >"$out/$row-gpuperf-$r.txt"
    for v in $variants; do
      [[ $v == max-autotune && $r -gt 1 ]] && continue
      sampled "$out/$row-$v-$r.power.jsonl" python3 "$here/python/lm_peer.py" "${shared[@]}" \
        --variant "$v" 2>>"$out/peer.err" |
        sed "s/^{/{\"row\": \"$row\", \"repeat\": $r, /" >>"$out/peer.jsonl"
    done
  done
done
python3 "$here/python/summarize_lm.py" "$out"
