#!/usr/bin/env bash
# The GPU input pipeline side by side: gpuperf's gpu_loader_bench (nvJPEG's batched decode, one
# resize/crop/flip/normalise kernel) against torchvision's batched GPU decode with GPU transforms
# (benchmarks/python/gpu_loader_peer.py), the same folder, training transform, batch size and
# number of file-reading threads / DataLoader workers, float32 channels_last batches on the GPU;
# alternating, several repeats; prints the medians and the ratio. Also torchvision's decode alone
# (no transform): a bound on any PyTorch pipeline built on it.
#
# Usage: benchmarks/gpu_loader_side_by_side.sh <gpuperf build dir> <JPEG folder> [repeats]
#   [threads] [batches] [batch size]   (PYTHON: the interpreter with torch and torchvision)
set -euo pipefail
build=$1
data=$2
repeats=${3:-3}
threads=${4:-4}
batches=${5:-40}
batch_size=${6:-256}
python=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
[[ -x $build/benchmarks/gpu_loader_bench ]] || { echo "gpu_loader_side_by_side.sh: $build/benchmarks/gpu_loader_bench not built" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "gpu_loader_side_by_side.sh: repeats must be >= 1, got '$repeats'" >&2; exit 2; }
ours=()
theirs=()
bound=()
for r in $(seq 1 "$repeats"); do
  line=$("$build/benchmarks/gpu_loader_bench" --data "$data" --decode gpu --threads "$threads" \
    --batch-size "$batch_size" --batches "$batches" | grep " img/s")
  ours+=("$(echo "$line" | sed -E 's/.*: ([0-9.e+]+) img\/s;.*/\1/')")
  theirs+=("$("$python" "$here/python/gpu_loader_peer.py" --data "$data" --workers "$threads" \
    --batch-size "$batch_size" --batches "$batches" | sed -E 's/.*"images_per_second": ([0-9.e+]+),.*/\1/')")
  bound+=("$("$python" "$here/python/gpu_loader_peer.py" --data "$data" --workers "$threads" \
    --batch-size "$batch_size" --batches "$batches" --transform none | sed -E 's/.*"images_per_second": ([0-9.e+]+),.*/\1/')")
  echo "repeat $r: gpuperf ${ours[-1]} img/s, torchvision GPU decode + transforms ${theirs[-1]} img/s, its decode alone ${bound[-1]} img/s"
done
"$python" - "${#ours[@]}" "${ours[@]}" "${theirs[@]}" "${bound[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1]); v = [float(x) for x in sys.argv[2:]]
ours, theirs, bound = v[:n], v[n:2 * n], v[2 * n:]
a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(bound)
print(f"median over {n} repeats: gpuperf {a:.1f} img/s [{min(ours):.1f}, {max(ours):.1f}], "
      f"torchvision GPU decode + transforms {b:.1f} img/s [{min(theirs):.1f}, {max(theirs):.1f}]: "
      f"{a / b:.2f}x; torchvision's decode alone {c:.1f} img/s [{min(bound):.1f}, {max(bound):.1f}]: "
      f"gpuperf's whole pipeline {a / c:.2f}x it")
PY
