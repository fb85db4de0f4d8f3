#!/usr/bin/env bash
# Where to decode the JPEGs that feed training: ResNet-50 trained on one folder with the files
# decoded on the CPU threads, on the GPU (nvJPEG), and on both (--host-decode-share S), each run
# also timing the same steps on synthetic batches (--compare-synthetic); the settings alternate
# within each repeat. Prints per setting the median files/synthetic ratio and the median rate.
# Host-bound by nature: the CPU share follows the host's cores.
# PyTorch's ResNet-50 (benchmarks/python/train_peer.py, torch.compile default, the same batch,
# precision, optimizer and windows) trains on the same files in the same rotation, fed by
# DataLoader + ImageFolder + PIL ("peer-dataloader") and by torchvision's batched GPU decode with
# GPU transforms ("peer-gpu"), with as many loader workers as gpuperf's threads; the summary
# gives gpuperf's best setting against each. PEERS="" skips them, PEERS="gpu" runs one.
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
peers=(${PEERS-dataloader gpu})
settings=("cpu" "gpu" "${shares[@]/#/share-}" "${peers[@]/#/peer-}")
for r in $(seq 1 "$repeats"); do
  for s in "${settings[@]}"; do
    case $s in
      cpu|gpu) flags=(--decode "$s") ;;
      share-*) flags=(--decode gpu --host-decode-share "${s#share-}") ;;
      peer-*)
        python3 "$(dirname "$0")/python/train_peer.py" --model resnet50 --batch-size 256 \
          --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 \
          --steps-per-window 10 --windows 6 --compile default --data "$data" \
          --loader "${s#peer-}" --loader-workers "$threads" >"$out/$s-$r.json" 2>"$out/$s-$r.txt" || true
        echo "repeat $r, $s: $(tail -n 1 "$out/$s-$r.json" | head -c 200)"
        continue ;;
    esac
    "$bench" --model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last \
      --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 10 --windows 6 --data "$data" \
      --loader-threads "$threads" --compare-synthetic "${flags[@]}" \
      --json "$out/$s-$r.json" >"$out/$s-$r.txt" 2>&1
    echo "repeat $r, $s: $(grep -E '^On synthetic' "$out/$s-$r.txt" || echo "no result (see $out/$s-$r.txt)")"
  done
done
python3 - "$out" "${settings[@]}" <<'PY'
import glob, json, math, statistics, sys
out, settings = sys.argv[1], sys.argv[2:]
best = None  # gpuperf's setting with the highest median rate
peers = {}
for s in settings:
    if s.startswith("peer-"):
        rates = []
        for p in sorted(glob.glob(f"{out}/{s}-*.json")):
            lines = open(p).read().strip().splitlines()
            r = json.loads(lines[-1]) if lines else None
            # A run that did not train (loss not finite, or not below its first) does not count.
            if r and math.isfinite(r["final_loss"]) and r["final_loss"] < r["first_loss"]:
                rates.append(r["median"])
            else:
                print(f"{s}: INVALID run {p} (no record, or its loss did not fall)")
        if rates:
            peers[s] = statistics.median(rates)
            print(f"{s}: {peers[s]:.0f} img/s over {len(rates)} runs")
        continue
    runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{s}-*.json"))]
    if not runs:
        print(f"{s}: no records"); continue
    ratios = [r["metrics"]["data_to_synthetic_ratio"] for r in runs]
    rates = [r["throughput"]["median"] for r in runs]
    print(f"{s}: files/synthetic {statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}], "
          f"{statistics.median(rates):.0f} img/s over {len(runs)} runs")
    if best is None or statistics.median(rates) > best[1]:
        best = (s, statistics.median(rates))
for s, rate in peers.items():
    if best:
        print(f"gpuperf {best[0]} against {s}: {best[1] / rate:.2f}x (ratio of medians)")
PY
