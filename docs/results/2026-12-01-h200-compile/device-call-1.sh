#!/usr/bin/env bash
# Device call 1 (one H200): the tree's CUDA build and every test but the 2-GPU ones; during the
# build, the batch-1 inference profile (benchmarks/python/profile_inference.py: each of
# ResNet-50's 53 folded convolutions alone, fused and unfused, at batches 1, 2 and 8); after it,
# the torch.compile peers once each (short), to check that they run.
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
L=$OUT/logs; mkdir -p $L
{ date -u; git rev-parse HEAD 2>/dev/null; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
(python3 benchmarks/python/profile_inference.py --batch-sizes 1,2,8 --json $L/profile-inference.json > $L/profile-inference.txt 2>&1; echo "profile rc=$?" >> $L/profile-inference.txt) &
prof=$!
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 -- -k 0 > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E -A5 'error|FAILED' $L/build.txt | head -40
wait $prof; echo "profile done at ${SECONDS}s"; grep -E "^## |^batch|sum of|ms at" $L/profile-inference.txt | head -40; tail -3 $L/profile-inference.txt
timeout 170 ctest --test-dir build-gpu -j6 -LE "tsan|gpu2" --output-on-failure --timeout 160 > $L/ctest.txt 2>&1; echo "ctest rc=$? at ${SECONDS}s"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run|\*\*\*Skipped' $L/ctest.txt | head -30
grep -E -B3 -A14 'FAILED:' $L/ctest.txt | head -50
P=benchmarks/python
seed=(--model simple --batch-size 256 --optimizer adam --lr 1e-3 --precision bf16 --fused on --warmup 3 --windows 3)
for m in default reduce-overhead; do
  timeout 90 python3 $P/train_peer.py "${seed[@]}" --compile $m > $L/compile-seed-$m.json 2> $L/compile-seed-$m.err; echo "seed compile $m rc=$? at ${SECONDS}s"; cut -c1-400 $L/compile-seed-$m.json; tail -2 $L/compile-seed-$m.err
done
timeout 120 python3 $P/infer_peer.py --model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1 --warmup 20 --iterations 200 --mode compile-graph > $L/compile-infer.json 2> $L/compile-infer.err; echo "infer compile-graph rc=$? at ${SECONDS}s"; cut -c1-600 $L/compile-infer.json; tail -2 $L/compile-infer.err
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
