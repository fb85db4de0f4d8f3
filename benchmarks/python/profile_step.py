#!/usr/bin/env python3
"""Where a training step's GPU time goes, by kernel class, from torch.profiler: ResNet-50 or the
seed model, fp16 AMP, channels_last, SGD momentum (the same ATen/cuDNN kernels gpuperf calls).

    python3 profile_step.py --model resnet50 --batch-size 256 --steps 10
"""
import argparse
import collections

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

CLASSES = [  # first match wins; matched against the lower-cased kernel name
    ("convolution (cuDNN/cutlass conv)", ("conv", "implicit", "xmma_fprop", "xmma_dgrad", "xmma_wgrad", "sm90_xmma", "cudnn")),
    ("batch norm", ("batch_norm", "bn_fw", "bn_bw", "batchnorm")),
    ("matmul (gemm)", ("gemm", "cutlass", "sm90")),
    ("optimizer / multi-tensor", ("multi_tensor", "fused_sgd", "foreach", "fused_adam")),
    ("pooling", ("pool",)),
    ("elementwise (relu, add, copy, cast)", ("elementwise", "vectorized", "copy", "relu", "threshold", "fill")),
    ("reduction / loss", ("reduce", "softmax", "nll", "loss")),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=10)
    a = p.parse_args()
    torch.backends.cudnn.benchmark = True
    if a.model == "resnet50":
        import torchvision
        model, shape, classes = torchvision.models.resnet50(), (3, 224, 224), 1000
    else:
        from train_peer import SimpleModel
        model, shape, classes = SimpleModel(), (3, 32, 32), 10
    model = model.cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(a.batch_size, *shape, device="cuda").contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, classes, (a.batch_size,), device="cuda")

    def step():
        opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
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
    totals = collections.Counter()
    counts = collections.Counter()
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
        if t <= 0:
            continue
        name = e.key.lower()
        cls = next((c for c, keys in CLASSES if any(k in name for k in keys)), "other")
        totals[cls] += t
        counts[cls] += e.count
    total = sum(totals.values())
    print(f"{a.model} bs {a.batch_size} fp16 channels_last SGD: {total / a.steps / 1e3:.2f} ms GPU time per step "
          f"({a.batch_size * a.steps / (total / 1e6):,.0f} img/s if kernels ran back to back)")
    for cls, t in totals.most_common():
        print(f"  {cls:40s} {t / a.steps / 1e3:8.2f} ms  {100 * t / total:5.1f}%  {counts[cls] // a.steps:5d} kernels/step")


if __name__ == "__main__":
    main()
