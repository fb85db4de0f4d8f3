#!/usr/bin/env python3
"""The PyTorch peer of gpuperf's language-model benchmark (lm_benchmark): the same models, data,
optimizer and measurement in PyTorch, for side-by-side runs.

Models, defined as gpuperf defines them (libgpuperf/torch/src/models/transformer.cpp):
GPT-2 as nanoGPT writes it (pre-LayerNorm, GELU tanh, tied embeddings, vocabulary 50304,
N(0, 0.02) weights and N(0, 0.02/sqrt(2L)) residual projections), and a Llama-style decoder as
torchtitan writes Llama 3 (RMSNorm, SwiGLU, rotary embeddings in the rotate_half layout,
grouped-query attention, tied embeddings for the 1B and 3B shapes). Attention through
F.scaled_dot_product_attention(is_causal=True) (written out on PyTorch 1.x). The weights are drawn
as gpuperf draws them (init_as_gpuperf), so that with the same seed both sides start from the
same weights: in this benchmark's regime (one batch memorised at lr 6e-4 without warm-up) the loss
after 60 steps depends on the initial draw by several nats.

Data: one batch of uniform random tokens (seeded), every step, as gpuperf's synthetic tokens.
Optimizer: fused AdamW (betas 0.9/0.95, weight decay on every parameter, as gpuperf applies it).
Gradient accumulation (--accumulation-steps k): the batch in k micro-batches split as gpuperf's
TrainStep splits it (tensor_split: sizes at most one sample apart), each micro-batch's loss
weighted by its share of the batch before its backward pass, one optimizer step (accumulate()).
Variants (--variant): eager; graph (the whole step in a manually captured CUDA graph, capturable
fused AdamW); compile (torch.compile, default mode); max-autotune (torch.compile
mode="max-autotune", which adds CUDA graphs); the first step's time is the compile time.

Method, as gpuperf's: warm-up steps, then timed windows of several steps between two CUDA events
(on the CPU, --device cpu: the clock), throughput per window, median over windows.

    python3 lm_peer.py --model gpt2 --batch-size 16 --seq-len 1024 --variant compile

Prints one JSON line: {"model", "variant", "accumulation_steps", "median" (sequences/s),
"tokens_per_second", "flops_per_token" (6N + 6 x layers x width x sequence), "parameters",
"windows", "first_loss", "final_loss", "window_losses" (the loss of each window's last step),
"peak_memory_bytes", "compile_s", ...}.
"""

import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPES = {
    # name: (kind, vocabulary, layers, heads, kv_heads, width, hidden, context)
    "gpt2": ("gpt", 50304, 12, 12, 12, 768, 3072, 1024),
    "gpt2-medium": ("gpt", 50304, 24, 16, 16, 1024, 4096, 1024),
    "gpt2-large": ("gpt", 50304, 36, 20, 20, 1280, 5120, 1024),
    "gpt2-xl": ("gpt", 50304, 48, 25, 25, 1600, 6400, 1024),
    "llama-1b": ("llama", 128256, 16, 32, 8, 2048, 8192, 8192),
    "llama-3b": ("llama", 128256, 28, 24, 8, 3072, 8192, 8192),
}


def causal_attention(q, k, v):
    """F.scaled_dot_product_attention(is_causal=True); on PyTorch 1.x, which has none, written out
    as gpuperf writes it there (softmax in float32)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    later = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(later, float("-inf"))
    return torch.softmax(scores.float(), -1).to(v.dtype) @ v


def init_directly(model, residual_names, layers):
    """nanoGPT's and torchtitan's order (--init direct): every 2-D parameter drawn once, the
    residual projections straight from N(0, 0.02 / sqrt(2 x layers)); biases zero. The same
    distribution as gpuperf's, other values."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif p.dim() == 2:
                residual = any(name.endswith(f"{r}.weight") for r in residual_names)
                p.normal_(0.0, 0.02 / math.sqrt(2 * layers) if residual else 0.02)


def init_as_gpuperf(model, residual_names, layers):
    """gpuperf's initialisation, draw for draw (GptImpl and LlamaImpl): every 2-D parameter
    N(0, 0.02) in named_parameters() order, biases zero, then each block's residual projections
    (`residual_names`) drawn again from N(0, 0.02 / sqrt(2 x layers)), block by block. With the
    same seed and the same construction order (each layer's own default initialisation draws
    first, in both), both sides start from the same weights, bit for bit."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif p.dim() == 2:
                p.normal_(0.0, 0.02)
        for block in model.blocks:
            for name in residual_names:
                getattr(block, name).weight.normal_(0.0, 0.02 / math.sqrt(2 * layers))


INIT = {"gpuperf": init_as_gpuperf, "direct": init_directly}


class GptBlock(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.c_attn = nn.Linear(width, 3 * width)
        self.attn_proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.c_fc = nn.Linear(width, 4 * width)
        self.mlp_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = causal_attention(q, k, v)
        x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocabulary, layers, heads, width, context, init="gpuperf"):
        super().__init__()
        self.wte = nn.Embedding(vocabulary, width)
        self.wpe = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(GptBlock(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        INIT[init](self, ("attn_proj", "mlp_proj"), layers)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def rms_norm(x, weight, eps):
    f = x.float()
    return (f * torch.rsqrt(f.pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, width, heads, kv_heads, hidden, eps):
        super().__init__()
        self.heads, self.kv_heads, self.eps = heads, kv_heads, eps
        kv_width = width // heads * kv_heads
        self.attention_norm = nn.Parameter(torch.ones(width))
        self.wq = nn.Linear(width, width, bias=False)
        self.wk = nn.Linear(width, kv_width, bias=False)
        self.wv = nn.Linear(width, kv_width, bias=False)
        self.wo = nn.Linear(width, width, bias=False)
        self.ffn_norm = nn.Parameter(torch.ones(width))
        self.w1 = nn.Linear(width, hidden, bias=False)
        self.w2 = nn.Linear(hidden, width, bias=False)
        self.w3 = nn.Linear(width, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, c = x.shape
        d = c // self.heads
        n = rms_norm(x, self.attention_norm, self.eps)
        q = self.wq(n).view(b, t, self.heads, d).transpose(1, 2)
        k = self.wk(n).view(b, t, self.kv_heads, d).transpose(1, 2)
        v = self.wv(n).view(b, t, self.kv_heads, d).transpose(1, 2)
        c_, s_ = cos[:t].to(q.dtype), sin[:t].to(q.dtype)
        q = q * c_ + rotate_half(q) * s_
        k = k * c_ + rotate_half(k) * s_
        if self.kv_heads != self.heads:
            r = self.heads // self.kv_heads
            k = k.unsqueeze(2).expand(b, self.kv_heads, r, t, d).reshape(b, self.heads, t, d)
            v = v.unsqueeze(2).expand(b, self.kv_heads, r, t, d).reshape(b, self.heads, t, d)
        y = causal_attention(q, k, v)
        h = x + self.wo(y.transpose(1, 2).contiguous().view(b, t, c))
        m = rms_norm(h, self.ffn_norm, self.eps)
        return h + self.w2(F.silu(self.w1(m)) * self.w3(m))


class Llama(nn.Module):
    def __init__(self, vocabulary, layers, heads, kv_heads, width, hidden, context,
                 theta=500000.0, eps=1e-5, init="gpuperf"):
        super().__init__()
        self.eps = eps
        self.tok_embeddings = nn.Embedding(vocabulary, width)
        self.blocks = nn.ModuleList(LlamaBlock(width, heads, kv_heads, hidden, eps)
                                    for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(width))
        INIT[init](self, ("wo", "w2"), layers)
        d = width // heads
        freqs = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        angles = torch.outer(torch.arange(context, dtype=torch.float64), freqs).repeat(1, 2)
        self.register_buffer("rope_cos", angles.cos().float())
        self.register_buffer("rope_sin", angles.sin().float())

    def forward(self, ids):
        x = self.tok_embeddings(ids)
        for block in self.blocks:
            x = block(x, self.rope_cos, self.rope_sin)
        return F.linear(rms_norm(x, self.norm, self.eps), self.tok_embeddings.weight)


def build(name, init="gpuperf"):
    kind, vocab, layers, heads, kv, width, hidden, context = SHAPES[name]
    if kind == "gpt":
        return Gpt(vocab, layers, heads, width, context, init=init), layers, width, vocab
    return (Llama(vocab, layers, heads, kv, width, hidden, context, init=init), layers, width,
            vocab)


def make_optimizer(model, lr, betas, weight_decay, cuda, capturable=False):
    """The peer's AdamW over every parameter with one weight decay (as gpuperf applies it): fused
    on the GPU (PyTorch's fastest AdamW, as gpuperf's), PyTorch's default on the CPU."""
    fused = {"fused": True, "capturable": capturable} if cuda else {}
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=betas, weight_decay=weight_decay,
                             eps=1e-8, **fused)


def split_batch(inputs, targets, steps):
    """The (inputs, targets) micro-batches of a batch in `steps` parts, as gpuperf's TrainStep
    makes them: tensor_split along the batch (9 samples in 4: 3, 2, 2, 2), fewer parts only when
    the batch has fewer samples."""
    return list(zip(inputs.tensor_split(steps), targets.tensor_split(steps)))


def accumulate(forward, parts, autocast):
    """Forward and backward passes over `parts` (split_batch's micro-batches), each micro-batch's
    mean next-token loss weighted by its share of the batch's samples, as gpuperf's TrainStep
    weights it, so that the gradients add up to the whole batch's; `autocast` makes the context
    each forward pass runs in. Returns the batch's loss (the weighted sum, detached)."""
    samples = sum(x.shape[0] for x, _ in parts)
    total = None
    for x, y in parts:
        with autocast():
            logits = forward(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        if len(parts) > 1:
            loss = loss * (x.shape[0] / samples)
        loss.backward()
        total = loss.detach() if total is None else total + loss.detach()
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="gpt2", choices=sorted(SHAPES))
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--accumulation-steps", type=int, default=1,
                   help="the batch in this many micro-batches, one optimizer step (as "
                        "lm_benchmark --accumulation-steps)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--threads", type=int, default=0,
                   help="--device cpu: intra-op threads (0: PyTorch's default)")
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.95)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps-per-window", type=int, default=10)
    p.add_argument("--windows", type=int, default=5)
    p.add_argument("--variant", default="eager",
                   choices=["eager", "graph", "compile", "max-autotune"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init", default="gpuperf", choices=sorted(INIT),
                   help="gpuperf: the weights lm_benchmark starts from with the same seed "
                        "(default); direct: nanoGPT's order of draws, other weights")
    p.add_argument("--profile", metavar="PATH",
                   help="after timing, profile --steps-per-window more steps with torch.profiler "
                        "and write the GPU kernels by total time to PATH (not in the figures)")
    a = p.parse_args()
    for name in ("batch_size", "seq_len", "steps_per_window", "windows"):
        if getattr(a, name) <= 0:
            p.error(f"--{name.replace('_', '-')}: must be > 0, got {getattr(a, name)}")
    if not 1 <= a.accumulation_steps <= a.batch_size:
        p.error(f"--accumulation-steps: must be 1 to --batch-size ({a.batch_size}), got "
                f"{a.accumulation_steps}")
    if a.warmup < (4 if a.variant == "graph" else 1):
        p.error(f"--warmup: must be >= {4 if a.variant == 'graph' else 1} for --variant "
                f"{a.variant}, got {a.warmup}")
    if a.precision == "fp16":
        p.error("--precision: bf16 or fp32 (fp16 would need a GradScaler on both sides)")
    cuda = a.device == "cuda"
    if not cuda and a.variant != "eager":
        p.error(f"--variant: {a.variant} needs --device cuda; the CPU runs eager")
    if cuda and not torch.cuda.is_available():
        p.error("--device: cuda, but this PyTorch sees no GPU")
    if a.threads < 0:
        p.error(f"--threads: must be >= 0, got {a.threads}")
    if a.threads:
        torch.set_num_threads(a.threads)

    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
    model, layers, width, vocab = build(a.model, a.init)
    model.to(device)
    if a.seq_len > SHAPES[a.model][7]:
        p.error(f"--seq-len: must be <= {SHAPES[a.model][7]}, got {a.seq_len}")
    parameters = sum(t.numel() for t in model.parameters())
    generator = torch.Generator().manual_seed(a.seed)
    ids = torch.randint(0, vocab, (a.batch_size, a.seq_len + 1), generator=generator)
    inputs = ids[:, :-1].contiguous().to(device)
    targets = ids[:, 1:].contiguous().to(device)

    optimizer = make_optimizer(model, a.lr, (a.beta1, a.beta2), a.weight_decay, cuda,
                               a.variant == "graph")
    forward = model
    if a.variant in ("compile", "max-autotune"):
        forward = torch.compile(model, mode=None if a.variant == "compile" else "max-autotune")

    parts = split_batch(inputs, targets, a.accumulation_steps)

    def autocast():
        return torch.autocast(a.device, dtype=torch.bfloat16, enabled=a.precision == "bf16",
                              cache_enabled=a.variant != "graph")

    def step():
        loss = accumulate(forward, parts, autocast)
        optimizer.step()
        optimizer.zero_grad(set_to_none=a.variant != "graph")
        return loss

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    losses = []
    started = time.perf_counter()
    if a.variant == "graph":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(a.warmup - 1):
                losses.append(step().clone())
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = step()

        def run():
            graph.replay()
            return static_loss
        losses.append(run().clone())
    else:
        losses.append(step().clone())
        sync()
        run = step
        for _ in range(a.warmup - 1):
            run()
    sync()
    first_step_s = time.perf_counter() - started

    rates = []
    window_losses = []
    last = None
    for _ in range(a.windows):
        if cuda:
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
        else:
            started = time.perf_counter()
        for _ in range(a.steps_per_window):
            last = run()
        if cuda:
            end.record()
            end.synchronize()
            seconds = begin.elapsed_time(end) / 1e3
        else:
            seconds = time.perf_counter() - started
        rates.append(a.batch_size * a.steps_per_window / seconds)
        window_losses.append(float(last.item()))  # between windows, the device idle
    median = statistics.median(rates)
    if a.profile and cuda:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(a.steps_per_window):
                run()
            torch.cuda.synchronize()
        averages = prof.key_averages()
        try:  # "device_time_total" since 2.4, "cuda_time_total" before
            table = averages.table(sort_by="self_device_time_total", row_limit=40,
                                   max_name_column_width=90)
        except (AttributeError, KeyError, ValueError):
            table = averages.table(sort_by="self_cuda_time_total", row_limit=40,
                                   max_name_column_width=90)
        with open(a.profile, "w") as f:
            f.write(table)
    flops_per_token = 6 * parameters + 6 * layers * width * a.seq_len
    print(json.dumps({
        "model": a.model, "variant": a.variant, "batch_size": a.batch_size,
        "accumulation_steps": a.accumulation_steps,
        "seq_len": a.seq_len, "precision": a.precision,
        "median": median, "tokens_per_second": median * a.seq_len, "windows": rates,
        "parameters": parameters, "flops_per_token": flops_per_token,
        "compile_s": first_step_s if a.variant in ("compile", "max-autotune") else None,
        "init": a.init, "device": a.device, "threads": torch.get_num_threads() if not cuda else None,
        "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if cuda else None,
        "first_loss": float(losses[0].item()), "final_loss": float(last.item()),
        "window_losses": [v if math.isfinite(v) else None for v in window_losses],
        "torch": torch.__version__,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
