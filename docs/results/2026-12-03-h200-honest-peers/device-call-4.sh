#!/usr/bin/env bash
# Device call 4 (one H200, warm: the build is reused), tree $GPUPERF_COMMIT: one ResNet-50
# inference run of torch.compile max-autotune + freezing (tagged as repeat 1 of its own folder),
# then further single inference repeats while the time lasts.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit --format=csv; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 330 cmake --build build-gpu -j16 --target resnet50_benchmark seed_benchmark inference_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
export GPUPERF_COMMIT
M=$L/max-autotune; mkdir -p $M
printf '{"commit": "%s", "started_utc": "%s", "sections": "infer-resnet50 (compile-max-autotune only)", "repeats": 1}\n' "${GPUPERF_COMMIT:-?}" "$(date -u +%Y-%m-%dT%H:%MZ)" > $M/run.json
PYTHONUNBUFFERED=1 timeout $(( 575 - SECONDS )) python3 benchmarks/python/infer_peer.py --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8,256 --warmup 20 --iterations 200 --cudnn-benchmark-from 128 --mode compile-max-autotune 2> $M/peer.err | sed 's/^{/{"section": "infer-resnet50", "variant": "compile-max-autotune", "repeat": 1, /' > $M/peer.jsonl
echo "max-autotune rc=${PIPESTATUS[0]} at ${SECONDS}s"; cut -c1-300 $M/peer.jsonl; tail -3 $M/peer.err
for r in 3 4; do
  [ $(( 575 - SECONDS )) -lt 120 ] && break
  timeout $(( 575 - SECONDS )) benchmarks/headline.sh build-gpu $L/infer-$r 1 infer-resnet50 > $L/infer-$r.md 2> $L/infer-$r.err; echo "infer repeat $r rc=$? at ${SECONDS}s"
done
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
