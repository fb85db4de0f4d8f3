#!/usr/bin/env python3
"""The Python peer of gpuperf's data-parallel training: PyTorch's DistributedDataParallel under
torchrun, with train_peer.py's model, step and measurement (warm-up, timed windows between CUDA
events, median over windows), each rank on its own GPU and its own synthetic batch.

    torchrun --nproc-per-node 2 ddp_peer.py --model resnet50 --batch-size 256 --precision fp16 \
        --memory-format channels_last --optimizer sgd --lr 0.1

Rank 0 prints one JSON line: per-rank medians, the global median (per-window sums over ranks, as
gpuperf computes it) and the settings.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_peer import build, make_optimizer, set_backends, time_windows  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="simple")
    p.add_argument("--batch-size", type=int, default=256, help="per rank")
    p.add_argument("--precision", default="fp16", choices=["fp32", "tf32", "fp16", "bf16"])
    p.add_argument("--memory-format", default="contiguous", choices=["contiguous", "channels_last"])
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd", "adamw"])
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--fused", choices=["on", "off"], default="off")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps-per-window", type=int, default=20)
    p.add_argument("--windows", type=int, default=10)
    a = p.parse_args()
    if a.batch_size <= 0:
        print(f"error: --batch-size: must be > 0, got {a.batch_size}", file=sys.stderr)
        return 2
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    set_backends(a.precision)
    torch.manual_seed(0)
    model, shape, classes = build(a.model)
    fmt = torch.channels_last if a.memory_format == "channels_last" else torch.contiguous_format
    model = model.to(device).to(memory_format=fmt)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if cuda else None)
    opt = make_optimizer(a.optimizer, model.parameters(), a.lr, a.fused == "on")
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(a.precision)
    scaler = torch.amp.GradScaler(device.type, enabled=a.precision == "fp16")
    torch.manual_seed(1000003 * rank)  # each rank its own data
    data = torch.randn(a.batch_size, *shape, device=device).contiguous(memory_format=fmt)
    target = torch.randint(0, classes, (a.batch_size,), device=device)

    def step():
        opt.zero_grad()
        with torch.autocast(device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            loss = F.cross_entropy(model(data), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    for _ in range(a.warmup):
        step()
    rates, loss = time_windows(step, a.batch_size, a.windows, a.steps_per_window, cuda)
    sums = torch.tensor(rates, dtype=torch.float64, device=device)
    dist.all_reduce(sums)
    medians = torch.zeros(world, dtype=torch.float64, device=device)
    medians[rank] = statistics.median(rates)
    dist.all_reduce(medians)
    if rank == 0:
        print(json.dumps({
            "peer": "pytorch-ddp", "torch": torch.__version__, "model": a.model,
            "batch_size": a.batch_size, "world_size": world, "precision": a.precision,
            "memory_format": a.memory_format, "optimizer": a.optimizer, "fused": a.fused,
            "global_median": statistics.median(sums.tolist()), "rank_medians": medians.tolist(),
            "median": statistics.median(rates), "windows": rates,
            "nccl_env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")},
            "final_loss": float(loss.detach()), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
