#!/usr/bin/env bash
# Where to decode the JPEGs that feed training: ResNet-50 trained on one folder with the files
# decoded on the CPU threads, on the GPU (nvJPEG), and on both (--host-decode-share S), each run
# also timing the same steps on synthetic batches (--compare-synthetic); the settings alternate
# within each repeat. Prints per setting the median files/synthetic ratio and the median rate.
# Host-bound by nature: the CPU share follows the host's cores.
#
# Usage: benchmarks/decode_share_side_by_side.sh <gpuperf build dir> <JPEG folder> <out dir>
#   [repeats] [loader threads] [shares...]   (default: 2 repeats, 16 threads, shares 0.25 0.5 0.75)
set -euo pipefail
build=$1
data=$2
out=$3
repeats=${4:-2}
threads=${5:-16}
shift $(( $# < 5 ? $# : 5 ))
shares=("$@")
[ ${#shares[@]} -eq 0 ] && shares=(0.25 0.5 0.75)
bench=$build/apps/resnet50_benchmark
[[ -x $bench ]] || { echo "decode_share_side_by_side.sh: $bench not built" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "decode_share_side_by_side.sh: repeats must be >= 1, got '$repeats'" >&2; exit 2; }
[[ -d $data ]] || { echo "decode_share_side_by_side.sh: $data is not a folder" >&2; exit 2; }
mkdir -p "$out"
settings=("cpu" "gpu" "${shares[@]/#/share-}")
for r in $(seq 1 "$repeats"); do
  for s in "${settings[@]}"; do
    case $s in
      cpu|gpu) flags=(--decode "$s") ;;
      share-*) flags=(--decode gpu --host-decode-share "${s#share-}") ;;
    esac
    "$bench" --model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last \
      --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6 --data "$data" \
      --loader-threads "$threads" --compare-synthetic "${flags[@]}" \
      --json "$out/$s-$r.json" >"$out/$s-$r.txt" 2>&1
    echo "repeat $r, $s: $(grep -E '^On synthetic' "$out/$s-$r.txt" || echo "no result (see $out/$s-$r.txt)")"
  done
done
python3 - "$out" "${settings[@]}" <<'PY'
import glob, json, statistics, sys
out, settings = sys.argv[1], sys.argv[2:]
for s in settings:
    runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{s}-*.json"))]
    ratios = [r["metrics"]["data_to_synthetic_ratio"] for r in runs]
    rates = [r["throughput"]["median"] for r in runs]
    if not runs:
        print(f"{s}: no records"); continue
    print(f"{s}: files/synthetic {statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}], "
          f"{statistics.median(rates):.0f} img/s over {len(runs)} runs")
PY
