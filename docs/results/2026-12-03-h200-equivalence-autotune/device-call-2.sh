#!/usr/bin/env bash
# Device call 2 (one H200, warm from call 1: the build is reused), tree $GPUPERF_COMMIT: the
# inference headline against torch.compile max-autotune with freezing (Inductor's own CUDA
# graphs), one batch size per peer process so that each finished batch size is kept, beside
# gpuperf's same call and compile + freezing + graph; then default-mode repeats while time lasts.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
save() { tar czf $OUT/logs.tgz -C $OUT logs; }
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
infer=(--model resnet50 --precision fp16 --memory-format channels_last --warmup 20 --iterations 200 --cudnn-benchmark-from 128)
D=$L/infer-autotune; mkdir -p $D
printf '{"commit": "%s", "started_utc": "%s", "sections": "infer-resnet50", "repeats": 1}\n' "${GPUPERF_COMMIT:-?}" "$(date -u +%Y-%m-%dT%H:%MZ)" > $D/run.json
build-gpu/examples/inference_benchmark "${infer[@]}" --batch-sizes 1,8,256 --quiet --json $D/infer-resnet50-gpuperf-1.json > /dev/null 2> $D/gpuperf.err; echo "gpuperf rc=$? at ${SECONDS}s"
for b in 1 256 8; do
  for mode in compile-max-autotune compile-freeze-graph; do
    [ $(( 560 - SECONDS )) -lt 30 ] && break 2
    timeout $(( 560 - SECONDS )) python3 benchmarks/python/infer_peer.py "${infer[@]}" --batch-sizes $b --mode $mode 2>> $D/peer.err |
      sed "s/^{/{\"section\": \"infer-resnet50\", \"variant\": \"$mode\", \"repeat\": 1, /" >> $D/peer.jsonl
    echo "$mode batch $b rc=${PIPESTATUS[0]} at ${SECONDS}s"
    save
  done
done
python3 benchmarks/python/headline.py $D 2>&1 | grep -E "^\||INVALID|error" | cut -c1-300
save
