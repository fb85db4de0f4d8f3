#!/usr/bin/env bash
# Device call 3 (one H200, warm from call 2: the build is reused), tree $GPUPERF_COMMIT: the
# headline's ResNet-50 training section (benchmarks/headline.sh, 3 alternating repeats: gpuperf,
# PyTorch eager, torch.compile default and reduce-overhead with the zero-buffer fused SGD), then
# single inference repeats (gpuperf, eager, graph, compile-graph, compile-freeze-graph) into
# infer-N folders while the time lasts.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 330 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
export GPUPERF_COMMIT
timeout $(( 575 - SECONDS )) benchmarks/headline.sh build-gpu $L/train-resnet50 3 train-resnet50 > $L/train-resnet50.md 2> $L/train-resnet50.err; echo "train-resnet50 rc=$? at ${SECONDS}s"
tail -4 $L/train-resnet50.err; grep -E "^\| ResNet-50 training|INVALID" $L/train-resnet50.md | cut -c1-400
for r in 1 2 3; do
  [ $(( 575 - SECONDS )) -lt 120 ] && break
  timeout $(( 575 - SECONDS )) benchmarks/headline.sh build-gpu $L/infer-$r 1 infer-resnet50 > $L/infer-$r.md 2> $L/infer-$r.err; echo "infer repeat $r rc=$? at ${SECONDS}s"
done
python3 benchmarks/python/headline.py --out $L/merged $L/train-resnet50 $L/infer-* 2>&1 | grep -E "^\|" | cut -c1-300
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
