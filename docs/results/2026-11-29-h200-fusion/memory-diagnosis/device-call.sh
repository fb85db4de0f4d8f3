#!/usr/bin/env bash
# Device call 4: where the fused seed step's extra memory comes from.
set -uo pipefail
source .deps/env.sh
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null 2>&1
cmake --build build-gpu -j16 --target seed_benchmark > $OUT/build.txt 2>&1; echo "build rc=$?"
run() {  # label, env, args
  local label=$1; shift
  env "$@" --quiet --json $OUT/$label.json > /dev/null 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], 'peak GiB', round(r['peak_memory_bytes']/2**30,3), 'samples/s', round(r['throughput']['median']), r['config'].get('graph_mode'))" $OUT/$label.json $label
}
S=./build-gpu/examples/seed_benchmark
run fused-graph $S --fuse-conv on
run fused-eager $S --fuse-conv on --graph off
run unfused-eager $S --fuse-conv off --graph off
run fused-graph-wscap16 CUDNN_CONV_WSCAP_DBG=16 $S --fuse-conv on
python3 - <<'PY' 2>&1 | grep -v -i warn
import torch
torch.backends.cudnn.benchmark = True
x = torch.randn(256, 64, 32, 32, device="cuda", dtype=torch.half)
w = torch.randn(128, 64, 3, 3, device="cuda", dtype=torch.half)
b = torch.randn(128, device="cuda", dtype=torch.half)
for name, f in [("conv2d", lambda: torch.nn.functional.conv2d(x, w, b, 1, 1)),
                ("cudnn_convolution_relu", lambda: torch.cudnn_convolution_relu(x, w, b, (1, 1), (1, 1), (1, 1), 1))]:
    for i in range(3):
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); base = torch.cuda.memory_allocated()
        y = f(); torch.cuda.synchronize()
        print(name, "call", i, "peak above inputs MiB", round((torch.cuda.max_memory_allocated() - base) / 2**20, 1),
              "output MiB", round(y.numel() * 2 / 2**20, 1), "channels_last out", y.is_contiguous(memory_format=torch.channels_last) and not y.is_contiguous())
        del y
PY
