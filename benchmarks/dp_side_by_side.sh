#!/usr/bin/env bash
# Data-parallel training side by side: gpuperf (--nproc-per-node) and PyTorch DDP under torchrun
# (python/ddp_peer.py), same model and settings, on 1 and 2 GPUs, alternating, REPEATS times;
# with LINKS, the 2-GPU runs again with NCCL restricted to host memory and to sockets.
#   dp_side_by_side.sh <build dir> <out dir> <repeats> <resnet50|simple> [links]
# Writes <out>/<config>-<repeat>.json per run and prints the summary table
# (python/summarize_dp.py) with medians and ratios.
set -uo pipefail
build=$1 out=$2 repeats=$3 model=$4 links=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
if [ "$model" = resnet50 ]; then
  ours=("$build/apps/resnet50_benchmark")
  peer=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last
        --optimizer sgd --lr 0.1 --fused on --warmup 15 --steps-per-window 10 --windows 8)
else
  ours=("$build/apps/seed_benchmark")
  peer=(--model simple --batch-size 256 --precision fp16 --optimizer adam --lr 1e-3 --fused on
        --warmup 20 --steps-per-window 50 --windows 10)
fi
variants=("default")
[ -n "$links" ] && variants+=("hostmem" "sockets")
run_env() {  # <variant> <command...>
  case "$1" in
    hostmem) shift; NCCL_P2P_DISABLE=1 "$@" ;;
    sockets) shift; NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 "$@" ;;
    *) shift; "$@" ;;
  esac
}
for r in $(seq 1 "$repeats"); do
  "${ours[@]}" --quiet --json "$out/gpuperf-1gpu-$r.json" > "$out/gpuperf-1gpu-$r.txt" 2>&1
  base=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['throughput']['median'])" \
         "$out/gpuperf-1gpu-$r.json" 2>/dev/null || echo 0)
  torchrun --nproc-per-node 1 "$here/python/ddp_peer.py" "${peer[@]}" \
    > "$out/ddp-1gpu-$r.json" 2> "$out/ddp-1gpu-$r.err"
  for v in "${variants[@]}"; do
    run_env "$v" "${ours[@]}" --nproc-per-node 2 --baseline-throughput "$base" --quiet \
      --json "$out/gpuperf-2gpu-$v-$r.json" > "$out/gpuperf-2gpu-$v-$r.txt" 2>&1
    run_env "$v" torchrun --nproc-per-node 2 "$here/python/ddp_peer.py" "${peer[@]}" \
      > "$out/ddp-2gpu-$v-$r.json" 2> "$out/ddp-2gpu-$v-$r.err"
  done
done
python3 "$here/python/summarize_dp.py" "$out"
