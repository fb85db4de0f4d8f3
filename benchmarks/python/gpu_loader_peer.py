#!/usr/bin/env python3
"""The PyTorch peer of gpuperf's GPU input pipeline (benchmarks/gpu_loader_bench): file bytes read
by a pool of --workers threads one batch ahead (shuffled each epoch), then
torchvision's batched GPU decode, torchvision.io.decode_jpeg(list, device="cuda"), and the ImageNet
training transform on the GPU per image (RandomResizedCrop's parameters, transforms.v2.functional.
resized_crop(..., antialias=True) to 224, RandomHorizontalFlip), stacked, converted to float and
normalised: float32 NCHW channels_last batches on the GPU, as gpuperf's loader hands them to
training.

Method, as gpu_loader_bench's: two untimed batches, then --batches batches timed on the wall clock
with the device synchronised at the end: images per second.

    python3 gpu_loader_peer.py --data /tmp/fake-imagenet --workers 4 --batches 40

--transform none times the decode alone: a bound on what any transform after it can reach.

Prints one JSON line: {"images_per_second", "images", "seconds", "workers", "batch_size", ...}.
"""
import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import torch
import torchvision
from torchvision.io import ImageReadMode, decode_jpeg
from torchvision import transforms as T
from torchvision.transforms.v2 import functional as F


def read_bytes(path):
    with open(path, "rb") as f:
        return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)


def gpu_batches(data, workers, batch_size, device, transform_kind="train"):
    """Endless batches (images, labels) of the folder `data` on `device`: files read by `workers`
    threads one batch ahead (shuffled each epoch, torch's generator), decoded by torchvision's
    batched GPU decode and transformed on the GPU (module docstring); also the loader of
    train_peer.py --data --loader gpu."""
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1) * 255
    scale, ratio = (0.08, 1.0), (3.0 / 4.0, 4.0 / 3.0)
    samples = torchvision.datasets.ImageFolder(data).samples
    pool = ThreadPoolExecutor(max_workers=max(1, workers))  # the files
    batcher = ThreadPoolExecutor(max_workers=1)  # the next batch, which waits for its files

    def read_batch(indices):
        files = list(pool.map(read_bytes, [samples[i][0] for i in indices]))
        return files, torch.tensor([samples[i][1] for i in indices])

    def transform(files, labels):
        images = decode_jpeg(files, mode=ImageReadMode.RGB, device=device)
        if transform_kind == "none":
            return images, labels.to(device, non_blocking=True)
        out = []
        for img in images:
            top, left, h, w = T.RandomResizedCrop.get_params(img, scale, ratio)
            img = F.resized_crop(img, top, left, h, w, [224, 224], antialias=True)
            if torch.rand(1).item() < 0.5:
                img = F.horizontal_flip(img)
            out.append(img)
        x = torch.stack(out).float().sub_(mean).div_(std)
        return (x.contiguous(memory_format=torch.channels_last),
                labels.to(device, non_blocking=True))

    # Files read by the thread pool one batch ahead (file reads release the GIL) while the GPU
    # decodes the batch before.
    while True:
        order = torch.randperm(len(samples)).tolist()
        starts = range(0, len(order) - batch_size + 1, batch_size)
        ahead = None
        for s0 in starts:
            nxt = batcher.submit(read_batch, order[s0:s0 + batch_size])
            if ahead is None:
                ahead = nxt
                continue
            files, labels = ahead.result()
            ahead = nxt
            yield transform(files, labels)
        if ahead is not None:
            yield transform(*ahead.result())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--transform", choices=["train", "none"], default="train",
                   help="none: decode only (no crop, flip or normalisation), the peer's bound")
    a = p.parse_args()
    if a.workers < 0 or a.batch_size < 1 or a.batches < 1:
        p.error("--workers must be >= 0, --batch-size and --batches >= 1")
    if not torch.cuda.is_available():
        p.error("needs a CUDA GPU")
    torch.manual_seed(a.seed)
    device = torch.device("cuda")
    it = gpu_batches(a.data, a.workers, a.batch_size, device, a.transform)
    for _ in range(2):
        next(it)
    torch.cuda.synchronize()
    start = time.perf_counter()
    images = 0
    for _ in range(a.batches):
        x, _ = next(it)
        images += len(x)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(json.dumps({"images_per_second": images / seconds, "images": images,
                      "seconds": seconds, "workers": a.workers, "batch_size": a.batch_size,
                      "decode": "torchvision.io.decode_jpeg(device='cuda')",
                      "transform": a.transform,
                      "torch": torch.__version__, "torchvision": torchvision.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
