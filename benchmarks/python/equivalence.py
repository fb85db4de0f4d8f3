#!/usr/bin/env python3
"""gpuperf's ResNet-50 training against PyTorch's from the same initial weights and batch.

torchvision's ResNet-50 (seeded) writes its state_dict and one fixed batch as safetensors files;
gpuperf's `equivalence_run` (benchmarks/equivalence_run.cpp) loads them by name. Then:

(a) One step's gradients, fp16 (loss scale --grad-scale) and bf16 AMP, channels_last, on
    --grad-batch samples: gpuperf fused (its headline path) and unfused, and PyTorch AMP,
    each against an fp64 reference (the same model in float64). The error is
    ||g - g_ref|| / ||g_ref|| over all parameters together (and the worst tensor's
    max|g - g_ref| / max|g_ref| is shown). gpuperf fused must be within 2x PyTorch AMP's error.
(b) --steps optimizer steps of the headline's path (fp16 GradScaler, fused SGD momentum 0.9,
    kernel fusion, the whole step in a CUDA graph, channels_last, --batch-size at 224x224) against
    PyTorch eager from the same weights and batch. PyTorch runs that differ only in their
    kernels (A: channels_last with cuDNN's autotuning, B: NCHW contiguous, C: channels_last
    with cuDNN's heuristics; eager AMP with PyTorch's default foreach SGD) set the spread:
    gpuperf's largest per-step loss difference from A must be within 2x the largest of B's and
    C's (plus 1e-3), its skipped steps within theirs, and its BatchNorm running statistics
    within 2x the larger relative distance of B's and C's from A's. The default rate (0.002)
    keeps 200 steps before the loss's fall to ~0 (memorising the batch), whose start each
    implementation's rounding moves by several steps: at 0.01, where it falls around step 80-100,
    the largest per-step difference measures when the fall starts, not the implementation.

    python3 equivalence.py --build build-gpu --out DIR [--steps 200] [--batch-size 256]

--device cpu checks the loading and the training path without a GPU (CI): fp32, 4 samples at
64x64, one step's gradients and --steps steps (default there: 3) against PyTorch's on the same
CPU, within 1e-5 (the same ATen kernels run on both sides).

Writes DIR/equivalence.json and DIR/equivalence.md, prints the Markdown; exits 1 when a check
fails, 77 (SKIPPED) without CUDA or torchvision, 2 for bad arguments.
"""
import argparse
import gc
import json
import math
import os
import struct
import shutil
import subprocess
import tempfile
import sys
import time

DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
          "I64": "int64", "I32": "int32", "U8": "uint8", "BOOL": "bool"}


def write_safetensors(tensors, path):
    """The safetensors layout (8-byte little-endian header length, JSON header, raw bytes)."""
    import torch
    names = {getattr(torch, v): k for k, v in DTYPES.items()}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    import torch
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        dtype = getattr(torch, DTYPES[e["dtype"]])
        buf = bytearray(raw[8 + n + begin:8 + n + end])
        out[name] = torch.frombuffer(buf, dtype=dtype).reshape(e["shape"]) if buf else \
            torch.empty(e["shape"], dtype=dtype)
    return out


def relative_l2(tensors, reference):
    """||a - ref|| / ||ref|| over every tensor of `reference` together, and the worst tensor's
    max|a - ref| / max|ref|."""
    num = den = 0.0
    worst, worst_name = 0.0, None
    for name, ref in reference.items():
        a = tensors[name].double().cpu()
        r = ref.double().cpu()
        num += float(((a - r) ** 2).sum())
        den += float((r ** 2).sum())
        scale = float(r.abs().max())
        if scale > 0:
            e = float((a - r).abs().max()) / scale
            if e > worst:
                worst, worst_name = e, name
    return math.sqrt(num / den), worst, worst_name


def pytorch_gradients(model_state, x, y, precision, scale):
    """One step's gradients of torchvision's ResNet-50 from `model_state`: fp64 on the GPU, or
    AMP (fp16 with a fixed loss scale, bf16) channels_last as PyTorch's recipe runs it."""
    import torch
    import torch.nn.functional as F
    import torchvision
    model = torchvision.models.resnet50()
    model.load_state_dict(model_state)
    if precision == "fp64":
        model = model.cuda().double().train()
        loss = F.cross_entropy(model(x.cuda().double()), y.cuda())
        loss.backward()
        return {n: p.grad.detach().cpu() for n, p in model.named_parameters()}
    model = model.cuda().to(memory_format=torch.channels_last).train()
    dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    s = scale if precision == "fp16" else 1.0
    with torch.autocast("cuda", dtype=dtype):
        loss = F.cross_entropy(model(x.cuda().contiguous(memory_format=torch.channels_last)),
                               y.cuda())
    (loss * s).backward()
    return {n: (p.grad.detach().double() / s).float().cpu() for n, p in model.named_parameters()}


def pytorch_trajectory(model_state, x, y, steps, lr, memory_format, autotune=True,
                       fused_sgd=False, deterministic=False):
    """`steps` eager AMP fp16 steps (GradScaler, SGD momentum 0.9: PyTorch's default foreach
    implementation, or its fused one) on the one batch: per-step losses, skipped steps (a step is
    skipped when the scale backs off), the final scale and the state after the run."""
    import torch
    import torch.nn.functional as F
    import torchvision
    torch.backends.cudnn.benchmark = autotune
    torch.backends.cudnn.deterministic = deterministic
    fmt = torch.channels_last if memory_format == "channels_last" else torch.contiguous_format
    model = torchvision.models.resnet50()
    model.load_state_dict(model_state)
    model = model.cuda().to(memory_format=fmt).train()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9,
                          **({"fused": True} if fused_sgd else {}))
    if fused_sgd:
        # PyTorch's fused SGD creates its momentum buffers uninitialised on its first step and
        # the GradScaler skips that step: zero buffers first (as benchmarks/python/train_peer.py).
        for p in model.parameters():
            opt.state[p]["momentum_buffer"] = torch.zeros_like(p)
    scaler = torch.amp.GradScaler("cuda")
    xs = x.cuda().contiguous(memory_format=fmt)
    ys = y.cuda()
    losses, skipped = [], 0
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(xs), ys)
        scaler.scale(loss).backward()
        before = scaler.get_scale()
        scaler.step(opt)
        scaler.update()
        skipped += scaler.get_scale() < before
        losses.append(float(loss.detach()))
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = False
    return {"losses": losses, "skipped_steps": skipped, "final_loss_scale": scaler.get_scale()}, state


def run_gpuperf(tool, args):
    """Runs gpuperf's tool as a child process; this process's cached CUDA blocks (PyTorch's runs
    before it) are released first, so that the child has the card's memory (Llama 1B at 4 x 2048
    does not fit twice on an 80 GB H100)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        gc.collect()
        torch.cuda.empty_cache()
    started = time.time()
    done = subprocess.run([tool] + args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{tool} {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return time.time() - started


def cpu_check(a, tool):
    """fp32 on the CPU: gpuperf's gradients and losses from torchvision's weights are PyTorch's."""
    import torch
    import torch.nn.functional as F
    import torchvision
    torch.manual_seed(a.seed)
    model = torchvision.models.resnet50()
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    # A folder of this run's own: another run with the same --out cannot take its files away.
    work = tempfile.mkdtemp(prefix="cpu-check-", dir=a.out)
    weights, batch = (os.path.join(work, n) for n in ("weights.safetensors", "batch.safetensors"))
    write_safetensors(state, weights)
    x = torch.randn(4, 3, 64, 64)
    y = torch.randint(0, 1000, (4,))
    write_safetensors({"input": x, "target": y}, batch)
    common = ["--weights", weights, "--batch", batch, "--precision", "fp32", "--device", "cpu",
              "--fuse", "off"]
    grads_path = os.path.join(work, "grads.safetensors")
    run_gpuperf(tool, common + ["--mode", "gradients", "--tensors", grads_path])
    model.train()
    F.cross_entropy(model(x.contiguous(memory_format=torch.channels_last)), y).backward()
    reference = {n: p.grad for n, p in model.named_parameters()}
    error = relative_l2(read_safetensors(grads_path), reference)
    model = torchvision.models.resnet50()
    model.load_state_dict(state)
    model = model.to(memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    xs = x.contiguous(memory_format=torch.channels_last)
    theirs = []
    for _ in range(a.steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(xs), y)
        loss.backward()
        opt.step()
        theirs.append(float(loss))
    losses_path, after = os.path.join(work, "losses.json"), os.path.join(work, "after.safetensors")
    run_gpuperf(tool, common + ["--mode", "steps", "--steps", str(a.steps), "--lr", str(a.lr),
                                "--graph", "off", "--json", losses_path, "--tensors", after])
    with open(losses_path) as f:
        ours = json.load(f)["losses"]
    state_error = relative_l2(read_safetensors(after),
                              {k: v for k, v in model.state_dict().items()
                               if k.endswith(("weight", "bias", "running_mean", "running_var"))})
    loss_error = max(abs(u - v) / abs(v) for u, v in zip(ours, theirs))
    print(f"gradients: relative error {error[0]:.3e} (worst tensor {error[1]:.3e} {error[2]})")
    print(f"losses: gpuperf {ours}, PyTorch {theirs}, largest relative difference {loss_error:.3e}")
    print(f"state after {a.steps} steps: relative error {state_error[0]:.3e}")
    shutil.rmtree(work, ignore_errors=True)
    ok = error[0] <= 1e-5 and loss_error <= 1e-5 and state_error[0] <= 1e-5 and \
        theirs[-1] < theirs[0]
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def batch_norm_statistics(state):
    return {k: v for k, v in state.items() if k.endswith(("running_mean", "running_var"))}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", required=True, help="gpuperf build folder (benchmarks/equivalence_run)")
    p.add_argument("--out", required=True)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--steps", type=int)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.002)
    p.add_argument("--grad-batch", type=int, default=64)
    p.add_argument("--grad-scale", type=float, default=1024.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.steps is None:
        a.steps = 200 if a.device == "cuda" else 3
    for name in ("steps", "batch_size", "grad_batch"):
        if getattr(a, name) < 1:
            print(f"equivalence.py: --{name.replace('_', '-')} must be >= 1, got "
                  f"{getattr(a, name)}", file=sys.stderr)
            return 2
    if not (a.lr > 0 and a.grad_scale > 0):
        print("equivalence.py: --lr and --grad-scale must be > 0", file=sys.stderr)
        return 2
    tool = os.path.join(a.build, "benchmarks", "equivalence_run")
    if not os.access(tool, os.X_OK):
        print(f"equivalence.py: {tool} is not built", file=sys.stderr)
        return 2
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(f"SKIPPED: {e}")
        return 77
    os.makedirs(a.out, exist_ok=True)
    if a.device == "cpu":
        return cpu_check(a, tool)
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        return 77
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(a.seed)
    model = torchvision.models.resnet50()
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    weights = os.path.join(a.out, "weights.safetensors")
    write_safetensors(state, weights)
    x = torch.randn(a.batch_size, 3, 224, 224)
    y = torch.randint(0, 1000, (a.batch_size,))
    batch = os.path.join(a.out, "batch.safetensors")
    write_safetensors({"input": x, "target": y}, batch)
    gb = min(a.grad_batch, a.batch_size)
    grad_batch = os.path.join(a.out, "grad-batch.safetensors")
    write_safetensors({"input": x[:gb], "target": y[:gb]}, grad_batch)
    result = {"settings": vars(a), "torch": torch.__version__, "torchvision": torchvision.__version__,
              "gpu": torch.cuda.get_device_name(), "checks": []}

    def check(name, ok, detail):
        result["checks"].append({"check": name, "passed": bool(ok), "detail": detail})

    # (a) one step's gradients against fp64.
    reference = pytorch_gradients(state, x[:gb], y[:gb], "fp64", 1.0)
    grads = {}
    for precision in ("fp16", "bf16"):
        ours = {}
        for fuse in ("on", "off"):
            out = os.path.join(a.out, f"grads-{precision}-fuse-{fuse}.safetensors")
            run_gpuperf(tool, ["--weights", weights, "--batch", grad_batch, "--mode", "gradients",
                               "--precision", precision, "--init-scale", str(a.grad_scale),
                               "--fuse", fuse, "--tensors", out])
            ours[fuse] = relative_l2(read_safetensors(out), reference)
            os.remove(out)
        theirs = relative_l2(pytorch_gradients(state, x[:gb], y[:gb], precision, a.grad_scale),
                             reference)
        grads[precision] = {"gpuperf_fused": ours["on"], "gpuperf_unfused": ours["off"],
                            "pytorch_amp": theirs}
        check(f"{precision} gradients: gpuperf fused within 2x PyTorch AMP's error against fp64",
              ours["on"][0] <= 2 * theirs[0],
              f"{ours['on'][0]:.3e} vs {theirs[0]:.3e} ({ours['on'][0] / theirs[0]:.2f}x)")
    result["gradients"] = grads
    torch.cuda.empty_cache()

    # (b) trajectories from the same weights and batch.
    runs = {}
    # A is the reference; B-E are the legitimate choices a PyTorch user makes (layout, cuDNN's
    # algorithm search, the optimizer's implementation, deterministic kernels), whose spread
    # around A is the yardstick for gpuperf.
    for name, fmt, autotune, fused_sgd, deterministic in (
            ("pytorch_a", "channels_last", True, False, False),
            ("pytorch_b", "contiguous", True, False, False),
            ("pytorch_c", "channels_last", False, False, False),
            ("pytorch_d", "channels_last", True, True, False),
            ("pytorch_e", "channels_last", False, False, True)):
        runs[name], end_state = pytorch_trajectory(state, x, y, a.steps, a.lr, fmt, autotune,
                                                   fused_sgd, deterministic)
        runs[name]["bn"] = batch_norm_statistics(end_state)
        torch.cuda.empty_cache()
    # gpuperf_torch_sgd: the fused kernels with torch::optim's SGD (PyTorch's default
    # implementation, eager): tells a difference of the optimizer kernel from one of the model's.
    for name, fuse, graph, impl in (("gpuperf", "on", "on", "fused"),
                                    ("gpuperf_unfused", "off", "off", "fused"),
                                    ("gpuperf_torch_sgd", "on", "off", "torch")):
        js, ts = (os.path.join(a.out, f"{name}.json"), os.path.join(a.out, f"{name}.safetensors"))
        run_gpuperf(tool, ["--weights", weights, "--batch", batch, "--mode", "steps",
                           "--steps", str(a.steps), "--precision", "fp16", "--lr", str(a.lr),
                           "--fuse", fuse, "--graph", graph, "--optimizer-impl", impl,
                           "--json", js, "--tensors", ts])
        with open(js) as f:
            runs[name] = json.load(f)
        runs[name]["bn"] = batch_norm_statistics(read_safetensors(ts))
        os.remove(ts)
    A = runs["pytorch_a"]

    def max_diff(r):
        return max(abs(u - v) for u, v in zip(r["losses"], A["losses"]))

    peers = ("pytorch_b", "pytorch_c", "pytorch_d", "pytorch_e")
    spread = max(max_diff(runs[n]) for n in peers)
    bn_spread = max(relative_l2(runs[n]["bn"], A["bn"])[0] for n in peers)
    summary = {}
    for name, r in runs.items():
        losses = r["losses"]
        summary[name] = {"first_loss": losses[0], "final_loss": losses[-1],
                         "skipped_steps": r["skipped_steps"],
                         "final_loss_scale": r["final_loss_scale"],
                         "max_loss_difference_from_a": max_diff(r),
                         "bn_statistics_distance_from_a": relative_l2(r["bn"], A["bn"])[0],
                         "losses": losses}
    g = summary["gpuperf"]
    check("every run's loss is finite and falls",
          all(math.isfinite(s["final_loss"]) and s["final_loss"] < s["first_loss"]
              for s in summary.values()),
          ", ".join(f"{n} {s['first_loss']:.3f} -> {s['final_loss']:.4f}" for n, s in summary.items()))
    check("gpuperf's losses within the spread of the PyTorch runs (2x, +1e-3)",
          g["max_loss_difference_from_a"] <= 2 * spread + 1e-3,
          f"max |gpuperf - A| {g['max_loss_difference_from_a']:.3e}, max |B..E - A| {spread:.3e}")
    theirs = [runs[n]["skipped_steps"] for n in ("pytorch_a",) + peers]
    check("gpuperf's skipped steps within PyTorch's",
          min(theirs) <= g["skipped_steps"] <= max(theirs),
          f"gpuperf {g['skipped_steps']}, PyTorch A-E {'/'.join(map(str, theirs))}")
    check("gpuperf's BatchNorm running statistics within 2x PyTorch's spread",
          g["bn_statistics_distance_from_a"] <= 2 * bn_spread + 1e-6,
          f"gpuperf {g['bn_statistics_distance_from_a']:.3e}, B..E {bn_spread:.3e} "
          "(relative L2 from A)")
    result["trajectories"] = summary
    for path in (weights, batch, grad_batch):
        os.remove(path)

    lines = [f"# ResNet-50: gpuperf against PyTorch from the same weights ({result['gpu']})", "",
             f"PyTorch {result['torch']}, torchvision {result['torchvision']}; batch {a.batch_size} "
             f"at 224x224, {a.steps} steps, SGD lr {a.lr} momentum 0.9, fp16 GradScaler; gradients "
             f"on {gb} samples, fp16 loss scale {a.grad_scale:g}.", "",
             "| one step's gradients vs fp64 | gpuperf fused | gpuperf unfused | PyTorch AMP |",
             "|---|---|---|---|"]
    for precision, gr in grads.items():
        lines.append(f"| {precision} | " + " | ".join(
            f"{gr[k][0]:.3e} (worst {gr[k][1]:.2e} {gr[k][2]})"
            for k in ("gpuperf_fused", "gpuperf_unfused", "pytorch_amp")) + " |")
    lines += ["", "| run | first loss | final loss | skipped | max loss diff from A | "
              "BN stats distance from A |", "|---|---|---|---|---|---|"]
    for name, s in summary.items():
        lines.append(f"| {name} | {s['first_loss']:.4f} | {s['final_loss']:.4f} | "
                     f"{s['skipped_steps']} | {s['max_loss_difference_from_a']:.3e} | "
                     f"{s['bn_statistics_distance_from_a']:.3e} |")
    lines += [""] + [f"- {'PASS' if c['passed'] else 'FAIL'}: {c['check']}: {c['detail']}"
                     for c in result["checks"]]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "equivalence.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "equivalence.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(text, end="")
    return 0 if all(c["passed"] for c in result["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
