#!/usr/bin/env python3
"""The PyTorch peer of gpuperf's CPU input pipeline (benchmarks/cpu_loader_bench): torchvision's
ImageFolder with PIL decoding and the standard ImageNet training transform (RandomResizedCrop(224),
RandomHorizontalFlip, ToTensor, Normalize), batched by torch.utils.data.DataLoader with --workers
worker processes (each worker on one core, torch.set_num_threads(1) inside), shuffled.

Method, as cpu_loader_bench's: one untimed batch (workers started, files in the page cache), then
--batches batches timed on the wall clock: images per second.

    python3 loader_peer.py --data /tmp/fake-imagenet --workers 1 --batches 20

Prints one JSON line: {"images_per_second", "images", "seconds", "workers", "batch_size", ...}.
"""
import argparse
import json
import sys
import time

import torch
import torchvision
from torchvision import transforms


def _one_thread(_):
    torch.set_num_threads(1)


def training_transform(val=False):
    """torchvision's ImageNet transform: RandomResizedCrop(224) + flip, or Resize(256) +
    CenterCrop(224); ToTensor, Normalize."""
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    if val:
        return transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                                   transforms.ToTensor(), normalize])
    return transforms.Compose([transforms.RandomResizedCrop(224),
                               transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                               normalize])


def dataloader_batches(data, workers, batch_size, val=False, pin_memory=False):
    """Endless (images, labels) batches from a DataLoader over ImageFolder(data) with PIL and
    training_transform(), `workers` one-thread worker processes, shuffled; also the loader of
    train_peer.py --data --loader dataloader (pinned batches there)."""
    dataset = torchvision.datasets.ImageFolder(data, transform=training_transform(val))
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                         num_workers=workers, drop_last=True,
                                         worker_init_fn=_one_thread, pin_memory=pin_memory,
                                         persistent_workers=workers > 0)
    while True:
        for batch in loader:
            yield batch


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--val", action="store_true", help="Resize(256) + CenterCrop(224)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.workers < 0 or a.batch_size < 1 or a.batches < 1:
        p.error("--workers must be >= 0, --batch-size and --batches >= 1")
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    it = dataloader_batches(a.data, a.workers, a.batch_size, a.val)
    next(it)
    start = time.perf_counter()
    images = 0
    for _ in range(a.batches):
        x, _ = next(it)
        images += x.shape[0]
    seconds = time.perf_counter() - start
    print(json.dumps({"images_per_second": images / seconds, "images": images,
                      "seconds": seconds, "workers": a.workers, "batch_size": a.batch_size,
                      "transform": "validation" if a.val else "training",
                      "torch": torch.__version__, "torchvision": torchvision.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
