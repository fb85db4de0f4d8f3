#!/usr/bin/env bash
# Device call 2 (one H200): the final tree of the max-pool kernels (a 2-D grid with 32-bit index
# arithmetic; experiment switches and cuDNN's pooling removed) and batch 1's fc on the weight
# stored transposed: build, the [gpu] tests, a kernel trace of the training step, inference at
# batch 1 / 8 / 256 (2 runs); and cudnn_fusion_probe.cpp: what cuDNN's graph API offers the
# training step's convolutions (GenStats epilogue, scale-bias-ReLU prologue) on this GPU.
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
D=docs/results/2026-12-01-h200-own-kernels
{ date -u; echo "commit ${GPUPERF_COMMIT:-?}"; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; } > $L/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target resnet50_benchmark inference_benchmark test_fusion test_train test_inference > $L/build.txt 2>&1; echo "build rc=$? at ${SECONDS}s"
grep -E "error|FAILED" $L/build.txt | head -10
for t in test_fusion test_train test_inference; do
  timeout 150 build-gpu/tests/$t "[gpu]" > $L/$t-gpu.txt 2>&1; echo "$t [gpu] rc=$? at ${SECONDS}s"; tail -3 $L/$t-gpu.txt
done
CUDNN_INC=$(sed -n 's/^GPUPERF_CUDNN_INCLUDE_DIR:PATH=//p' build-gpu/CMakeCache.txt); CUDNN_LIB=$(dirname $CUDNN_INC)/lib
g++ -std=c++17 -O2 $D/cudnn_fusion_probe.cpp -I/usr/local/cuda/include -I$CUDNN_INC -L/usr/local/cuda/lib64 -L$CUDNN_LIB -Wl,-rpath,$CUDNN_LIB -l:libcudnn.so.9 -lcudart -o $L/probe > $L/probe-build.txt 2>&1; echo "probe build rc=$?"
timeout 120 $L/probe > $L/cudnn-fusion-probe.txt 2>&1; echo "probe rc=$? at ${SECONDS}s"; rm -f $L/probe
B=build-gpu/examples
T=(--model resnet50 --batch-size 256 --precision fp16 --memory-format channels_last --optimizer sgd --lr 0.1 --warmup 15 --steps-per-window 5 --windows 1 --quiet --no-telemetry --json '')
timeout 60 $B/resnet50_benchmark "${T[@]}" --kernel-trace $L/trace-resnet50-gpuperf.json > /dev/null; echo "trace rc=$? at ${SECONDS}s"
I=(--model resnet50 --precision fp16 --memory-format channels_last --batch-sizes 1,8,256 --warmup 20 --iterations 200 --quiet)
for r in 1 2; do timeout 60 $B/inference_benchmark "${I[@]}" --json $L/infer-$r.json > /dev/null; done
echo "infer at ${SECONDS}s"
python3 benchmarks/python/profile_step.py --trace $L/trace-resnet50-gpuperf.json --steps 5 --batch-size 256 --top 25 > $L/trace-resnet50-gpuperf.txt 2>&1
echo "== summary"; python3 $D/summarize_call.py $L
echo "== cuDNN graph API probe"; cat $L/cudnn-fusion-probe.txt; tail -5 $L/probe-build.txt
echo "== trace"; head -12 $L/trace-resnet50-gpuperf.txt | cut -c1-160; grep pool $L/trace-resnet50-gpuperf.txt | cut -c1-160; tail -1 $L/trace-resnet50-gpuperf.txt
gzip $L/trace-*.json
echo "end at ${SECONDS}s"
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
