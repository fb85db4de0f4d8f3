#!/usr/bin/env bash
# Device call of 2026-12-07 (twenty-second session), from the repository root with $OUT set;
# carry [".deps"]. Runs, on whichever card comes, what the docs call "not yet verified on a GPU":
#   1. the inference sweep's out-of-memory stop (docs/inference.md): ResNet-50 fp16 at batch 64
#      then 65536 (the first convolution's output alone would be 105 GB), with the CUDA graph and
#      without, the second with a serving sweep after the cut (the server batches up to 64);
#   2. GPT-2 124M's kernel trace (16 x 1024, bf16, CUDA graph), for the time of the bias + GELU
#      backward kernel with its exp/reciprocal gradient (docs/language_models.md).
set -uo pipefail
source .deps/env.sh
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
echo "card: $(nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader | head -1)"
V=$OUT/verify
mkdir -p "$V"
{ [ -f build-gpu/build.ninja ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release; } >"$V/configure.log" 2>&1
cmake --build build-gpu -j16 --target inference_benchmark lm_benchmark >"$V/build.log" 2>&1 ||
  { grep -B2 -A12 "error" "$V/build.log" | head -60; exit 1; }
echo "built after $(el) s ($(git rev-parse --short HEAD 2>/dev/null || echo no-git))"
for graph in auto off; do
  timeout -k 5 150 build-gpu/apps/inference_benchmark --model resnet50 --precision fp16 \
    --batch-sizes 64,65536 --graph $graph --warmup 3 --iterations 20 \
    $([ $graph = off ] && echo --serve-rates 2000,20000 --serve-requests 4000) \
    --json "$V/oom-graph-$graph.json" >"$V/oom-graph-$graph.txt" 2>&1
  echo "oom graph=$graph rc=$? ($(el) s)"; tail -12 "$V/oom-graph-$graph.txt"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print({k: r.get(k) for k in ('out_of_memory','stop_reason','graph_mode','graph_fallback_reason')}, [b['batch_size'] for b in r['batches']])" "$V/oom-graph-$graph.json"
done
timeout -k 5 180 build-gpu/apps/lm_benchmark --model gpt2 --batch-size 16 --seq-len 1024 --warmup 10 \
  --windows 2 --steps-per-window 10 --kernel-trace /tmp/gpt2_trace.json --json "$V/gpt2.json" \
  >"$V/gpt2.txt" 2>&1
echo "gpt2 rc=$? ($(el) s)"; tail -4 "$V/gpt2.txt"
python3 benchmarks/python/profile_step.py --trace /tmp/gpt2_trace.json --steps 10 --batch-size 16 \
  --top 40 >"$V/gpt2_profile.txt" 2>&1
grep -i -E "gelu|ms GPU time|busy" "$V/gpt2_profile.txt"
echo "done after $(el) s"
