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

Prints one JSON line: {"model": ..., "median": samples/s, "windows": [...], ...}. With
--record PATH it also writes the measurement as a gpuperf.run/1 record
(libgpuperf/python/gpuperf_results.py), which gpuperf_compare, gpuperf_report and gpuperf_advise
read beside gpuperf's own:

    python3 train_peer.py --model simple --batch-size 256 --precision fp16 --record peer.json
    gpuperf_compare seed_benchmark.json peer.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class SimpleModel(nn.Module):
    """The seed's CNN."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1)
        self.conv2 = nn.Conv2d(64, 128, kernel_size=3, stride=1, padding=1)
        self.fc = nn.Linear(128 * 32 * 32, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc(torch.flatten(x, 1))


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
    extra = {"fused": True} if fused else {}
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, **extra)
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


def write_record(path, a, device, shape, classes, rates, loss, peak_memory, loss_scale):
    """The measurement as a gpuperf.run/1 record: the settings as they ran, the windows'
    samples/s and what the run ended with (telemetry is not sampled; skipped optimizer steps are
    not counted, and the record says so)."""
    gpuperf_results = import_gpuperf_results()
    # Graph mode runs max(warmup, 3) eager steps on a side stream before the capture, then the
    # warm-up replays.
    warmup_steps = a.warmup + (max(a.warmup, 3) if a.graph == "on" else 0)
    writer = gpuperf_results.RunRecordWriter(
        model=a.model, batch_size=a.batch_size, precision=a.precision,
        memory_format=a.memory_format, optimizer=a.optimizer,
        optimizer_impl="fused" if a.fused == "on" else "torch.optim", learning_rate=a.lr,
        input_shape=shape, num_classes=classes,
        graph_mode="cuda-graph" if a.graph == "on" else "eager", cudnn_benchmark=True,
        grad_scaler=a.precision == "fp16", warmup_steps=warmup_steps,
        steps_per_window=a.steps_per_window, seed=0, device=device, torch_module=torch)
    for rate in rates:
        writer.add_window_throughput(rate)
    writer.finish(peak_memory_bytes=peak_memory, final_loss=float(loss.detach()),
                  final_loss_scale=loss_scale)
    writer.write(path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="simple")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--precision", default="fp16", choices=["fp32", "tf32", "fp16", "bf16"])
    p.add_argument("--memory-format", default="contiguous", choices=["contiguous", "channels_last"])
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
    p.add_argument("--record", metavar="PATH",
                   help="also write the measurement as a gpuperf.run/1 record "
                        "(for gpuperf_compare)")
    a = p.parse_args()
    if a.batch_size <= 0:
        print(f"error: --batch-size: must be > 0, got {a.batch_size}", file=sys.stderr)
        return 2

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
    model = model.to(device)
    fmt = torch.channels_last if a.memory_format == "channels_last" else torch.contiguous_format
    model = model.to(memory_format=fmt)
    params = model.parameters()
    if a.compile != "off":
        model = torch.compile(model, mode=None if a.compile == "default" else a.compile)
    opt = make_optimizer(a.optimizer, params, a.lr, a.fused == "on",
                         capturable=a.graph == "on")
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(a.precision)
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        scaler = torch.amp.GradScaler(device.type, enabled=a.precision == "fp16")
    else:  # PyTorch < 2.3 (Debian's 1.13): the CUDA scaler, a pass-through when disabled
        scaler = torch.cuda.amp.GradScaler(enabled=a.precision == "fp16")
    data = torch.randn(a.batch_size, *shape, device=device).contiguous(memory_format=fmt)
    target = torch.randint(0, classes, (a.batch_size,), device=device)

    def step(zero=True):
        if zero:
            opt.zero_grad()
        with torch.autocast(device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None,
                            cache_enabled=a.graph == "off"):
            loss = F.cross_entropy(model(data), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
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
    print(json.dumps({
        "peer": "pytorch", "torch": torch.__version__, "model": a.model, "batch_size": a.batch_size,
        "precision": a.precision, "memory_format": a.memory_format, "optimizer": a.optimizer,
        "fused": a.fused, "graph": a.graph, "compile": a.compile,
        "compile_s": first_step_s if a.compile != "off" and a.warmup > 0 else None,
        "median": statistics.median(rates), "windows": rates,
        "peak_memory_bytes": peak_memory,
        "final_loss": float(loss.detach()), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }))
    if a.record:
        write_record(a.record, a, device, shape, classes, rates, loss, peak_memory,
                     float(scaler.get_scale()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
