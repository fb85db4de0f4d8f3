#!/usr/bin/env python3
"""The Python peer of gpuperf's microbench: the same GEMM and memory measurements in PyTorch,
for side-by-side runs.

Method, as gpuperf's: per measurement, untimed warm-up calls, then timed windows of several calls
between two CUDA events (no host sync inside a window), rate per window = work / window time,
median over windows. GEMM operands are random (normal values cast to the dtype; int8 uniform over
its range) and rotate over enough sets to exceed 3x the L2 cache (at least 4 sets). Ops:
torch.mm (fp64, fp32 with TF32 off, tf32, fp16, bf16), torch._int_mm (int8 -> int32, B
column-major), torch._scaled_mm (fp8 e4m3, scales 1, bf16 out, B column-major); dst.copy_(src)
(bytes read + written), src.sum() (bytes read), dst.fill_(1.5) (bytes written), host<->device
copy_ from pinned (non_blocking) and pageable memory (bytes once). GB/s = 1e9 bytes/s.

GEMM shape: --gemm-size N is M = N = K (default 8192); --gemm-shape MxNxK (or N) sets the three
apart, as microbench's option of that name does (give one or the other, not both). C[M,N] =
A[M,K] * B[K,N]; the "shape" field reads "MxNxK" as microbench writes it.

    python3 micro_peer.py --gemm-size 8192 --memory-size-mib 1024 --host-size-mib 256
    python3 micro_peer.py --gemm-shape 16384x16384x4096 --dtypes int8,fp8,bf16 --no-memory

Prints one JSON line per measurement: {"name": "gemm/bf16", "median": ..., "unit": ..., ...}.
Bad options: a line "error: --option: ..." on stderr, exit status 2.
"""
import argparse
import json
import math
import re
import statistics
import sys
import time

import torch

DTYPES = ["fp64", "fp32", "tf32", "fp16", "bf16", "int8", "fp8"]
MEMORY_OPS = ["device-copy", "device-read", "device-write", "h2d-pinned", "d2h-pinned",
              "h2d-pageable", "d2h-pageable"]
STORAGE = {"fp64": torch.float64, "fp32": torch.float32, "tf32": torch.float32,
           "fp16": torch.float16, "bf16": torch.bfloat16}
DEFAULT_GEMM_SIZE = 8192


class UsageError(ValueError):
    """A bad option; main() prints it as "error: ..." and exits with 2, as microbench does."""


def parse_gemm_shape(text, option="gemm-shape"):
    """"N" (square) or "MxNxK" (x or X) -> (m, n, k), with microbench's rule: each part 1 to 12
    decimal digits and > 0. Raises UsageError naming --option and the value."""
    parts = re.split("[xX]", text)
    if len(parts) not in (1, 3) or not all(re.fullmatch("[0-9]{1,12}", v) and int(v) > 0
                                           for v in parts):
        raise UsageError(f"--{option}: must be N or MxNxK with positive integers, got '{text}'")
    values = [int(v) for v in parts]
    return tuple(values * 3 if len(values) == 1 else values)


def parse_args(argv=None):
    """The options, checked; a.gemm_shape becomes (m, n, k) and a.dtypes a list of names.
    Raises UsageError on a bad value (argparse itself exits 2 on a malformed command line)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--gemm-size", type=int, default=None,
                   help=f"square GEMM edge N: M = N = K (default {DEFAULT_GEMM_SIZE})")
    p.add_argument("--gemm-shape", default=None, help="MxNxK instead of a square --gemm-size")
    p.add_argument("--dtypes", default=",".join(DTYPES))
    p.add_argument("--memory-size-mib", type=int, default=1024)
    p.add_argument("--host-size-mib", type=int, default=256)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--calls-per-window", type=int, default=10)
    p.add_argument("--windows", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-gemm", action="store_true")
    p.add_argument("--no-memory", action="store_true")
    a = p.parse_args(argv)
    dtypes, choices = [], ", ".join(DTYPES)
    for item in a.dtypes.split(","):
        d = item.strip().lower()
        if not d:
            raise UsageError(f"--dtypes: empty item in '{a.dtypes}' (choose from {choices})")
        if d not in DTYPES:
            raise UsageError(f"--dtypes: unknown data type '{d}' (choose from {choices})")
        if d not in dtypes:  # duplicates collapse, as in microbench
            dtypes.append(d)
    a.dtypes = dtypes
    for name in ("gemm_size", "memory_size_mib", "host_size_mib", "calls_per_window", "windows"):
        value = getattr(a, name)
        if value is not None and value <= 0:
            raise UsageError(f"--{name.replace('_', '-')}: must be > 0, got {value}")
    if a.gemm_shape is not None and a.gemm_size is not None:
        raise UsageError(f"--gemm-shape: give either --gemm-size or --gemm-shape, got both "
                         f"('{a.gemm_shape}' and {a.gemm_size})")
    if a.gemm_shape is not None:
        a.gemm_shape = parse_gemm_shape(a.gemm_shape)
    else:
        n = a.gemm_size if a.gemm_size is not None else DEFAULT_GEMM_SIZE
        a.gemm_shape = (n, n, n)
    return a


def timed(step, work_per_call, unit_scale, a):
    """Warm-up, then windows between CUDA events; returns the per-window rates in the unit."""
    for _ in range(a.warmup):
        step()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(a.windows + 1)]
    events[0].record()
    rates = []
    for w in range(a.windows):
        for _ in range(a.calls_per_window):
            step()
        events[w + 1].record()
        events[w + 1].synchronize()
        seconds = events[w].elapsed_time(events[w + 1]) / 1e3
        rates.append(work_per_call * a.calls_per_window / seconds / unit_scale)
    return rates


def gemm(dtype, a, device):
    m, n, k = a.gemm_shape
    if dtype == "fp8":
        major, minor = torch.cuda.get_device_capability(device)
        if (major, minor) < (8, 9) or not hasattr(torch, "float8_e4m3fn"):
            raise RuntimeError(f"fp8 needs compute capability >= 8.9, {device} has {major}.{minor}")
    element = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "int8": 1, "fp8": 1}[dtype]
    set_bytes = element * (m * k + k * n)
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    sets = max(4, math.ceil(3 * l2 / set_bytes))

    def operands():
        if dtype == "int8":
            return (torch.randint(-128, 128, (m, k), device=device, dtype=torch.int32).to(torch.int8),
                    torch.randint(-128, 128, (n, k), device=device, dtype=torch.int32).to(torch.int8).t())
        if dtype == "fp8":
            fp8 = torch.float8_e4m3fn
            return (torch.randn(m, k, device=device).to(fp8), torch.randn(n, k, device=device).to(fp8).t())
        return (torch.randn(m, k, device=device).to(STORAGE[dtype]),
                torch.randn(k, n, device=device).to(STORAGE[dtype]))

    torch.manual_seed(a.seed)
    pairs = [operands() for _ in range(sets)]
    one = torch.ones((), device=device, dtype=torch.float32)
    if dtype == "int8":
        call = torch._int_mm
    elif dtype == "fp8":
        def call(x, y):
            return torch._scaled_mm(x, y, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        call = torch.mm
    index = [0]

    def step():
        x, y = pairs[index[0]]
        call(x, y)
        index[0] = (index[0] + 1) % sets

    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    try:
        rates = timed(step, 2.0 * m * n * k, 1e12, a)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    return {"shape": f"{m}x{n}x{k}", "unit": "TOP/s" if dtype == "int8" else "TFLOP/s",
            "operand_sets": sets, "windows": rates}


def memory(op, a, device):
    mib = 1024 * 1024
    transfer = op.startswith(("h2d", "d2h"))
    size = (a.host_size_mib if transfer else a.memory_size_mib) * mib
    elements = size // 4
    if op == "device-copy":
        src = torch.randn(elements, device=device)
        dst = torch.empty(elements, device=device)
        step, moved = (lambda: dst.copy_(src)), 2 * size
    elif op == "device-read":
        src = torch.randn(elements, device=device)
        step, moved = (lambda: src.sum()), size
    elif op == "device-write":
        dst = torch.empty(elements, device=device)
        step, moved = (lambda: dst.fill_(1.5)), size
    else:
        pinned = op.endswith("pinned")
        host = torch.empty(elements, pin_memory=pinned).fill_(1.5)
        gpu = torch.empty(elements, device=device).fill_(1.5)
        src, dst = (host, gpu) if op.startswith("h2d") else (gpu, host)
        step, moved = (lambda: dst.copy_(src, non_blocking=pinned)), size
    return {"shape": f"{size // mib} MiB", "unit": "GB/s", "windows": timed(step, moved, 1e9, a)}


def main():
    try:
        a = parse_args()
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    device = torch.device(a.device)
    jobs = ([("gemm", d) for d in a.dtypes] if not a.no_gemm else []) + \
           ([("memory", op) for op in MEMORY_OPS] if not a.no_memory else [])
    for category, variant in jobs:
        line = {"peer": "pytorch", "torch": torch.__version__, "name": f"{category}/{variant}",
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        try:
            result = gemm(variant, a, device) if category == "gemm" else memory(variant, a, device)
            line.update(result, status="ok", median=statistics.median(result["windows"]))
        except (RuntimeError, TypeError) as e:
            if isinstance(e, torch.cuda.OutOfMemoryError):
                raise
            line.update(status="unsupported: " + str(e).splitlines()[0], median=None)
        torch.cuda.synchronize(device)
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
