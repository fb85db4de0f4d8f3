#!/usr/bin/env python3
"""The Python peer of gpuperf's training benchmarks: the same model, settings and measurement
method in PyTorch, for side-by-side runs.

Method, as gpuperf's: untimed warm-up steps, then timed windows of several steps between two
CUDA events (no host sync inside a window), throughput per window = samples / window time,
median over windows. The training step is the plain PyTorch AMP recipe:
zero_grad -> autocast forward -> loss -> scaler.scale(loss).backward() -> scaler.step -> update.

    python3 train_peer.py --model simple --batch-size 256 --precision fp16
    python3 train_peer.py --model resnet50 --batch-size 256 --precision fp16 \
        --memory-format channels_last --optimizer sgd --lr 0.1

--rewrite on (the seed model only) runs the hand rewrite a PyTorch user can make of the seed
model, the one gpuperf's seed model runs inside: convolutions in channels_last and `fc` fed the
activations' (H, W, C)-ordered flatten (a free view of a channels_last tensor), its weight
permuted once at construction to that column order. Same function, same weights:

    python3 train_peer.py --model simple --batch-size 256 --precision bf16 --rewrite on \
        --fused on --graph on

--data DIR trains on the JPEGs of an ImageNet-style folder, fed by the peers of gpuperf's input
pipeline (--loader dataloader: DataLoader + PIL, loader_peer.py; --loader gpu: torchvision's
batched GPU decode, gpu_loader_peer.py); each step copies the next batch into the step's input:

    python3 train_peer.py --model resnet50 --batch-size 256 --precision fp16 \
        --memory-format channels_last --optimizer sgd --lr 0.1 --compile default \
        --data /tmp/imnet --loader gpu --loader-workers 16

Prints one JSON line: {"model": ..., "median": samples/s, "windows": [...], "first_loss": ...,
"final_loss": ..., "skipped_steps": ..., ...}: a run that trained ends with a finite loss below
its first one (benchmarks/python/headline.py marks any other INVALID). With
--record PATH it also writes the measurement as a gpuperf.run/1 record
(libgpuperf/python/gpuperf_results.py), which gpuperf_compare, gpuperf_report and gpuperf_advise
read beside gpuperf's own:

    python3 train_peer.py --model simple --batch-size 256 --precision fp16 --record peer.json
    gpuperf_compare seed_benchmark.json peer.json
"""
import argparse
import copy
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class SimpleModel(nn.Module):
    """The seed's CNN. hwc_fc: `fc` takes the activations flattened in (H, W, C) order instead of
    PyTorch's (C, H, W) (see rewrite_simple())."""

    CHANNELS, HEIGHT, WIDTH = 128, 32, 32  # conv2's output, fc's input

    def __init__(self, num_classes=10, hwc_fc=False):
        super().__init__()
        self.hwc_fc = hwc_fc
        self.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1)
        self.conv2 = nn.Conv2d(64, 128, kernel_size=3, stride=1, padding=1)
        self.fc = nn.Linear(self.CHANNELS * self.HEIGHT * self.WIDTH, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        if self.hwc_fc:
            # For a channels_last x this is a view: its memory already is (N, H, W, C).
            return self.fc(x.permute(0, 2, 3, 1).reshape(x.shape[0], -1))
        return self.fc(torch.flatten(x, 1))


def rewrite_simple(model):
    """The hand rewrite of a SimpleModel, the one gpuperf's seed model runs inside: the same
    function and weights, with `fc` reading the (H, W, C)-ordered flatten of the activations,
    which costs nothing once they are channels_last (run the model and its input channels_last).
    fc's weight columns are permuted once, here, from (C, H, W) to (H, W, C) order. `model` is
    left as it was."""
    # A copy, not a new model: a new one would draw its initial weights from the generator and
    # change the data drawn after it.
    rewritten = copy.deepcopy(model)
    rewritten.hwc_fc = True
    c, h, w = SimpleModel.CHANNELS, SimpleModel.HEIGHT, SimpleModel.WIDTH
    with torch.no_grad():
        weight = model.fc.weight.detach()
        hwc = weight.reshape(-1, c, h, w).permute(0, 2, 3, 1).reshape(weight.shape[0], -1)
        rewritten.fc.weight.copy_(hwc)
    return rewritten


def build(model_name):
    if model_name == "simple":
        return SimpleModel(), (3, 32, 32), 10
    import torchvision
    return getattr(torchvision.models, model_name)(), (3, 224, 224), 1000


def set_backends(precision):
    """cuDNN autotuning on; TF32 off for fp32, on for tf32 (PyTorch's defaults otherwise)."""
    torch.backends.cudnn.benchmark = True
    if precision in ("fp32", "tf32"):
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        torch.backends.cudnn.allow_tf32 = precision == "tf32"


def make_optimizer(name, params, lr, fused, capturable=False):
    """Adam, AdamW or SGD (momentum 0.9) as gpuperf builds them; fused and capturable on request
    (SGD has no capturable flag)."""
    params = list(params)
    extra = {"fused": True} if fused else {}
    if name == "sgd":
        opt = torch.optim.SGD(params, lr=lr, momentum=0.9, **extra)
        if fused:
            # Fused SGD (PyTorch 2.11) creates its momentum buffers with empty_like on its first
            # step and lets the kernel set them to the gradient; when the GradScaler skips that
            # step (fp16: the initial scale 65536 overflows) the kernel does nothing, the
            # buffers stay uninitialised, and the next step reads garbage: the loss ends NaN.
            # Zero buffers from the start are the same mathematics (momentum * 0 + grad is the
            # first step's buf = grad) and survive a skipped step.
            for p in params:
                opt.state[p]["momentum_buffer"] = torch.zeros_like(p)
        return opt
    if capturable:
        extra["capturable"] = True
    cls = torch.optim.Adam if name == "adam" else torch.optim.AdamW
    return cls(params, lr=lr, **extra)


def time_windows(step, batch_size, windows, steps_per_window, cuda):
    """gpuperf's method: timed windows of steps between two marks (CUDA events on the GPU, no host
    sync inside a window; a steady clock on the CPU). Returns samples/s per window and the last
    loss."""
    if cuda:
        events = [torch.cuda.Event(enable_timing=True) for _ in range(windows + 1)]
        events[0].record()
    else:
        marks = [time.perf_counter()]
    rates = []
    for w in range(windows):
        for _ in range(steps_per_window):
            loss = step()
        if cuda:
            events[w + 1].record()
            events[w + 1].synchronize()
            seconds = events[w].elapsed_time(events[w + 1]) / 1e3
        else:
            marks.append(time.perf_counter())
            seconds = marks[-1] - marks[-2]
        rates.append(batch_size * steps_per_window / seconds)
    return rates, loss


def import_gpuperf_results():
    """gpuperf_results from the Python path, else from this checkout (libgpuperf/python)."""
    try:
        import gpuperf_results
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "..", "libgpuperf", "python"))
        import gpuperf_results
    return gpuperf_results


def skipped_steps(precision, total_steps, init_scale, final_scale, growth_interval):
    """Optimizer steps the GradScaler skipped, from its scale alone (no host sync per step): with
    fp16 the scale halves on each skipped step and grows only after growth_interval consecutive
    good steps, so in a run shorter than that it never grew and log2(initial / final) counts the
    skips. In a longer run a growth can hide a skip: None (not counted). bf16, fp32 and tf32 have
    no scaler and skip nothing."""
    if precision != "fp16":
        return 0
    if total_steps >= growth_interval:
        return None
    return round(math.log2(init_scale / final_scale))


def write_record(path, a, device, shape, classes, rates, losses, peak_memory, loss_scale,
                 skipped):
    """The measurement as a gpuperf.run/1 record: the settings as they ran, the windows'
    samples/s and what the run ended with (telemetry is not sampled). losses: (first, final);
    skipped: skipped optimizer steps, None where not counted (the record then says so)."""
    gpuperf_results = import_gpuperf_results()
    # Graph mode runs max(warmup, 3) eager steps on a side stream before the capture, then the
    # warm-up replays.
    warmup_steps = a.warmup + (max(a.warmup, 3) if a.graph == "on" else 0)
    fusion = "none" if a.compile == "off" else f"torch.compile {a.compile} (Inductor)"
    writer = gpuperf_results.RunRecordWriter(
        model=a.model, batch_size=a.batch_size, precision=a.precision,
        memory_format=a.memory_format, optimizer=a.optimizer,
        optimizer_impl="fused" if a.fused == "on" else "torch.optim", learning_rate=a.lr,
        input_shape=shape, num_classes=classes,
        graph_mode="cuda-graph" if a.graph == "on" else "eager", kernel_fusion=fusion,
        cudnn_benchmark=True,
        grad_scaler=a.precision == "fp16", warmup_steps=warmup_steps,
        steps_per_window=a.steps_per_window, seed=0, device=device, torch_module=torch)
    for rate in rates:
        writer.add_window_throughput(rate)
    writer.finish(peak_memory_bytes=peak_memory, first_loss=losses[0], final_loss=losses[1],
                  final_loss_scale=loss_scale, skipped_steps=skipped)
    writer.write(path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="simple")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--precision", default="fp16", choices=["fp32", "tf32", "fp16", "bf16"])
    p.add_argument("--memory-format", choices=["contiguous", "channels_last"],
                   help="the model's and the input's (default: contiguous; channels_last with "
                        "--rewrite on)")
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd", "adamw"])
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps-per-window", type=int, default=20)
    p.add_argument("--windows", type=int, default=10)
    p.add_argument("--device", default="cuda")
    p.add_argument("--fused", choices=["on", "off"], default="off",
                   help="fused optimizer (capturable when --graph on); off: foreach, PyTorch's default")
    p.add_argument("--graph", choices=["on", "off"], default="off",
                   help="capture the whole step in a CUDA graph (PyTorch's documented recipe)")
    p.add_argument("--compile", choices=["off", "default", "reduce-overhead", "max-autotune"],
                   default="off",
                   help="torch.compile the model in this mode (PyTorch >= 2.0); the first "
                        "warm-up step compiles, and its time is printed as compile_s")
    p.add_argument("--rewrite", choices=["on", "off"], default="off",
                   help="--model simple only: the hand rewrite gpuperf's seed model runs inside "
                        "(channels_last convolutions, fc on the (H, W, C) flatten with its "
                        "weight permuted once); same function")
    p.add_argument("--record", metavar="PATH",
                   help="also write the measurement as a gpuperf.run/1 record "
                        "(for gpuperf_compare)")
    p.add_argument("--data", metavar="DIR",
                   help="train on the JPEGs of an ImageNet-style folder instead of one synthetic "
                        "batch (models with 224x224 inputs): each step copies the loader's next "
                        "batch into the step's input, before the step (or the graph's replay)")
    p.add_argument("--loader", choices=["dataloader", "gpu"], default="dataloader",
                   help="--data: DataLoader + ImageFolder + PIL in --loader-workers processes "
                        "(loader_peer.py), or torchvision's batched GPU decode with GPU "
                        "transforms, files read by --loader-workers threads (gpu_loader_peer.py)")
    p.add_argument("--loader-workers", type=int, default=os.cpu_count() or 1,
                   help="--data: the loader's workers (default: every core)")
    a = p.parse_args()
    if a.batch_size <= 0:
        print(f"error: --batch-size: must be > 0, got {a.batch_size}", file=sys.stderr)
        return 2
    if a.data is not None and not os.path.isdir(a.data):
        print(f"error: --data: not a folder: {a.data}", file=sys.stderr)
        return 2
    if a.data is not None and a.model == "simple":
        print("error: --data needs a model with 224x224 inputs, got --model simple",
              file=sys.stderr)
        return 2
    if a.loader_workers < 0:
        print(f"error: --loader-workers: must be >= 0, got {a.loader_workers}", file=sys.stderr)
        return 2

    if a.rewrite == "on" and a.model != "simple":
        print(f"error: --rewrite on: only the seed model (--model simple) has a rewrite, got "
              f"--model {a.model}", file=sys.stderr)
        return 2
    if a.rewrite == "on" and a.memory_format == "contiguous":
        print("error: --rewrite on runs channels_last; --memory-format contiguous contradicts it",
              file=sys.stderr)
        return 2
    # What runs inside: the rewrite is channels_last.
    a.memory_format = a.memory_format or ("channels_last" if a.rewrite == "on" else "contiguous")
    if a.compile != "off" and not hasattr(torch, "compile"):
        print(f"error: --compile {a.compile}: torch.compile needs PyTorch >= 2.0, this is "
              f"{torch.__version__}", file=sys.stderr)
        return 2
    if a.compile != "off" and a.warmup < 1:
        print(f"error: --compile {a.compile} needs --warmup >= 1 (the first step compiles), got "
              f"{a.warmup}", file=sys.stderr)
        return 2
    if a.compile != "off" and a.graph == "on":
        print(f"error: --compile {a.compile} with --graph on: compile's reduce-overhead mode is "
              "its CUDA-graph variant", file=sys.stderr)
        return 2
    device = torch.device(a.device)
    set_backends(a.precision)
    torch.manual_seed(0)
    model, shape, classes = build(a.model)
    if a.rewrite == "on":
        model = rewrite_simple(model)
    model = model.to(device)
    fmt = torch.channels_last if a.memory_format == "channels_last" else torch.contiguous_format
    model = model.to(memory_format=fmt)
    params = model.parameters()
    if a.compile != "off":
        model = torch.compile(model, mode=None if a.compile == "default" else a.compile)
    opt = make_optimizer(a.optimizer, params, a.lr, a.fused == "on",
                         capturable=a.graph == "on")
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(a.precision)
    # PyTorch's defaults, spelled out: skipped_steps() counts skips from them.
    scaling = {"init_scale": 65536.0, "growth_interval": 2000}
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        scaler = torch.amp.GradScaler(device.type, enabled=a.precision == "fp16", **scaling)
    else:  # PyTorch < 2.3 (Debian's 1.13): the CUDA scaler, a pass-through when disabled
        scaler = torch.cuda.amp.GradScaler(enabled=a.precision == "fp16", **scaling)
    data = torch.randn(a.batch_size, *shape, device=device).contiguous(memory_format=fmt)
    target = torch.randint(0, classes, (a.batch_size,), device=device)
    # The very first step's loss (warm-up included), kept on the device and read after the run,
    # so that no step waits for the host.
    first_loss = []

    def step(zero=True):
        if zero:
            opt.zero_grad()
        with torch.autocast(device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None,
                            cache_enabled=a.graph == "off"):
            loss = F.cross_entropy(model(data), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if not first_loss:
            first_loss.append(loss.detach().clone())
        return loss

    if a.graph == "on":
        # Warm up on a side stream, then capture one whole step (torch.cuda.graphs docs recipe).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(max(a.warmup, 3)):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = step(zero=False)

        def step():  # noqa: F811 - replaying is the step from here on
            graph.replay()
            return static_loss
    if a.data is not None:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, here)
        if a.loader == "gpu":
            from gpu_loader_peer import gpu_batches
            batches = gpu_batches(a.data, a.loader_workers, a.batch_size, device)
        else:
            from loader_peer import dataloader_batches
            batches = dataloader_batches(a.data, a.loader_workers, a.batch_size,
                                         pin_memory=device.type == "cuda")
        compute = step

        def step():  # noqa: F811 - the loader's next batch into the step's input first
            x, y = next(batches)
            data.copy_(x, non_blocking=True)
            target.copy_(y, non_blocking=True)
            return compute()
    cuda = device.type == "cuda"
    # The first step compiles a compiled model: its time is reported apart, never timed.
    started = time.perf_counter()
    for i in range(a.warmup):
        step()
        if i == 0 and cuda:
            torch.cuda.synchronize()
        if i == 0:
            first_step_s = time.perf_counter() - started
    rates, loss = time_windows(step, a.batch_size, a.windows, a.steps_per_window, cuda)
    peak_memory = torch.cuda.max_memory_allocated(device) if cuda else None
    losses = (float(first_loss[0]), float(loss.detach()))
    # Every step that ran: warm-up, graph mode's side-stream warm-up, the timed windows.
    total_steps = (a.warmup + (max(a.warmup, 3) if a.graph == "on" else 0) +
                   a.windows * a.steps_per_window)
    loss_scale = float(scaler.get_scale())
    skipped = skipped_steps(a.precision, total_steps, scaling["init_scale"], loss_scale,
                            scaling["growth_interval"])
    print(json.dumps({
        "peer": "pytorch", "torch": torch.__version__, "model": a.model, "batch_size": a.batch_size,
        "precision": a.precision, "memory_format": a.memory_format, "rewrite": a.rewrite,
        "optimizer": a.optimizer, "fused": a.fused, "graph": a.graph, "compile": a.compile,
        "data": a.data, "loader": a.loader if a.data else None,
        "loader_workers": a.loader_workers if a.data else None,
        "compile_s": first_step_s if a.compile != "off" and a.warmup > 0 else None,
        "median": statistics.median(rates), "windows": rates,
        "peak_memory_bytes": peak_memory, "first_loss": losses[0], "final_loss": losses[1],
        "skipped_steps": skipped, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }))
    if a.record:
        write_record(a.record, a, device, shape, classes, rates, losses, peak_memory, loss_scale,
                     skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
