#!/usr/bin/env python3
"""Whether benchmarks/python/lm_peer.py draws a model's initial weights as gpuperf does and computes
the same function: the tiny GPT-2 and Llama-style models of lm_init_probe, built on both sides
from the same seed, must hold the same parameters, bit for bit (lm_benchmark and lm_peer.py, both
seeded 0, then start from the same weights), and give the same float32 next-token loss on a fixed
batch and the same gradients, to float32's rounding (the two sides add in other orders). Also
checks that each comparison can fail: another seed on the peer's side must give other weights,
and the peer's Llama with its rotary embedding pairing adjacent dimensions (Meta's reference
layout, not the rotate_half layout both sides use) other gradients (at the initial weights'
scale the attention is nearly uniform, so the loss itself barely moves: the gradients of the
query and key projections are what see the rotation). Then training: lm_init_probe's 40 AdamW
steps on its batch through gpuperf's TrainStep against the peer's optimizer (lm_peer.make_optimizer,
the same settings) from the same weights, the loss before each step within TRAJECTORY_TOLERANCE;
that comparison must fail against a peer that leaves the 1-D parameters (norms, biases) out of the
weight decay, as nanoGPT groups them. And gradient accumulation: lm_init_probe's AdamW steps on a
batch of 3 in 2 micro-batches through TrainStep against the peer's (lm_peer.split_batch and
lm_peer.accumulate, what lm_peer.py --accumulation-steps runs), within TRAJECTORY_TOLERANCE; that
comparison must fail against a peer that weights the two micro-batches (2 and 1 samples) equally.
Exit 0 when equal, 1 otherwise, 77 (SKIPPED) without a Python that imports torch.

    check_lm_peer_init.py <lm_init_probe> <lm_peer.py>
"""

import contextlib
import importlib.util
import json
import subprocess
import sys


# Relative to the largest value compared: float32 sums in another order (about 1e-7 each).
LOSS_TOLERANCE = 1e-5
GRADIENT_TOLERANCE = 1e-4
# lm_init_probe's trajectory settings (kTrajectory*) and how far apart (nats) the two sides' losses
# may be at any step: float32 roundings in two implementations, grown over the steps.
TRAJECTORY = {"steps": 40, "lr": 1e-2, "betas": (0.9, 0.95), "weight_decay": 0.5}
TRAJECTORY_TOLERANCE = 1e-3


def peer_models(lm_peer, torch, seed):
    torch.manual_seed(seed)
    gpt = lm_peer.Gpt(vocabulary=64, layers=2, heads=2, width=16, context=16)
    torch.manual_seed(seed)
    llama = lm_peer.Llama(vocabulary=64, layers=2, heads=4, kv_heads=2, width=16, hidden=48,
                          context=16)
    return {"gpt": gpt, "llama": llama}


def flat(t):
    return [float(v) for v in t.detach().float().flatten().tolist()]


def peer_side(lm_peer, torch, seed, batch):
    """The peer's models built from `seed`: their initial values, and their loss and gradients on
    lm_init_probe's batch (its "ids": inputs, then targets one token later)."""
    ids = torch.tensor(batch, dtype=torch.long)
    values, losses, grads = {}, {}, {}
    for kind, model in peer_models(lm_peer, torch, seed).items():
        values[kind] = {name: flat(p) for name, p in model.named_parameters()}
        logits = model(ids[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 ids[:, 1:].reshape(-1))
        loss.backward()
        losses[kind] = float(loss)
        grads[kind] = {name: flat(p.grad) for name, p in model.named_parameters()}
    return values, losses, grads


def peer_trajectories(lm_peer, torch, seed, batch, decay_1d=True):
    """The loss before each of TRAJECTORY's steps of the peer's AdamW on `batch`, from the peer's
    models built from `seed`; decay_1d False: the 1-D parameters in a group without decay."""
    ids = torch.tensor(batch, dtype=torch.long)
    out = {}
    for kind, model in peer_models(lm_peer, torch, seed).items():
        optimizer = lm_peer.make_optimizer(model, TRAJECTORY["lr"], TRAJECTORY["betas"],
                                           TRAJECTORY["weight_decay"], cuda=False)
        if not decay_1d:
            decayed = [p for p in model.parameters() if p.dim() >= 2]
            kept = [p for p in model.parameters() if p.dim() < 2]
            optimizer = torch.optim.AdamW(
                [{"params": decayed}, {"params": kept, "weight_decay": 0.0}],
                lr=TRAJECTORY["lr"], betas=TRAJECTORY["betas"],
                weight_decay=TRAJECTORY["weight_decay"], eps=1e-8)
        losses = []
        for _ in range(TRAJECTORY["steps"]):
            logits = model(ids[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                     ids[:, 1:].reshape(-1))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(loss))
        out[kind] = losses
    return out


def peer_accumulated(lm_peer, torch, seed, accumulated, equal_shares=False):
    """The loss before each step of the peer's AdamW on lm_init_probe's "accumulated" batch in its
    micro-batches (lm_peer.split_batch, lm_peer.accumulate), as many steps as gpuperf's side took;
    equal_shares: each micro-batch taken as a batch of its own (lm_peer.accumulate on it alone),
    so that every micro-batch weighs the same whatever its samples (wrong where the sizes differ;
    the gradients come k times those of weights 1/k, which AdamW's update does not see but for
    its epsilon)."""
    ids = torch.tensor(accumulated["ids"], dtype=torch.long)
    steps = len(accumulated["trajectory"]["gpt"])
    parts = lm_peer.split_batch(ids[:, :-1], ids[:, 1:], accumulated["accumulation_steps"])
    groups = [[part] for part in parts] if equal_shares else [parts]
    out = {}
    for kind, model in peer_models(lm_peer, torch, seed).items():
        optimizer = lm_peer.make_optimizer(model, TRAJECTORY["lr"], TRAJECTORY["betas"],
                                           TRAJECTORY["weight_decay"], cuda=False)
        losses = []
        for _ in range(steps):
            losses.append(sum(float(lm_peer.accumulate(model, group, contextlib.nullcontext))
                              for group in groups) / len(groups))
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        out[kind] = losses
    return out


def trajectory_differences(ours, theirs, label="trajectory"):
    out = []
    for kind in ("gpt", "llama"):
        a, b = ours["trajectory"][kind], theirs[kind]
        if len(a) != len(b):
            out.append(f"{kind} {label}: {len(a)} steps on gpuperf's side, {len(b)} on the peer's")
            continue
        worst = max(range(len(a)), key=lambda i: abs(a[i] - b[i]))
        if not abs(a[worst] - b[worst]) <= TRAJECTORY_TOLERANCE:
            out.append(f"{kind} {label}: step {worst + 1} loss {a[worst]:.6f} on gpuperf's side, "
                       f"{b[worst]:.6f} on the peer's")
    return out


def largest_gap(ours, theirs):
    return max(abs(x - y) for kind in ("gpt", "llama") for x, y in zip(ours[kind], theirs[kind]))


def differences(ours, theirs):
    out = []
    for kind in ("gpt", "llama"):
        a, b = ours[kind], theirs[kind]
        if sorted(a) != sorted(b):  # the probe's JSON object lists its names sorted
            out.append(f"{kind}: parameters {sorted(a)} on gpuperf's side, {sorted(b)} on the "
                       "peer's")
            continue
        for name in a:
            if len(a[name]) != len(b[name]):
                out.append(f"{kind} {name}: {len(a[name])} values against {len(b[name])}")
                continue
            unequal = [i for i, (x, y) in enumerate(zip(a[name], b[name])) if x != y]
            if unequal:
                i = unequal[0]
                out.append(f"{kind} {name}: {len(unequal)} of {len(a[name])} values differ "
                           f"(first at {i}: {a[name][i]!r} against {b[name][i]!r})")
    return out


def function_differences(ours, losses, grads):
    out = []
    for kind in ("gpt", "llama"):
        a, b = ours["loss"][kind], losses[kind]
        if not abs(a - b) <= LOSS_TOLERANCE * abs(b):
            out.append(f"{kind} loss: {a!r} on gpuperf's side, {b!r} on the peer's")
        for name, theirs in grads[kind].items():
            mine = ours["grad"][kind].get(name)
            if mine is None or len(mine) != len(theirs):
                out.append(f"{kind} {name}: no gradient of {len(theirs)} values on gpuperf's side")
                continue
            scale = max(abs(v) for v in theirs)
            worst = max(abs(x - y) for x, y in zip(mine, theirs))
            if not worst <= GRADIENT_TOLERANCE * scale:
                out.append(f"{kind} {name}: gradients differ by {worst:.3g}, largest {scale:.3g}")
    return out


def interleaved(x):
    """rotate_half with dimensions paired (0, 1), (2, 3), ... instead of (i, i + d/2)."""
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    return (pairs.flip(-1) * pairs.new_tensor([-1.0, 1.0])).reshape(x.shape)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("SKIPPED: this Python has no torch (Debian: python3-torch)")
        return 77
    spec = importlib.util.spec_from_file_location("lm_peer", sys.argv[2])
    lm_peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lm_peer)
    ours = json.loads(subprocess.run([sys.argv[1], "0"], check=True, capture_output=True,
                                     text=True).stdout)
    values, losses, grads = peer_side(lm_peer, torch, 0, ours["ids"])
    trajectories = peer_trajectories(lm_peer, torch, 0, ours["ids"])
    accumulated = ours["accumulated"]
    peer_acc = peer_accumulated(lm_peer, torch, 0, accumulated)
    problems = (differences(ours, values) + function_differences(ours, losses, grads) +
                trajectory_differences(ours, trajectories) +
                trajectory_differences(accumulated, peer_acc, "accumulated trajectory"))
    for p in problems:
        print("FAIL:", p)
    # Each check can fail: the peer seeded 1 draws other weights; the peer's Llama with the
    # rotary embedding's dimensions paired otherwise computes other gradients.
    if not differences(ours, peer_side(lm_peer, torch, 1, ours["ids"])[0]):
        print("FAIL: the peer seeded 1 gives gpuperf's seed-0 weights: the comparison sees nothing")
        problems.append("self-test")
    rotate_half = lm_peer.rotate_half
    lm_peer.rotate_half = interleaved
    try:
        wrong = function_differences(ours, *peer_side(lm_peer, torch, 0, ours["ids"])[1:])
    finally:
        lm_peer.rotate_half = rotate_half
    if not any(w.startswith("llama") for w in wrong):
        print("FAIL: the peer's Llama with its rotary embedding's dimensions paired otherwise "
              "gives gpuperf's loss and gradients: the comparison sees nothing")
        problems.append("self-test")
    # The trajectories must move (a comparison of flat losses sees nothing) and must tell the peer
    # that leaves norms and biases out of the decay apart.
    for kind in ("gpt", "llama"):
        path = ours["trajectory"][kind]
        if not path[-1] < path[0] - 1.0:
            print(f"FAIL: gpuperf's {kind} loss moves from {path[0]:.4f} to {path[-1]:.4f}: the "
                  "trajectory comparison sees too little")
            problems.append("self-test")
    grouped = trajectory_differences(
        ours, peer_trajectories(lm_peer, torch, 0, ours["ids"], decay_1d=False))
    if len(grouped) != 2:
        print("FAIL: the peer that does not decay 1-D parameters gives gpuperf's trajectory for "
              f"{2 - len(grouped)} of the two models: the comparison sees nothing")
        problems.append("self-test")
    # Accumulation: both sides' losses must move, and equal shares of unequal micro-batches
    # must be told apart.
    for kind in ("gpt", "llama"):
        path = accumulated["trajectory"][kind]
        if not path[-1] < path[0] - 1.0:
            print(f"FAIL: gpuperf's accumulated {kind} loss moves from {path[0]:.4f} to "
                  f"{path[-1]:.4f}: the trajectory comparison sees too little")
            problems.append("self-test")
    equal = trajectory_differences(
        accumulated, peer_accumulated(lm_peer, torch, 0, accumulated, equal_shares=True))
    if len(equal) != 2:
        print("FAIL: the peer that weights unequal micro-batches equally gives gpuperf's "
              f"accumulated trajectory for {2 - len(equal)} of the two models: the comparison "
              "sees nothing")
        problems.append("self-test")
    acc = accumulated["trajectory"]
    count = sum(len(ours[kind][name]) for kind in ("gpt", "llama") for name in ours[kind])
    if not problems:
        print(f"PASS: {count} initial values (GPT-2 and Llama-style, seed 0) equal on both sides, "
              f"losses (GPT-2 {ours['loss']['gpt']:.6f}, Llama {ours['loss']['llama']:.6f}) "
              f"within {LOSS_TOLERANCE:g} and gradients within {GRADIENT_TOLERANCE:g} of the "
              f"peer's; {TRAJECTORY['steps']} AdamW steps' losses within "
              f"{TRAJECTORY_TOLERANCE:g} nats (GPT-2 {ours['trajectory']['gpt'][0]:.3f} -> "
              f"{ours['trajectory']['gpt'][-1]:.3f}, Llama {ours['trajectory']['llama'][0]:.3f} "
              f"-> {ours['trajectory']['llama'][-1]:.3f}; largest difference "
              f"{largest_gap(ours['trajectory'], trajectories):.2g}); "
              f"{len(acc['gpt'])} steps of a batch of {len(accumulated['ids'])} in "
              f"{accumulated['accumulation_steps']} micro-batches within "
              f"{TRAJECTORY_TOLERANCE:g} nats (GPT-2 {acc['gpt'][0]:.3f} -> {acc['gpt'][-1]:.3f}, "
              f"Llama {acc['llama'][0]:.3f} -> {acc['llama'][-1]:.3f}; largest difference "
              f"{largest_gap(acc, peer_acc):.2g}); another seed, another rotary layout, a peer "
              "without decay on 1-D parameters and one weighting micro-batches equally differ "
              f"({sum(w.startswith('llama') for w in wrong)} Llama tensors)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
