#!/usr/bin/env bash
# Device call 3 (2 x H200): everything merged: full build and tests (gpu2 included), interconnect
# side by side, inference against PyTorch's frozen model, TF32 GEMM repeats, seed memory check.
set -uo pipefail
source .deps/env.sh
export NCCL_NVLS_ENABLE=0
mkdir -p $OUT/logs
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv; nvidia-smi topo -m;
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "nccl", torch.cuda.nccl.version(), "torchvision", torchvision.__version__)';
  git log -1 --format='%H %s'; } > $OUT/logs/session.txt 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > $OUT/logs/configure.txt 2>&1
grep -i -E 'nccl|gloo|collective' $OUT/logs/configure.txt | head -5
cmake --build build-gpu -j16 -- -k 0 > $OUT/logs/build.txt 2>&1; echo "build rc=$?"
grep -E 'error|FAILED' $OUT/logs/build.txt | head -30
ctest --test-dir build-gpu -j6 -LE tsan --output-on-failure --timeout 240 > $OUT/logs/ctest.txt 2>&1; echo "ctest rc=$?"
grep -E 'tests passed|\(Failed\)|\(Timeout\)|Not Run' $OUT/logs/ctest.txt | head -20
timeout 150 benchmarks/interconnect_side_by_side.sh build-gpu $OUT/logs/interconnect 3 > $OUT/logs/interconnect-summary.md 2>&1
tail -40 $OUT/logs/interconnect-summary.md
GPUPERF_MODES="default" PEER_MODES="frozen-graph graph" timeout 130 benchmarks/inference_side_by_side.sh build-gpu $OUT/logs/infer-frozen 2 1,512 > $OUT/logs/infer-frozen-summary.md 2>&1
python3 benchmarks/python/summarize_inference.py $OUT/logs/infer-frozen > $OUT/logs/infer-frozen-summary.md 2>&1; tail -12 $OUT/logs/infer-frozen-summary.md
for f in on off; do for b in bench no-bench; do
  ./build-gpu/examples/seed_benchmark --precision fp16 --fuse-conv $f $([ $b = no-bench ] && echo --no-cudnn-benchmark) --quiet --json $OUT/logs/seed-mem-$f-$b.json > /dev/null 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], 'peak GiB', round(r['peak_memory_bytes']/2**30,3), 'samples/s', round(r['throughput']['median']))" $OUT/logs/seed-mem-$f-$b.json $f $b
done; done
timeout 60 bash -c 'for r in 1 2 3 4 5; do ./build-gpu/examples/microbench --device cuda --no-memory --dtypes tf32 --quiet --json $OUT/logs/tf32-gpuperf-$r.json >/dev/null; python3 benchmarks/python/micro_peer.py --device cuda --no-memory --dtypes tf32 2>/dev/null | sed "s/^{/{\"repeat\": $r, /" >> $OUT/logs/tf32-peer.jsonl; done'
python3 - <<'PY'
import glob, json, os, statistics
out = os.environ["OUT"] + "/logs"
ours = [r["median"] for p in sorted(glob.glob(out + "/tf32-gpuperf-*.json")) for r in json.load(open(p))["results"] if r["name"] == "gemm/tf32"]
theirs = [json.loads(l)["median"] for l in open(out + "/tf32-peer.jsonl") if l.strip()]
print("tf32 gpuperf", [round(x) for x in ours], "pytorch", [round(x) for x in theirs],
      "ratio of medians", round(statistics.median(ours) / statistics.median(theirs), 3) if ours and theirs else "-")
PY
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
