#!/usr/bin/env bash
# Will it fit, checked: each configuration trains briefly with its predicted peak memory in the
# record (TrainingRun::predict_memory, training_memory.h) beside the measured peaks, and
# `--batch-size max` finds the largest batch of ResNet-50 and GPT-2 124M that trains. Then
# benchmarks/python/summarize_memory.py writes <out>/memory.md and memory.json: predicted vs
# measured peak (allocated and reserved) with the error of each row, and the batch searches.
#
# Usage: benchmarks/memory_validation.sh <gpuperf build dir> <output dir> [parts]
#   parts: any of lm resnet seed max (default: all four)
set -euo pipefail
build=$1
out=$2
parts=${3:-"lm resnet seed max"}
here=$(cd "$(dirname "$0")" && pwd)
for program in lm_benchmark resnet50_benchmark seed_benchmark; do
  [[ -x $build/apps/$program ]] || { echo "memory_validation.sh: $build/apps/$program not built" >&2; exit 2; }
done
mkdir -p "$out"
commit=${GPUPERF_COMMIT:-$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)}
printf '{"commit": "%s", "started_utc": "%s", "parts": "%s"}\n' \
  "$commit" "$(date -u +%Y-%m-%dT%H:%MZ)" "$parts" >"$out/run.json"
short=(--warmup 5 --steps-per-window 5 --windows 2 --no-oom-back-off)

# One row: a name, a program, its settings. A run that fails leaves its log and no record. The
# batch searches keep their progress lines: each try is logged there.
row() {
  local name=$1 program=$2 quiet=--quiet
  shift 2
  [[ $name == *max* ]] && quiet=
  "$build/apps/$program" "$@" "${short[@]}" $quiet --json "$out/$name.json" >"$out/$name.txt" 2>&1 ||
    echo "$name: $program exited $?" | tee -a "$out/failures.txt"
}

for part in $parts; do
  case $part in
    lm)
      for b in 8 16 32; do row "gpt2-b$b-s1024" lm_benchmark --model gpt2 --batch-size "$b" --seq-len 1024; done
      row gpt2-b16-s512 lm_benchmark --model gpt2 --batch-size 16 --seq-len 512
      for b in 16 64; do
        row "gpt2-b$b-s1024-ckpt" lm_benchmark --model gpt2 --batch-size "$b" --seq-len 1024 --activation-checkpointing
      done
      row gpt2-medium-b8-s1024 lm_benchmark --model gpt2-medium --batch-size 8 --seq-len 1024
      row gpt2-medium-b16-s1024-ckpt lm_benchmark --model gpt2-medium --batch-size 16 --seq-len 1024 --activation-checkpointing
      row llama-1b-b4-s2048 lm_benchmark --model llama-1b --batch-size 4 --seq-len 2048
      row llama-1b-b2-s4096 lm_benchmark --model llama-1b --batch-size 2 --seq-len 4096
      row llama-1b-b8-s2048-ckpt lm_benchmark --model llama-1b --batch-size 8 --seq-len 2048 --activation-checkpointing
      ;;
    resnet)
      # lr 0.02: at the default 0.1 the small batches diverge in so few steps (random labels)
      for b in 32 64 128 256 512; do row "resnet50-b$b" resnet50_benchmark --batch-size "$b" --lr 0.02; done
      ;;
    seed)
      for b in 256 2048; do row "simple-b$b" seed_benchmark --batch-size "$b"; done
      ;;
    max)
      row resnet50-max resnet50_benchmark --batch-size max --lr 0.02
      row gpt2-max-s1024 lm_benchmark --model gpt2 --batch-size max --seq-len 1024
      ;;
    *) echo "memory_validation.sh: unknown part '$part' (lm, resnet, seed, max)" >&2; exit 2 ;;
  esac
done
python3 "$here/python/summarize_memory.py" "$out"
