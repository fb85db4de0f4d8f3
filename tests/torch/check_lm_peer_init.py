#!/usr/bin/env python3
"""Whether benchmarks/python/lm_peer.py draws a model's initial weights as gpuperf does: the tiny
GPT-2 and Llama-style models of lm_init_probe, built on both sides from the same seed, must hold
the same parameters, bit for bit (lm_benchmark and lm_peer.py, both seeded 0, then start from the
same weights). Also checks that the comparison can fail: another seed on the peer's side must
differ. Exit 0 when equal, 1 otherwise, 77 (SKIPPED) without a Python that imports torch.

    check_lm_peer_init.py <lm_init_probe> <lm_peer.py>
"""

import importlib.util
import json
import subprocess
import sys


def peer_values(lm_peer, torch, seed):
    torch.manual_seed(seed)
    gpt = lm_peer.Gpt(vocabulary=64, layers=2, heads=2, width=16, context=16)
    torch.manual_seed(seed)
    llama = lm_peer.Llama(vocabulary=64, layers=2, heads=4, kv_heads=2, width=16, hidden=48,
                          context=16)
    return {kind: {name: [float(v) for v in p.detach().float().flatten().tolist()]
                   for name, p in model.named_parameters()}
            for kind, model in (("gpt", gpt), ("llama", llama))}


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
    problems = differences(ours, peer_values(lm_peer, torch, 0))
    for p in problems:
        print("FAIL:", p)
    # The check can fail: the peer seeded 1 draws other weights.
    if not differences(ours, peer_values(lm_peer, torch, 1)):
        print("FAIL: the peer seeded 1 gives gpuperf's seed-0 weights: the comparison sees nothing")
        problems.append("self-test")
    count = sum(len(v) for kind in ours.values() for v in kind.values())
    if not problems:
        print(f"PASS: {count} initial values (GPT-2 and Llama-style, seed 0) equal on both sides, "
              "and another seed differs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
