#!/usr/bin/env python3
"""Where a training step's GPU time goes, by kernel class and by kernel, from torch.profiler:
ResNet-50 or the seed model, fp16 (or bf16) AMP, SGD momentum or fused Adam (the same ATen/cuDNN kernels
gpuperf calls).

    python3 profile_step.py --model resnet50 --batch-size 256 --steps 10
    python3 profile_step.py --model simple --memory-format contiguous --optimizer adam --top 30
    python3 profile_step.py --model resnet50 --compile default --top 30   # Inductor's kernels

gpuperf's own step (C++, no torch.profiler) is profiled with Nsight Compute; classify its kernel
list with the same classes: python3 profile_step.py --ncu-csv ncu.csv [--top N]. Or, better (no
replay, the CUDA-graph step as it runs), from the Chrome trace gpuperf's training programs write
with --kernel-trace (LibTorch's Kineto profiler, --steps-per-window steps):

    resnet50_benchmark --kernel-trace step.json --steps-per-window 5 ...
    python3 profile_step.py --trace step.json --steps 5 --batch-size 256 [--top N]
"""
import argparse
import collections
import sys

CLASSES = [  # first match wins; matched against the lower-cased kernel name
    ("layout conversion (cuDNN NCHW<->NHWC)", ("nchwtonhwc", "nhwctonchw")),
    # gpuperf's own batch norm kernels (libgpuperf/torch/src/models/batch_norm_kernels.cu)
    # carry generic names inside gpuperf::detail.
    ("batch norm", ("batch_norm", "bn_fw", "bn_bw", "batchnorm") + tuple(
        f"gpuperf::detail::(anonymous namespace)::{k}<" for k in (
            "statistics_kernel", "apply_kernel", "backward_reduce_kernel",
            "backward_apply_kernel"))),
    ("pooling", ("pool",)),
    ("convolution (cuDNN/cutlass conv)", ("conv", "implicit", "xmma_fprop", "xmma_dgrad", "xmma_wgrad", "sm90_xmma", "cudnn")),
    ("matmul (gemm)", ("gemm", "cutlass", "sm90", "nvjet")),
    ("Inductor-generated (triton)", ("triton",)),
    ("optimizer / multi-tensor", ("multi_tensor", "fused_sgd", "foreach", "fused_adam", "adam_kernel")),
    ("elementwise (relu, add, copy, cast)", ("elementwise", "vectorized", "copy", "relu", "threshold", "fill")),
    ("reduction / loss", ("reduce", "softmax", "nll", "loss")),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--memory-format", default="channels_last", choices=["contiguous", "channels_last"])
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"],
                   help="sgd: momentum 0.9, foreach; adam: fused (gpuperf's default on CUDA)")
    p.add_argument("--top", type=int, default=0, help="also list the N kernels taking most time")
    p.add_argument("--compile", default="off", choices=["off", "default", "reduce-overhead"],
                   help="torch.compile the model (the optimizer then runs fused, as the "
                        "headline's compile rows)")
    p.add_argument("--ncu-csv", metavar="PATH",
                   help="classify the kernels of an Nsight Compute CSV (--csv --metrics "
                        "gpu__time_duration.sum) instead of profiling")
    p.add_argument("--trace", metavar="PATH",
                   help="classify the GPU kernels of a Chrome trace (gpuperf's --kernel-trace, or "
                        "torch.profiler's export_chrome_trace) holding --steps steps, instead of "
                        "profiling")
    p.add_argument("--precision", default="fp16", choices=["fp16", "bf16"], help="autocast dtype")
    p.add_argument("--export-trace", metavar="PATH",
                   help="also keep the profiled steps' Chrome trace here")
    a = p.parse_args()
    if a.steps < 1:
        p.error(f"--steps: must be >= 1, got {a.steps}")
    if a.trace:
        return classify_trace(a.trace, a.steps, a.top, a.batch_size)
    if a.ncu_csv:
        return classify_ncu(a.ncu_csv, a.top)
    return profile_pytorch(a)


def profile_pytorch(a):
    """PyTorch's step under torch.profiler (needs torch; --trace and --ncu-csv do not)."""
    import torch
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile
    torch.backends.cudnn.benchmark = True
    if a.model == "resnet50":
        import torchvision
        model, shape, classes = torchvision.models.resnet50(), (3, 224, 224), 1000
    else:
        from train_peer import SimpleModel
        model, shape, classes = SimpleModel(), (3, 32, 32), 10
    fmt = torch.channels_last if a.memory_format == "channels_last" else torch.contiguous_format
    model = model.cuda().to(memory_format=fmt)
    fused = a.compile != "off"
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=fused or None)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    if a.compile != "off":
        model = torch.compile(model, mode=None if a.compile == "default" else a.compile)
    dtype = torch.float16 if a.precision == "fp16" else torch.bfloat16
    scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16")
    x = torch.randn(a.batch_size, *shape, device="cuda").contiguous(memory_format=fmt)
    y = torch.randint(0, classes, (a.batch_size,), device="cuda")

    def step():
        opt.zero_grad()
        with torch.autocast("cuda", dtype=dtype):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(15):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
    print(f"{a.model} bs {a.batch_size} {a.precision} {a.memory_format} {a.optimizer} compile {a.compile}")
    # Through the same Chrome trace gpuperf writes, so that both sides are read alike.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = a.export_trace or f"{tmp}/trace.json"
        prof.export_chrome_trace(path)
        return classify_trace(path, a.steps, a.top, a.batch_size)


def print_classes(title, events, steps, top, batch_size=None):
    """events: (kernel name, microseconds in all steps, launches in all steps)."""
    totals = collections.Counter()
    counts = collections.Counter()
    kernels = []
    for key, t, count in events:
        name = key.lower()
        cls = next((c for c, keys in CLASSES if any(k in name for k in keys)), "other")
        totals[cls] += t
        counts[cls] += count
        kernels.append((t, count, cls, key))
    total = sum(totals.values())
    rate = (f" ({batch_size * steps / (total / 1e6):,.0f} img/s if kernels ran back to back)"
            if batch_size else "")
    print(f"{title}: {total / steps / 1e3:.2f} ms GPU time per step{rate}")
    for cls, t in totals.most_common():
        print(f"  {cls:40s} {t / steps / 1e3:8.2f} ms  {100 * t / total:5.1f}%  {counts[cls] // steps:5d} kernels/step")
    for t, count, cls, name in sorted(kernels, reverse=True)[:top]:
        print(f"    {t / steps:9.1f} us/step {count / steps:5.1f}x  [{cls.split()[0]}] {name[:110]}")


def read_trace_events(path):
    """The events of a Chrome trace (.json or .json.gz); OSError or ValueError when unreadable."""
    import gzip
    import json
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        trace = json.load(f)
    return trace.get("traceEvents", trace) if isinstance(trace, dict) else trace


def classify_trace(path, steps, top, batch_size):
    """The GPU kernels (and memory copies/sets) of a Chrome trace (.json or .json.gz), by class,
    per step; how much of the span from the first kernel's start to the last one's end the GPU
    was busy; and how long kernels overlapped, which makes their durations add up to more than
    the busy time."""
    try:
        events = read_trace_events(path)
    except (OSError, ValueError) as e:
        print(f"error: --trace {path}: {e}", file=sys.stderr)
        return 2
    gpu = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"
           and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    if not gpu:
        print(f"error: --trace {path}: no GPU kernel events (was it traced on a GPU?)",
              file=sys.stderr)
        return 2
    by_name = collections.OrderedDict()
    for e in gpu:
        name = e.get("name", "?") if e["cat"] == "kernel" else f"[{e['cat']}] {e.get('name', '')}"
        t, n = by_name.get(name, (0.0, 0))
        by_name[name] = (t + float(e.get("dur", 0)), n + 1)
    print_classes(path, [(k, t, n) for k, (t, n) in by_name.items()], steps, top, batch_size)
    spans = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in gpu)
    busy, end = 0.0, spans[0][0]
    for start, stop in spans:  # the union of the intervals
        if stop > end:
            busy += stop - max(start, end)
            end = stop
    span = end - spans[0][0]
    print(f"  GPU busy {busy / steps / 1e3:.3f} of {span / steps / 1e3:.3f} ms per step "
          f"({100 * busy / span:.1f}%); idle between kernels {(span - busy) / steps / 1e3:.3f} ms")
    # Memsets by size: a library's 4-byte semaphores ahead of its kernels (cuBLASLt, cuDNN) tell
    # apart from a buffer being zeroed.
    sizes = collections.Counter(int(e.get("args", {}).get("bytes", -1))
                                for e in gpu if e["cat"] == "gpu_memset")
    if sizes:
        listed = ", ".join(f"{n / steps:g} x {b if b >= 0 else '?'} B"
                           for b, n in sorted(sizes.items(), key=lambda kv: -kv[1])[:6])
        print(f"  memsets per step by size: {listed}")
    # With programmatic dependent launch (or work on several streams) a kernel starts before the
    # one ahead of it ends, and its duration includes the wait: durations then count the
    # overlap twice, and the busy time is the step's GPU time.
    overlap = sum(stop - start for start, stop in spans) - busy
    if overlap > 0.005 * busy:
        print(f"  kernels overlapped for {overlap / steps / 1e3:.3f} ms per step (dependent "
              f"launches or concurrent streams): the durations above include waits for the "
              f"kernel ahead; the step's GPU time is the busy time")
    return 0


def classify_ncu(path, top):
    """The kernels of an Nsight Compute CSV, by class, as one 'step' (all kernels in the file)."""
    import csv
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(line for line in f if line.startswith('"'))
                if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        print(f"error: --ncu-csv {path}: no gpu__time_duration.sum rows", file=sys.stderr)
        return 2
    by_name = collections.OrderedDict()
    for r in rows:
        t_us = float(r["Metric Value"].replace(",", "")) / 1e3
        t, n = by_name.get(r["Kernel Name"], (0.0, 0))
        by_name[r["Kernel Name"]] = (t + t_us, n + 1)
    print_classes(path, [(k, t, n) for k, (t, n) in by_name.items()], 1, top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
