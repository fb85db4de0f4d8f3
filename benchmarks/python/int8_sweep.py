#!/usr/bin/env python3
"""Why int8 GEMMs land far below the datasheet: torch._int_mm over shapes and operand layouts,
with the kernel cuBLAS(Lt) picks for each (from torch.profiler), next to fp8 (_scaled_mm) and
fp16 (torch.mm) on the same shapes, which run on the same tensor cores at 2x / 1x the int8 rate.

Timing as micro_peer.py: warm-up, windows of calls between CUDA events, operands rotated past 3x
the L2 cache, median over windows. Layouts name A then B as row- (r) or column-major (c):
"rc" is A row-major, B column-major (cuBLAS's "TN", the layout int8 tensor cores read natively).

    python3 int8_sweep.py --shapes 8192x8192x8192,16384x16384x16384 --layouts rc,rr

Prints one JSON line per (dtype, shape, layout): median TOP/s, windows, kernel names. Shapes are
MxNxK (or N, square) as micro_peer.py's --gemm-shape reads them; bad options: "error: --option:
..." on stderr, exit status 2, before anything runs.
"""
import argparse
import json
import math
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from micro_peer import UsageError, parse_gemm_shape  # noqa: E402

DTYPES = ["int8", "fp8", "fp16"]


def operand(rows, cols, major, dtype, device):
    """A rows x cols matrix of random values in `dtype`, stored row- ('r') or column-major ('c')."""
    def draw(r, c):
        if dtype == torch.int8:
            return torch.randint(-128, 128, (r, c), device=device, dtype=torch.int32).to(torch.int8)
        return torch.randn(r, c, device=device).to(dtype)
    return draw(rows, cols) if major == "r" else draw(cols, rows).t()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--shapes", default="8192x8192x8192")
    p.add_argument("--layouts", default="rc")
    p.add_argument("--dtypes", default="int8,fp8,fp16")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--calls-per-window", type=int, default=10)
    p.add_argument("--windows", type=int, default=5)
    a = p.parse_args()
    try:
        # Checked before the sweep starts, so that a typo does not end it halfway.
        shapes = [parse_gemm_shape(text, "shapes") for text in a.shapes.split(",")]
        dtypes = a.dtypes.split(",")
        layouts = a.layouts.split(",")
        for name in dtypes:
            if name not in DTYPES:
                raise UsageError(f"--dtypes: unknown data type '{name}' "
                                 f"(choose from {', '.join(DTYPES)})")
        for layout in layouts:
            if len(layout) != 2 or not set(layout) <= {"r", "c"}:
                raise UsageError(f"--layouts: must be two of r/c (A then B) such as rc, "
                                 f"got '{layout}'")
        for name, least in (("warmup", 0), ("calls_per_window", 1), ("windows", 1)):
            if getattr(a, name) < least:
                raise UsageError(f"--{name.replace('_', '-')}: must be >= {least}, "
                                 f"got {getattr(a, name)}")
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    device = torch.device(a.device)
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    one = torch.ones((), device=device)
    calls = {
        "int8": (torch.int8, torch._int_mm),
        "fp8": (torch.float8_e4m3fn,
                lambda x, y: torch._scaled_mm(x, y, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)),
        "fp16": (torch.float16, torch.mm),
    }
    for m, n, k in shapes:
        for name in dtypes:
            dtype, call = calls[name]
            for layout in layouts:
                line = {"dtype": name, "shape": f"{m}x{n}x{k}", "layout": layout}
                try:
                    size = dtype.itemsize * (m * k + k * n)
                    sets = max(4, math.ceil(3 * l2 / size))
                    torch.manual_seed(0)
                    pairs = [(operand(m, k, layout[0], dtype, device), operand(k, n, layout[1], dtype, device))
                             for _ in range(sets)]
                    for i in range(a.warmup):
                        call(*pairs[i % sets])
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        call(*pairs[0])
                        torch.cuda.synchronize(device)
                    kernels = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
                    ev = [torch.cuda.Event(enable_timing=True) for _ in range(a.windows + 1)]
                    ev[0].record()
                    rates, index = [], 0
                    for w in range(a.windows):
                        for _ in range(a.calls_per_window):
                            call(*pairs[index])
                            index = (index + 1) % sets
                        ev[w + 1].record()
                        ev[w + 1].synchronize()
                        rates.append(2.0 * m * n * k * a.calls_per_window / (ev[w].elapsed_time(ev[w + 1]) / 1e3) / 1e12)
                    line.update(status="ok", median=statistics.median(rates), windows=rates, kernels=kernels)
                except RuntimeError as e:
                    line.update(status="unsupported: " + str(e).splitlines()[0], median=None)
                # Also after a refused call (fp8 with B row-major), else its operands outlive it.
                pairs = None
                torch.cuda.empty_cache()
                print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
