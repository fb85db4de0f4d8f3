#!/usr/bin/env bash
# Device call 1: two-node fused conv (memory), ResNet-50 profile, int8 sweep, maxpool probe, cuDNN probe
set -uo pipefail
source .deps/env.sh
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv;
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "torchvision", torchvision.__version__)'; } > $L/session.txt 2>&1
{ SP=$(python3 -c 'import site; print(site.getsitepackages()[0])'); echo "site $SP"
  ls $SP/nvidia; ls $SP/nvidia/cudnn $SP/nvidia/cudnn/* 2>&1 | head -40
  find / -name 'cudnn*.h' -not -path '/proc/*' 2>/dev/null | head; 
  for f in $(find / -name 'libcudnn*.so*' -not -path '/proc/*' 2>/dev/null); do echo "$f $(nm -D --defined-only $f 2>/dev/null | grep -c -E 'cudnnBatchNormalization(Forward|Backward)(Training)?Ex|cudnnPoolingBackward')"; done
  which nvcc; nvcc --version | tail -2; ls $SP/torch/include/ATen/cudnn | head -20; } > $L/cudnn-probe.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $L/configure.txt 2>&1
timeout 300 cmake --build build-gpu -j16 --target seed_benchmark test_fusion test_train > $L/build.txt 2>&1; echo "build rc=$?"
grep -E 'error|FAILED' $L/build.txt | head -20
./build-gpu/tests/test_fusion > $L/test_fusion.txt 2>&1; echo "test_fusion rc=$?"; tail -2 $L/test_fusion.txt
./build-gpu/tests/test_train > $L/test_train.txt 2>&1; echo "test_train rc=$?"; tail -2 $L/test_train.txt
timeout 200 benchmarks/side_by_side.sh build-gpu $L/seed 3 "seed-fp16-default seed-fp16-nofuse" > $L/seed-summary.md 2>&1; tail -8 $L/seed-summary.md
for f in $L/seed/*gpuperf-1.json; do python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], 'peak GiB', round(r['peak_memory_bytes']/2**30,3))" $f; done
timeout 60 python3 .device/probe_pool.py > $L/pool.txt 2>&1; cat $L/pool.txt
timeout 90 python3 benchmarks/python/int8_sweep.py --dtypes int8 --layouts rc,rr,cc,cr --shapes 4096x4096x4096,8192x8192x8192,16384x16384x16384,8192x8192x32768,16384x16384x4096 > $L/int8.jsonl 2>$L/int8.err
timeout 60 python3 benchmarks/python/int8_sweep.py --dtypes fp8 --layouts rc --shapes 8192x8192x8192,16384x16384x16384 >> $L/int8.jsonl 2>>$L/int8.err
python3 -c "
import json
for l in open('$L/int8.jsonl'):
    r=json.loads(l); print(r['dtype'], r['shape'], r['layout'], round(r['median']) if r['median'] else r['status'][:80], ' | '.join(k[:70] for k in r.get('kernels',[])))"
timeout 150 python3 benchmarks/python/profile_step.py --model resnet50 --batch-size 256 --steps 10 --top 45 > $L/profile-resnet.txt 2>&1; grep -v warn $L/profile-resnet.txt | head -60
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
