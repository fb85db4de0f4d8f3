#!/usr/bin/env python3
"""The Python peer of gpuperf's interconnect benchmarks (microbench --interconnect): the same P2P
copies and NCCL collectives in PyTorch, for side-by-side runs.

Method, as gpuperf's. P2P, in this process, for every ordered pair of GPUs 0..n-1: dst.copy_(src,
non_blocking=True) of --p2p-size-mib one way (bytes once), both ways at once on two side streams
forked from and joined into the first GPU's current stream (bytes of both), and a 4-byte copy
(microseconds per call, back to back); warm-up calls, then windows of calls between CUDA events
on the source GPU's current stream, median over windows. Collectives, one process per GPU
(torch.multiprocessing spawn, NCCL, a FileStore): all_reduce (sum, in place),
all_gather_into_tensor and reduce_scatter_tensor (sum) on fp32; per size S (nccl-tests'
size: all-reduce: each rank's buffer; all-gather: the gathered output; reduce-scatter: each
rank's input) one checked call (rank r contributes r+1), warm-up calls, then windows: device
synchronize, barrier, calls between CUDA events; a window's time is the slowest rank's mean per
call; algbw = S / t; busbw = algbw x 2(n-1)/n (all-reduce) or (n-1)/n (the others). GB/s = 1e9.

    python3 interconnect_peer.py --collective-sizes 1M..1G --p2p-size-mib 256

Prints one JSON line per measurement: {"name": "collective/all-reduce/1MiB", "median": ...}.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from micro_peer import timed as micro_timed  # noqa: E402

COLLECTIVES = ["all-reduce", "all-gather", "reduce-scatter"]
UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


def parse_size(text):
    m = re.fullmatch(r"(\d+)\s*([KMG]?)(I?B)?", text.strip().upper())
    if not m or int(m.group(1)) <= 0:
        raise ValueError(text)
    return int(m.group(1)) * UNITS[m.group(2)]


def parse_sizes(text):
    """The syntax of microbench --collective-sizes: sizes, sweeps A..B (doubling) or A..B:F."""
    out = []
    for item in text.split(","):
        if ".." in item:
            first, rest = item.split("..", 1)
            last, _, factor = rest.partition(":")
            size, last, factor = parse_size(first), parse_size(last), int(factor or 2)
            if last < size or factor < 2:
                raise ValueError(item)
            while size <= last:
                out.append(size)
                size *= factor
        else:
            out.append(parse_size(item))
    return list(dict.fromkeys(out))


def bytes_text(n):
    """gpuperf's bytes_text: the largest binary unit that divides the size."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while u < 4 and n >= 1024 and n % 1024 == 0:
        n //= 1024
        u += 1
    return f"{n} {units[u]}"


def timed(step, work_per_call, a, device):
    """micro_peer's windows (warm-up, CUDA events), on `device`'s current stream; work per second."""
    with torch.cuda.device(device):
        return micro_timed(step, work_per_call, 1, a)


def line(name, shape, unit, windows, **extra):
    out = {"peer": "pytorch", "torch": torch.__version__, "name": name, "shape": shape,
           "unit": unit, "status": "ok", "median": statistics.median(windows), "windows": windows,
           "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out.update(extra)
    print(json.dumps(out), flush=True)


def p2p(a):
    size = a.p2p_size_mib * 1024 * 1024
    n = size // 4
    gpus = list(range(a.ranks))
    pairs = [(i, j) for i in gpus for j in gpus if i != j]
    torch.manual_seed(a.seed)
    for i, j in pairs:
        src = torch.randn(n, device=f"cuda:{i}")
        dst = torch.empty(n, device=f"cuda:{j}")
        rates = timed(lambda: dst.copy_(src, non_blocking=True), size, a, i)
        line(f"p2p/copy/{i}->{j}", bytes_text(size), "GB/s", [r / 1e9 for r in rates],
             p2p_access=torch.cuda.can_device_access_peer(i, j))
    for i, j in pairs:
        if i > j:
            continue
        a_src, a_dst = torch.randn(n, device=f"cuda:{i}"), torch.empty(n, device=f"cuda:{j}")
        b_src, b_dst = torch.randn(n, device=f"cuda:{j}"), torch.empty(n, device=f"cuda:{i}")
        side_a, side_b = torch.cuda.Stream(device=i), torch.cuda.Stream(device=j)
        fork, done_a, done_b = torch.cuda.Event(), torch.cuda.Event(), torch.cuda.Event()

        def both_ways():
            main = torch.cuda.current_stream(i)
            fork.record(main)
            side_a.wait_event(fork)
            side_b.wait_event(fork)
            with torch.cuda.stream(side_a):
                a_dst.copy_(a_src, non_blocking=True)
            with torch.cuda.stream(side_b):
                b_dst.copy_(b_src, non_blocking=True)
            done_a.record(side_a)
            done_b.record(side_b)
            main.wait_event(done_a)
            main.wait_event(done_b)

        rates = timed(both_ways, 2 * size, a, i)
        line(f"p2p/bidirectional/{i}<->{j}", bytes_text(size), "GB/s", [r / 1e9 for r in rates])
    for i, j in pairs:
        src = torch.randn(1, device=f"cuda:{i}")
        dst = torch.empty(1, device=f"cuda:{j}")
        calls = timed(lambda: dst.copy_(src, non_blocking=True), 1, a, i)
        line(f"p2p/latency/{i}->{j}", "4 B", "us", [1e6 / c for c in calls])
    for d in gpus:
        torch.cuda.synchronize(d)


def fill(collective, x, rank, n):
    if collective == "reduce-scatter":
        k = torch.arange(1, n + 1, dtype=x.dtype, device=x.device).view(n, 1)
        x.view(n, -1).copy_(k * (rank + 1))
    else:
        x.fill_(rank + 1)


def check(collective, out, rank, n):
    triangle = n * (n + 1) / 2
    if collective == "all-gather":
        ok = bool(out.view(n, -1).eq(torch.arange(1, n + 1, dtype=out.dtype,
                                                  device=out.device).view(n, 1)).all())
    else:
        ok = bool(out.eq(triangle if collective == "all-reduce" else triangle * (rank + 1)).all())
    if not ok:
        raise RuntimeError(f"{collective}: wrong result on rank {rank}: values in "
                           f"[{out.min().item()}, {out.max().item()}]")


def collectives_rank(rank, a, store_path):
    n = a.ranks
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"file://{store_path}", rank=rank,
                            world_size=n, device_id=device)
    try:
        for collective in a.collectives:
            for requested in a.sizes:
                size = requested // (4 * n) * 4 * n  # whole fp32 elements for every rank
                whole = size // 4
                inp = torch.empty(whole // n if collective == "all-gather" else whole,
                                  device=device)
                out = inp if collective == "all-reduce" else torch.empty(
                    whole if collective == "all-gather" else whole // n, device=device)
                if collective == "all-reduce":
                    def call():
                        dist.all_reduce(inp)
                elif collective == "all-gather":
                    def call():
                        dist.all_gather_into_tensor(out, inp)
                else:
                    def call():
                        dist.reduce_scatter_tensor(out, inp)
                fill(collective, inp, rank, n)
                call()
                check(collective, out, rank, n)
                for _ in range(a.warmup):
                    call()
                seconds = []
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                for _ in range(a.windows):
                    fill(collective, inp, rank, n)
                    torch.cuda.synchronize(device)
                    dist.barrier()
                    start.record()
                    for _ in range(a.calls_per_window):
                        call()
                    stop.record()
                    stop.synchronize()
                    seconds.append(start.elapsed_time(stop) / 1e3)
                # The slowest rank's time per window.
                slowest = torch.tensor(seconds, device=device, dtype=torch.float64)
                dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
                if rank == 0:
                    factor = 2 * (n - 1) / n if collective == "all-reduce" else (n - 1) / n
                    t = [s / a.calls_per_window for s in slowest.tolist()]
                    algbw = [size / x / 1e9 for x in t]
                    line(f"collective/{collective}/{bytes_text(size).replace(' ', '')}",
                         bytes_text(size), "GB/s", [b * factor for b in algbw],
                         algbw_gb_s=statistics.median(algbw),
                         time_us=statistics.median(t) * 1e6, bus_factor=factor, ranks=n)
    finally:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collectives", default=",".join(COLLECTIVES))
    p.add_argument("--collective-sizes", default="1M..1G")
    p.add_argument("--p2p-size-mib", type=int, default=256)
    p.add_argument("--ranks", type=int, default=0, help="GPUs 0..N-1 (default: all)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--calls-per-window", type=int, default=10)
    p.add_argument("--windows", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-p2p", action="store_true")
    p.add_argument("--no-collectives", action="store_true")
    a = p.parse_args()
    a.collectives = [c.strip().lower() for c in a.collectives.split(",")]
    for c in a.collectives:
        if c not in COLLECTIVES:
            print(f"error: --collectives: unknown collective '{c}'", file=sys.stderr)
            return 2
    try:
        a.sizes = parse_sizes(a.collective_sizes)
    except ValueError as e:
        print(f"error: --collective-sizes: not a size or sweep, got '{e}'", file=sys.stderr)
        return 2
    gpus = torch.cuda.device_count()
    a.ranks = a.ranks or gpus
    if a.ranks < 2 or a.ranks > gpus:
        print(f"error: --ranks: needs 2..{gpus} GPUs, got {a.ranks}", file=sys.stderr)
        return 2
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    if not a.no_p2p:
        p2p(a)
    if not a.no_collectives:
        with tempfile.TemporaryDirectory() as tmp:
            mp.spawn(collectives_rank, args=(a, os.path.join(tmp, "store")), nprocs=a.ranks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
