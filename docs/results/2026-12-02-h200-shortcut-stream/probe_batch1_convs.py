#!/usr/bin/env python3
"""Times ResNet-50's 3x3 convolutions (with bias and ReLU, as the folded model runs them) at
batch 1 inside CUDA graphs (fp16, channels_last), cuDNN's fused call against an explicit im2col
(pad, one gathering copy) and a cuBLASLt GEMM with the bias+ReLU epilogue; and the stem on a
4-channel weight stored channels_last or contiguous. Times in microseconds per call, as
probe_small_batch.py (2026-12-01-h200-own-kernels) measures them.

  python3 probe_batch1_convs.py
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "2026-12-01-h200-own-kernels"))
from probe_small_batch import time_graph  # noqa: E402


def im2col_conv(x, w_t, bias, stride):
    """relu(conv3x3(x, w) + bias), padding 1, as pad + gather + GEMM. w_t: [9C, K]."""
    n, c, h, w = x.shape
    xp = F.pad(x, (1, 1, 1, 1))  # keeps channels_last
    hp, wp = h + 2, w + 2
    ho, wo = (h - 1) // stride + 1, (w - 1) // stride + 1
    cols = xp.as_strided((n, ho, wo, 3, 3, c),
                         (hp * wp * c, stride * wp * c, stride * c, wp * c, c, 1))
    cols = cols.reshape(n * ho * wo, 9 * c)
    out = torch._addmm_activation(bias, cols, w_t)
    return out.view(n, ho, wo, -1).permute(0, 3, 1, 2)


def main():
    torch.backends.cudnn.benchmark = True
    dev, half, cl = "cuda", torch.half, torch.channels_last
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}")
    # (channels, input size, stride): ResNet-50's 3x3 convolutions at 224x224.
    shapes = [(64, 56, 1), (128, 56, 2), (128, 28, 1), (256, 28, 2), (256, 14, 1), (512, 14, 2),
              (512, 7, 1)]
    for c, size, stride in shapes:
        x = torch.randn(1, c, size, size, device=dev, dtype=half).contiguous(memory_format=cl)
        w = (torch.randn(c, c, 3, 3, device=dev, dtype=half) * 0.05).contiguous(memory_format=cl)
        b = torch.randn(c, device=dev, dtype=half)
        w_rows = w.permute(0, 2, 3, 1).reshape(c, 9 * c)  # [K, RSC]
        w_t_stored = w_rows.t().contiguous()
        ref = torch.relu(F.conv2d(x.float(), w.float(), b.float(), stride, 1))
        got = im2col_conv(x, w_rows.t(), b, stride).float()
        err = ((got - ref).norm() / ref.norm()).item()
        fused = lambda: torch.cudnn_convolution_relu(x, w, b, (stride, stride), (1, 1), (1, 1), 1)
        tag = f"3x3 {c:>3}ch {size:>2}px s{stride}"
        print(f"{tag}  cuDNN conv+bias+relu              {time_graph(fused):8.2f} us")
        print(f"{tag}  im2col + GEMM (W^T view)          "
              f"{time_graph(lambda: im2col_conv(x, w_rows.t(), b, stride)):8.2f} us"
              f"   (relative error {err:.1e})")
        print(f"{tag}  im2col + GEMM (W^T stored)        "
              f"{time_graph(lambda: im2col_conv(x, w_t_stored, b, stride)):8.2f} us")
        xp = F.pad(x, (1, 1, 1, 1))
        print(f"{tag}  pad alone                         "
              f"{time_graph(lambda: F.pad(x, (1, 1, 1, 1))):8.2f} us")
        del xp
    x4 = torch.randn(1, 4, 224, 224, device=dev, dtype=half).contiguous(memory_format=cl)
    w4 = torch.randn(64, 4, 7, 7, device=dev, dtype=half) * 0.05
    b = torch.randn(64, device=dev, dtype=half)
    for name, weight in [("contiguous", w4.contiguous()),
                         ("channels_last", w4.contiguous(memory_format=cl))]:
        stem = lambda: torch.cudnn_convolution_relu(x4, weight, b, (2, 2), (3, 3), (1, 1), 1)
        print(f"stem 4ch, weight {name:<14}              {time_graph(stem):8.2f} us")


if __name__ == "__main__":
    main()
