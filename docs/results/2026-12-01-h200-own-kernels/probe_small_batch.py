#!/usr/bin/env python3
"""Times candidate formulations of ResNet-50's stem and head at small batch inside CUDA graphs
(fp16, channels_last), to choose what gpuperf's folded inference path runs there.

Each candidate is captured 50 times into one graph; the graph is replayed 20 times per sample and
the median of 7 samples is reported in microseconds per call (kernel time plus the gaps between
graph nodes, as inside the model's graph).

  python3 probe_small_batch.py [--batches 1,8]
"""
import argparse
import statistics

import torch
import torch.nn.functional as F


def time_graph(fn, reps=50, replays=20, samples=7):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / (reps * replays))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", default="1,8")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    dev, half, cl = "cuda", torch.half, torch.channels_last
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}")
    for n in [int(b) for b in args.batches.split(",")]:
        x3 = torch.randn(n, 3, 224, 224, device=dev, dtype=half).contiguous(memory_format=cl)
        w3 = torch.randn(64, 3, 7, 7, device=dev, dtype=half).contiguous(memory_format=cl)
        bias = torch.randn(64, device=dev, dtype=half)
        x4 = F.pad(x3, (0, 0, 0, 0, 0, 1)).contiguous(memory_format=cl)
        w4 = F.pad(w3, (0, 0, 0, 0, 0, 1)).contiguous(memory_format=cl)
        x8 = F.pad(x3, (0, 0, 0, 0, 0, 5)).contiguous(memory_format=cl)
        w8 = F.pad(w3, (0, 0, 0, 0, 0, 5)).contiguous(memory_format=cl)
        conv_relu = torch.cudnn_convolution_relu
        geometry = ((2, 2), (3, 3), (1, 1), 1)
        stem = {
            "stem conv+bias+relu, 3 channels": lambda: conv_relu(x3, w3, bias, *geometry),
            "stem, input pre-padded to 4": lambda: conv_relu(x4, w4, bias, *geometry),
            "stem, input pre-padded to 8": lambda: conv_relu(x8, w8, bias, *geometry),
            "stem, pad to 4 in the graph": lambda: conv_relu(
                F.pad(x3, (0, 0, 0, 0, 0, 1)).contiguous(memory_format=cl), w4, bias, *geometry),
            "pad to 4 alone": lambda: F.pad(x3, (0, 0, 0, 0, 0, 1)).contiguous(memory_format=cl),
        }
        feat = torch.randn(n, 2048, 7, 7, device=dev, dtype=half).contiguous(memory_format=cl)
        weight = torch.randn(1000, 2048, device=dev, dtype=half) * 0.02
        weight_t = weight.t().contiguous()
        fc_bias = torch.randn(1000, device=dev, dtype=half)
        pooled = torch.randn(n, 2048, device=dev, dtype=half)
        rows = feat.permute(0, 2, 3, 1).reshape(n, 49, 2048)
        head = {
            "pool: adaptive_avg_pool2d": lambda: F.adaptive_avg_pool2d(feat, 1).flatten(1),
            "pool: mean over the [N, HW, C] view": lambda: rows.mean(1),
            "pool: avg_pool2d(7)": lambda: F.avg_pool2d(feat, 7).flatten(1),
            "pool: mean((2, 3))": lambda: feat.mean((2, 3)),
            "fc: linear (addmm, bias epilogue)": lambda: F.linear(pooled, weight, fc_bias),
            "fc: mm + add_": lambda: torch.mm(pooled, weight.t()).add_(fc_bias),
            "fc: addmm with W^T stored": lambda: torch.addmm(fc_bias, pooled, weight_t),
            "fc: mm with W^T stored + add_": lambda: torch.mm(pooled, weight_t).add_(fc_bias),
            "fc: mv + add_ (batch 1)": (lambda: torch.mv(weight, pooled[0]).add_(fc_bias))
            if n == 1 else None,
            "fc: split-K bmm (16) + sum": lambda: torch.bmm(
                pooled.view(n, 16, 128).transpose(0, 1),
                weight.view(1000, 16, 128).permute(1, 2, 0)).sum(0).add_(fc_bias),
        }
        for name, fn in list(stem.items()) + list(head.items()):
            if fn is None:
                continue
            print(f"batch {n:>3}  {name:<40} {time_graph(fn):8.2f} us")


if __name__ == "__main__":
    main()
