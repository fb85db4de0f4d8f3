#!/usr/bin/env bash
# The CPU input pipeline side by side: gpuperf's cpu_loader_bench (libjpeg-turbo, its own
# resampling, a thread pool) against PyTorch's DataLoader + torchvision ImageFolder + PIL
# (benchmarks/python/loader_peer.py), the same folder, transform, batch size and number of
# decoding threads / worker processes, alternating, several repeats; prints the medians and the
# ratio. With 1 thread / 1 worker the figures are per core. Host-bound by nature: the figures
# follow the machine's CPU.
#
# Usage: benchmarks/loader_side_by_side.sh <gpuperf build dir> <JPEG folder> [repeats] [threads]
#   [batches]   (PYTHON: the interpreter with torch and torchvision; default python3)
set -euo pipefail
build=$1
data=$2
repeats=${3:-3}
threads=${4:-1}
batches=${5:-10}
python=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
[[ -x $build/benchmarks/cpu_loader_bench ]] || { echo "loader_side_by_side.sh: $build/benchmarks/cpu_loader_bench not built" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "loader_side_by_side.sh: repeats must be >= 1, got '$repeats'" >&2; exit 2; }
ours=()
theirs=()
for r in $(seq 1 "$repeats"); do
  line=$("$build/benchmarks/cpu_loader_bench" --data "$data" --threads "$threads" --batch-size 64 \
    --batches "$batches" | grep " img/s")
  ours+=("$(echo "$line" | sed -E 's/.*: ([0-9.e+]+) img\/s;.*/\1/')")
  theirs+=("$("$python" "$here/python/loader_peer.py" --data "$data" --workers "$threads" \
    --batch-size 64 --batches "$batches" | sed -E 's/.*"images_per_second": ([0-9.e+]+),.*/\1/')")
  echo "repeat $r: gpuperf ${ours[-1]} img/s, PyTorch DataLoader + PIL ${theirs[-1]} img/s"
done
"$python" - "${#ours[@]}" "${ours[@]}" "${theirs[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1]); ours = [float(v) for v in sys.argv[2:2 + n]]; theirs = [float(v) for v in sys.argv[2 + n:]]
a, b = statistics.median(ours), statistics.median(theirs)
print(f"median over {n} repeats: gpuperf {a:.1f} img/s [{min(ours):.1f}, {max(ours):.1f}], "
      f"PyTorch {b:.1f} img/s [{min(theirs):.1f}, {max(theirs):.1f}]: {a / b:.2f}x")
PY
