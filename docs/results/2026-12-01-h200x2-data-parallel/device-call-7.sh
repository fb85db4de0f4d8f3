#!/usr/bin/env bash
# Device call 7 (one H200): any forward and loss, and the transformer example (issue #14, points
# 6-7): build, every test but the 2-GPU ones, transformer_lm at its defaults (CUDA graph, bf16),
# then the seed and ResNet-50 defaults once more (the generalised step must not cost speed).
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
left() { echo $(( 400 - SECONDS )); }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 250 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -40
timeout 150 ctest --test-dir build-gpu -j6 -LE "tsan|gpu2" --output-on-failure --timeout 140 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run|^gpu |^cpu ' $L/ctest.txt | head -20
grep -E -B3 -A14 'FAILED:' $L/ctest.txt | head -50
timeout 60 build-gpu/examples/transformer_lm --checkpoint $L/lm.ckpt > $L/transformer_lm.txt 2>&1; echo "transformer_lm rc=$?"; cat $L/transformer_lm.txt | tail -9; rm -f $L/lm.ckpt
timeout $(( $(left) - 5 )) benchmarks/side_by_side.sh build-gpu $L/train 1 "seed-fp16-default resnet50-fp16-default" > $L/train-summary.md 2>&1; head -5 $L/train-summary.md
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
