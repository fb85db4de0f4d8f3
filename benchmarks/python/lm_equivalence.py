#!/usr/bin/env python3
"""gpuperf's language-model training against PyTorch's from the same initial weights and data.

The peer's model (benchmarks/python/lm_peer.py, gpuperf's parameter names) is built with a seed;
its state_dict and the token batches are written as safetensors files. --data bigram (default):
a new batch every step from a seeded sparse Markov chain (4 possible successors a token), a
learnable stream on which the loss falls steadily (--data-vocab N: over token ids below N only,
so that a large-vocabulary model sees each transition often enough to learn it within the run);
--data fixed: one batch of random tokens every step (memorised, loss to ~0: a regime where small
rounding differences grow). gpuperf's
`equivalence_run --model <lm>` loads them by name and trains --steps steps through TrainStep as
lm_benchmark does (bf16 autocast, fused AdamW betas 0.9/--beta2, weight decay, the whole step in
a CUDA graph), also with the graph off and with torch::optim's AdamW. PyTorch runs that differ
only in choices a user could make set the spread: A eager fused AdamW, B the same again
(run-to-run nondeterminism), C eager foreach AdamW (PyTorch's default implementation), D the whole
step in a manual CUDA graph (capturable fused AdamW), E torch.compile (Inductor's own fused
kernels, so other rounding, as gpuperf's kernels have). R, PyTorch in float32 without autocast
or TF32, is the reference trajectory; S, the same with foreach AdamW, is PyTorch's own float32
spread (another rounding of the same algorithm). Checks: (1) gpuperf's largest per-step loss
difference from A within the largest of B's to E's (plus 1e-3); (2) gpuperf's bf16 runs no
further from R (RMS over the steps) than the furthest of PyTorch's bf16 runs A to E, i.e. no less
exact; (3) gpuperf in float32 within 1e-3 of R at every step (the same algorithm, rounding
aside), or, where S ran, within S's largest difference from R plus 1e-3 (where early loss spikes
amplify a float32 rounding, as in Llama 1B's first steps, a fixed 1e-3 may be tighter than
PyTorch's own float32 runs agree); (4) one step's
gradients from the same weights on the first batch: gpuperf's bf16 gradients no more than 2x as far
from float32's (relative L2 over every parameter) as PyTorch's bf16 autocast ones, and a table of
the parameters where gpuperf's are furthest relative to PyTorch's (a wrong gradient shows there).
--fp32-trajectory off leaves out R, S and gpuperf's float32 run (200 float32 steps of a 1B model
outlast a device call) and with them checks (2) and (3); --runs picks runs by name (A, graph, B,
C, D, E, R, eager, optim, fp32, S, gradients), so that two device calls can share the work and
--table-from merges their files. Each run prints a progress line as it ends, and
DIR/lm_equivalence.json holds the losses so far.

    python3 lm_equivalence.py --build build-gpu --out DIR [--model gpt2] [--steps 200]
    python3 lm_equivalence.py --table-from DIR/lm_equivalence.json [DIR2/...]   (no GPU, no torch)

Writes DIR/lm_equivalence.json and .md, prints the Markdown; exits 1 when a check fails, 77
(SKIPPED) without CUDA, 2 for bad arguments.
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    import torch.nn.functional as F

    import lm_peer
    from equivalence import read_safetensors, run_gpuperf, write_safetensors
except ImportError:  # --table-from needs none of them
    torch = None


def pytorch_losses(state, xs, ys, a, impl, graph=False, compiled=False, precision="bf16"):
    """Per-step losses of PyTorch's model; step i trains on batch i mod S of xs, ys [S, N, T].
    precision fp32: no autocast (and no TF32, set once in main): the reference trajectory."""
    model, _, _, _ = lm_peer.build(a.model)
    model.load_state_dict(state)
    model.cuda()
    forward = torch.compile(model) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, a.beta2),
                            weight_decay=a.weight_decay, eps=1e-8,
                            fused=impl == "fused", foreach=impl == "foreach",
                            capturable=graph)
    x, y = xs[0].clone(), ys[0].clone()

    def load(i):
        x.copy_(xs[i % xs.shape[0]])
        y.copy_(ys[i % ys.shape[0]])

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=not graph,
                            enabled=precision == "bf16"):
            logits = forward(x)
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=not graph)
        return loss.detach()

    losses = []
    if not graph:
        for i in range(a.steps):
            load(i)
            losses.append(step().clone())
    else:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(3):
                load(i)
                losses.append(step().clone())
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        load(3)
        with torch.cuda.graph(g):
            static = step()
        # Capture does not run the step: replay it for step 3 and on.
        for i in range(3, a.steps):
            load(i)
            g.replay()
            losses.append(static.clone())
    return [float(v) for v in torch.stack(losses).cpu()]


def pytorch_gradients(state, x, y, a, precision):
    """One step's gradients from `state` on batch x, y [N, T]: bf16 autocast as the peer trains,
    or float32 (no autocast; TF32 off, set once in main), the reference."""
    model, _, _, _ = lm_peer.build(a.model)
    model.load_state_dict(state)
    model.cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
    loss.backward()
    return {n: p.grad.detach().float().cpu() for n, p in model.named_parameters()}


def gradient_table(ours, theirs, reference):
    """Per parameter: max|g - ref| / max|ref| for gpuperf's and PyTorch's bf16 gradients against
    float32's; and both over every parameter together (relative L2)."""
    rows = []
    for name, ref in reference.items():
        scale = float(ref.abs().max())
        if scale == 0:
            continue
        rows.append((name, float((ours[name] - ref).abs().max()) / scale,
                     float((theirs[name] - ref).abs().max()) / scale))

    def l2(g):
        num = sum(float(((g[n].double() - r.double()) ** 2).sum()) for n, r in reference.items())
        den = sum(float((r.double() ** 2).sum()) for r in reference.values())
        return math.sqrt(num / den)
    return rows, l2(ours), l2(theirs)


def bigram_tokens(vocab, shape, successors, seed):
    """Tokens of a seeded sparse Markov chain: each token has `successors` possible next tokens,
    so the stream is learnable (its entropy is log(successors) nats a token) and training from it
    falls steadily instead of memorising one batch."""
    g = torch.Generator().manual_seed(seed)
    table = torch.randint(0, vocab, (vocab, successors), generator=g)
    rows = math.prod(shape[:-1])
    out = torch.empty(rows, shape[-1], dtype=torch.long)
    out[:, 0] = torch.randint(0, vocab, (rows,), generator=g)
    for t in range(1, shape[-1]):
        pick = torch.randint(0, successors, (rows,), generator=g)
        out[:, t] = table[out[:, t - 1], pick]
    return out.view(*shape)


# The runs, in the order they run (--runs picks some): PyTorch's A to E, PyTorch float32 R,
# gpuperf's paths, and the one-step gradient comparison.
RUNS = ["A", "graph", "B", "C", "D", "E", "R", "eager", "optim", "fp32", "S", "gradients"]
# Settings that must agree for --table-from to merge files (the card and PyTorch too: their
# kernels round differently).
SAME = ["model", "batch_size", "seq_len", "steps", "lr", "beta2", "weight_decay", "data",
        "data_vocab", "torch", "device"]


def merged(paths):
    """The settings, runs, gradients and completeness of one or more lm_equivalence.json files
    (runs of the same settings, e.g. two device calls); ValueError when they do not agree."""
    settings, runs, gradients, complete = None, {}, None, True
    for path in paths:
        with open(path) as f:
            done = json.load(f)
        if settings is None:
            settings = done["settings"]
        differ = [k for k in SAME if done["settings"].get(k) != settings.get(k)]
        if differ:
            raise ValueError(f"{path} ran other settings ({', '.join(differ)}) than {paths[0]}")
        twice = sorted(set(runs) & set(done["runs"]))
        if twice:
            raise ValueError(f"{path} has runs another file has too: {', '.join(twice)}")
        runs.update(done["runs"])
        gradients = gradients or done.get("gradients")
        complete = complete and done.get("complete", False)
    # The table's order whatever the files' order: A, gpuperf's graph path, then by name.
    first = {"A pytorch fused": 0, "gpuperf graph": 1}
    runs = dict(sorted(runs.items(), key=lambda kv: (first.get(kv[0], 2), kv[0])))
    return settings, runs, gradients, complete


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", help="gpuperf build folder (benchmarks/equivalence_run)")
    p.add_argument("--out")
    p.add_argument("--table-from", metavar="JSON", nargs="+",
                   help="print the table and checks of earlier runs' lm_equivalence.json (also "
                   "one cut short: the checks its runs allow, NOT RUN for the rest; several "
                   "files of the same settings merge, e.g. two device calls' --runs) and exit 1 "
                   "if a check fails; runs nothing")
    p.add_argument("--runs", default=",".join(RUNS),
                   help="the runs to make, comma-separated, of " + ",".join(RUNS) +
                   " (default: all; --fp32-trajectory off drops R, S and fp32)")
    p.add_argument("--model", default="gpt2",
                   choices=sorted(lm_peer.SHAPES) if torch is not None else None)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--beta2", type=float, default=0.95)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--data", default="bigram", choices=["bigram", "fixed"],
                   help="bigram: a new batch every step from a seeded sparse Markov chain (a "
                   "regime where two PyTorch runs stay close); fixed: one batch of random tokens "
                   "every step (memorised)")
    p.add_argument("--data-vocab", type=int, metavar="N",
                   help="bigram: the chain runs over token ids below N (default: the model's "
                   "whole vocabulary). With a large vocabulary 200 steps see each of the chain's "
                   "transitions about once and the loss stays near log(vocabulary); a few "
                   "thousand ids let the model learn the chain within the run")
    p.add_argument("--fp32-trajectory", default="on", choices=["on", "off"],
                   help="off: no float32 runs of --steps steps (R and gpuperf fp32), no checks "
                   "against them")
    a = p.parse_args(argv)
    if a.table_from:
        try:
            settings, runs, gradients, complete = merged(a.table_from)
            text, failed = report(settings, runs, gradients)
        except (OSError, ValueError, KeyError, TypeError) as e:
            p.error(f"--table-from {' '.join(a.table_from)}: {e}")
        if not complete:
            text += "\n(cut short: the runs above are those that ended)"
        print(text)
        return 1 if failed else 0
    selected = [r for r in a.runs.split(",") if r]
    unknown = [r for r in selected if r not in RUNS]
    if unknown or not selected:
        p.error(f"--runs {a.runs}: unknown {', '.join(unknown) or '(none given)'}; choose from "
                f"{','.join(RUNS)}")
    if a.fp32_trajectory == "off":
        selected = [r for r in selected if r not in ("R", "S", "fp32")]
        if not selected:
            p.error(f"--runs {a.runs} with --fp32-trajectory off: nothing left to run")
    if not a.build or not a.out:
        p.error("--build and --out are required (or --table-from)")
    if a.steps < 4 or a.batch_size < 1 or a.seq_len < 1:
        p.error("--steps must be >= 4, --batch-size and --seq-len >= 1")
    if torch is None or not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        return 77
    vocabulary = lm_peer.SHAPES[a.model][1]
    if a.data_vocab is not None and not 2 <= a.data_vocab <= vocabulary:
        p.error(f"--data-vocab {a.data_vocab}: must be 2 to {a.model}'s vocabulary {vocabulary}")
    if a.data_vocab is not None and a.data != "bigram":
        p.error(f"--data-vocab {a.data_vocab}: only with --data bigram (not {a.data})")
    # float32 means float32 for R (PyTorch's defaults keep TF32 for cuDNN); gpuperf's fp32 run
    # turns TF32 off itself.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tool = os.path.join(a.build, "benchmarks", "equivalence_run")
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    model, _, _, vocab = lm_peer.build(a.model)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if a.data == "fixed":
        ids = torch.randint(0, vocab, (1, a.batch_size, a.seq_len + 1),
                            generator=torch.Generator().manual_seed(1))
    else:
        ids = bigram_tokens(a.data_vocab or vocab, (a.steps, a.batch_size, a.seq_len + 1), 4,
                            seed=1)
    x, y = ids[..., :-1].contiguous(), ids[..., 1:].contiguous()
    weights = os.path.join(a.out, "weights.safetensors")
    batch = os.path.join(a.out, "batch.safetensors")
    write_safetensors(state, weights)
    write_safetensors({"input": x, "target": y}, batch)

    runs = {}
    settings = dict(vars(a), torch=torch.__version__, device=torch.cuda.get_device_name())
    started = time.monotonic()

    def ran(name, losses):
        # A progress line and the losses so far on disk: a run cut short keeps what it did.
        runs[name] = losses
        print(f"[{time.monotonic() - started:6.0f} s] {name}: {losses[0]:.4f} -> {losses[-1]:.4f}",
              flush=True)
        with open(os.path.join(a.out, "lm_equivalence.json"), "w") as f:
            json.dump({"settings": settings, "runs": runs, "complete": False}, f)

    xc, yc = x.cuda(), y.cuda()

    def gpuperf(name, precision, extra):
        js = os.path.join(a.out, name.replace(" ", "_").replace(":", "") + ".json")
        run_gpuperf(tool, ["--model", a.model, "--weights", weights, "--batch", batch,
                           "--mode", "steps", "--steps", str(a.steps), "--precision", precision,
                           "--lr", str(a.lr), "--beta2", str(a.beta2), "--weight-decay",
                           str(a.weight_decay), "--fuse", "off", "--json", js,
                           "--tensors", os.path.join(a.out, "after.safetensors")] + extra)
        with open(js) as f:
            ran(name, json.load(f)["losses"])

    # gpuperf's benchmark path right after PyTorch's run A, then PyTorch's spread (B to E), then
    # the float32 reference and the other paths: a run cut short by a time limit keeps the
    # comparison that matters most.
    plan = {
        "A": lambda: ran("A pytorch fused", pytorch_losses(state, xc, yc, a, "fused")),
        "graph": lambda: gpuperf("gpuperf graph", "bf16", ["--graph", "on"]),
        "B": lambda: ran("B pytorch fused again", pytorch_losses(state, xc, yc, a, "fused")),
        "C": lambda: ran("C pytorch foreach", pytorch_losses(state, xc, yc, a, "foreach")),
        "D": lambda: ran("D pytorch graph", pytorch_losses(state, xc, yc, a, "fused", graph=True)),
        "E": lambda: ran("E pytorch compile",
                         pytorch_losses(state, xc, yc, a, "fused", compiled=True)),
        "R": lambda: ran("R pytorch fp32",
                         pytorch_losses(state, xc, yc, a, "fused", precision="fp32")),
        "eager": lambda: gpuperf("gpuperf eager fused", "bf16", ["--graph", "off"]),
        "optim": lambda: gpuperf("gpuperf torch::optim", "bf16",
                                 ["--graph", "off", "--optimizer-impl", "torch"]),
        "fp32": lambda: gpuperf("gpuperf fp32", "fp32", ["--graph", "on"]),
        "S": lambda: ran("S pytorch fp32 foreach",
                         pytorch_losses(state, xc, yc, a, "foreach", precision="fp32")),
    }
    for key, run in plan.items():
        if key in selected:
            run()

    # One step's gradients from the same weights on the first batch: which parameter's gradient
    # (if any) gpuperf computes further from float32's than PyTorch's bf16 autocast does.
    gradients = None
    if "gradients" in selected:
        grads_path = os.path.join(a.out, "gpuperf_gradients.safetensors")
        run_gpuperf(tool, ["--model", a.model, "--weights", weights, "--batch", batch, "--mode",
                           "gradients", "--precision", "bf16", "--lr", str(a.lr), "--beta2",
                           str(a.beta2), "--weight-decay", str(a.weight_decay), "--fuse", "off",
                           "--tensors", grads_path])
        rows, ours_l2, theirs_l2 = gradient_table(
            read_safetensors(grads_path), pytorch_gradients(state, xc[0], yc[0], a, "bf16"),
            pytorch_gradients(state, xc[0], yc[0], a, "fp32"))
        os.remove(grads_path)
        gradients = {"per_parameter": rows, "gpuperf_relative_l2": ours_l2,
                     "pytorch_bf16_relative_l2": theirs_l2}
    return 1 if write_report(a.out, settings, runs, gradients) else 0


def report(settings, runs, gradients):
    """The Markdown table and checks for `runs` (name -> per-step losses): the checks whose runs
    are there, NOT RUN lines for the rest (a run cut short, --fp32-trajectory off); `gradients`
    None when the one-step gradient comparison did not run. Returns (text, failed checks)."""
    def diffs(losses, ref):
        if ref not in runs:
            return math.nan, math.nan
        d = [u - v for u, v in zip(losses, runs[ref])]
        return max(abs(v) for v in d), math.sqrt(sum(v * v for v in d) / len(d))

    fp32 = "R pytorch fp32" in runs
    has_a = "A pytorch fused" in runs
    bf16_gpuperf = [n for n in runs if n.startswith("gpuperf") and n != "gpuperf fp32"]
    pytorch_bf16 = [k for k in runs if k[0] in "BCDE"]
    spread = max((diffs(runs[k], "A pytorch fused")[0] for k in pytorch_bf16), default=math.nan)
    # Distance from exact arithmetic: PyTorch's bf16 runs (A to E) from the fp32 trajectory.
    ref_rms = max((diffs(runs[k], "R pytorch fp32")[1]
                   for k in ["A pytorch fused"] + pytorch_bf16 if k in runs), default=math.nan)
    s = settings
    lines = [f"# {s['model']}: gpuperf vs PyTorch from the same weights ({s['steps']} steps, batch "
             f"{s['batch_size']} x {s['seq_len']}, {s['data']} tokens"
             f"{' over ids below ' + str(s['data_vocab']) if s.get('data_vocab') else ''}, bf16, "
             f"AdamW lr {s['lr']}, "
             f"betas 0.9/{s['beta2']}, weight decay {s['weight_decay']}; torch "
             f"{s.get('torch', 'version not recorded')}"
             f"{', ' + s['device'] if s.get('device') else ''})", "",
             "| run | loss step 1 | step 50 | last | largest difference from A | RMS from A "
             "| largest difference from R (fp32) | RMS from R |",
             "|---|---|---|---|---|---|---|---|"]
    for name, losses in runs.items():
        da, ra = diffs(losses, "A pytorch fused")
        dr, rr = diffs(losses, "R pytorch fp32")
        from_a = f"{da:.4f} | {ra:.5f}" if has_a else "- | -"
        from_r = f"{dr:.4f} | {rr:.5f}" if fp32 else "- | -"
        lines.append(f"| {name} | {losses[0]:.4f} | {losses[min(49, len(losses) - 1)]:.4f} | "
                     f"{losses[-1]:.4f} | {from_a} | {from_r} |")
    checks = []
    not_run = []
    for name in bf16_gpuperf:
        if has_a and pytorch_bf16:
            d = diffs(runs[name], "A pytorch fused")[0]
            checks.append((f"{name} within PyTorch's spread around A ({d:.4f} vs {spread:.4f} + "
                           f"1e-3; {', '.join(k.split()[0] for k in pytorch_bf16)} ran)",
                           d <= spread + 1e-3))
        else:
            not_run.append(f"{name} within PyTorch's spread around A (A or B to E did not run)")
        if fp32 and not math.isnan(ref_rms):
            r = diffs(runs[name], "R pytorch fp32")[1]
            checks.append((f"{name} as close to the fp32 trajectory as PyTorch's bf16 runs (RMS "
                           f"{r:.5f} vs at most {ref_rms:.5f})", r <= ref_rms))
        elif fp32:
            not_run.append(f"{name} as close to the fp32 trajectory as PyTorch's bf16 runs (none "
                           f"of A to E ran)")
    if fp32 and "gpuperf fp32" in runs:
        d = diffs(runs["gpuperf fp32"], "R pytorch fp32")[0]
        if "S pytorch fp32 foreach" in runs:
            own = diffs(runs["S pytorch fp32 foreach"], "R pytorch fp32")[0]
            checks.append((f"gpuperf fp32 within PyTorch's float32 spread around R ({d:.5f} vs "
                           f"{own:.5f} + 1e-3; S ran)", d <= own + 1e-3))
        else:
            checks.append((f"gpuperf fp32 within 1e-3 of PyTorch fp32 at every step ({d:.5f})",
                           d <= 1e-3))
    if not fp32:
        not_run.append("the float32 trajectory R and the checks against it")
    if "gpuperf fp32" not in runs:
        not_run.append("gpuperf in float32 and its check against R")
    if gradients:
        ours_l2 = gradients["gpuperf_relative_l2"]
        theirs_l2 = gradients["pytorch_bf16_relative_l2"]
        checks.append((f"gpuperf's first-step bf16 gradients within 2x PyTorch bf16's distance "
                       f"from float32's (relative L2 {ours_l2:.2e} vs {theirs_l2:.2e})",
                       ours_l2 <= 2 * theirs_l2))
        rows = sorted(gradients["per_parameter"], key=lambda r: r[1] / max(r[2], 1e-12),
                      reverse=True)
        lines += ["", "First step's gradients against float32's (max |g - ref| / max |ref|), the "
                  "8 parameters where gpuperf's is furthest relative to PyTorch bf16's:", "",
                  "| parameter | gpuperf bf16 | PyTorch bf16 |", "|---|---|---|"]
        lines += [f"| {n} | {g:.2e} | {t:.2e} |" for n, g, t in rows[:8]]
        lines.append(f"| all, relative L2 | {ours_l2:.2e} | {theirs_l2:.2e} |")
    else:
        not_run.append("the first step's gradients against float32's")
    failed = [text for text, ok in checks if not ok]
    lines.append("")
    lines += [f"{'PASS' if ok else 'FAIL'}: {text}" for text, ok in checks]
    lines += [f"NOT RUN: {text}" for text in not_run]
    return "\n".join(lines), failed


def write_report(out, settings, runs, gradients):
    """DIR/lm_equivalence.md and .json (complete) from the runs; prints the Markdown and returns
    the failed checks."""
    text, failed = report(settings, runs, gradients)
    with open(os.path.join(out, "lm_equivalence.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "lm_equivalence.json"), "w") as f:
        json.dump({"settings": settings, "runs": runs, "complete": True, "failed": failed,
                   "gradients": gradients}, f)
    print(text)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
