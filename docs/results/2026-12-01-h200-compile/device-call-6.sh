#!/usr/bin/env bash
# Device call 6 (one H200, the session's last device minutes): the headline's ResNet-50 training
# section, 3 alternating repeats (gpuperf, PyTorch eager, torch.compile default and
# reduce-overhead); then, in what time is left, the whole build and the [gpu] tests.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; git describe --always --dirty; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 200 cmake --build build-gpu -j16 --target inference_benchmark seed_benchmark resnet50_benchmark > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
timeout $(( 400 - SECONDS )) benchmarks/headline.sh build-gpu $L/headline 3 "train-resnet50" > $L/headline.md 2> $L/headline.err; echo "headline rc=$? at ${SECONDS}s"
cat $L/headline.md; tail -4 $L/headline.err
tar czf $OUT/headline.tgz -C $L headline
timeout $(( 470 - SECONDS )) cmake --build build-gpu -j16 > $L/build-all.txt 2>&1 && \
  timeout $(( 490 - SECONDS )) ctest --test-dir build-gpu -L gpu -j4 --output-on-failure > $L/ctest-gpu.txt 2>&1; echo "gpu tests rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run' $L/ctest-gpu.txt | head
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
