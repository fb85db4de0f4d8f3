#!/usr/bin/env python3
"""Where ResNet-50's small-batch inference time goes, convolution by convolution: each of the 53
convolutions of the BatchNorm-folded model (the calls gpuperf's fused inference makes:
cudnn_convolution_relu, cudnn_convolution_add_relu, conv2d with bias for the projection
shortcut) timed alone in a CUDA graph, fused and unfused, at each batch size given; then the
whole folded model in a CUDA graph. Prints one table per batch size and the largest differences.

    python3 profile_inference.py --batch-sizes 1,2 --precision fp16
"""
import argparse
import copy
import json

import torch
import torch.nn.functional as F


def fold(conv, bn):
    """conv.weight * gamma/sqrt(var+eps), beta - mean*scale: fp64, as gpuperf's fold_batch_norm."""
    scale = bn.weight.double() / torch.sqrt(bn.running_var.double() + bn.eps)
    shift = bn.bias.double() - bn.running_mean.double() * scale
    return (conv.weight.double() * scale.view(-1, 1, 1, 1)).float(), shift.float()


def sites(model):
    """The folded model as a list of convolutions: (name, kind, weight, bias, stride, padding,
    input index, shortcut index), where indices point into the activations list."""
    out = []
    w, b = fold(model.conv1, model.bn1)
    out.append(dict(name="stem", kind="relu", w=w, b=b, stride=2, padding=3, src=0))
    act = 1  # activation 0: the image; stem output: 1; max-pool output: 2
    out.append(dict(name="maxpool", kind="pool", src=1))
    act = 2
    for li, layer in enumerate([model.layer1, model.layer2, model.layer3, model.layer4], 1):
        for bi, block in enumerate(layer):
            x = act
            n = f"layer{li}.{bi}"
            w1, b1 = fold(block.conv1, block.bn1)
            out.append(dict(name=n + ".conv1", kind="relu", w=w1, b=b1, stride=1, padding=0, src=x))
            w2, b2 = fold(block.conv2, block.bn2)
            out.append(dict(name=n + ".conv2", kind="relu", w=w2, b=b2, stride=block.conv2.stride[0],
                            padding=1, src=x + 1))
            w3, b3 = fold(block.conv3, block.bn3)
            shortcut = x
            nxt = x + 2
            if block.downsample is not None:
                wd, bd = fold(block.downsample[0], block.downsample[1])
                b3 = b3 + bd
                out.append(dict(name=n + ".downsample", kind="plain", w=wd, b=None,
                                stride=block.downsample[0].stride[0], padding=0, src=x))
                shortcut = x + 3
                nxt = x + 3
            out.append(dict(name=n + ".conv3", kind="add_relu", w=w3, b=b3, stride=1, padding=0,
                            src=x + 2, z=shortcut))
            act = nxt + 1
    return out


def run_site(s, acts, fused):
    x = acts[s["src"]]
    if s["kind"] == "pool":
        return F.max_pool2d(x, 3, 2, 1)
    st, pd = [s["stride"]] * 2, [s["padding"]] * 2
    if s["kind"] == "plain":
        return F.conv2d(x, s["w"], None, st, pd)
    if s["kind"] == "relu":
        if fused:
            return torch.cudnn_convolution_relu(x, s["w"], s["b"], st, pd, [1, 1], 1)
        return torch.relu_(F.conv2d(x, s["w"], s["b"], st, pd))
    z = acts[s["z"]]
    if fused:
        return torch.cudnn_convolution_add_relu(x, s["w"], z, 1, s["b"], st, pd, [1, 1], 1)
    return torch.relu_(F.conv2d(x, s["w"], s["b"], st, pd).add_(z))


def forward(model_sites, image, fused, head):
    acts = [image]
    for s in model_sites:
        acts.append(run_site(s, acts, fused.get(s["name"], True) if isinstance(fused, dict) else fused))
    return head(acts[-1])


def graph_time(fn, replays=200, inner=1):
    """ms per call of fn captured in a CUDA graph (warm-up on a side stream): the median of 5
    timed batches of replays."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner):
            fn()
    for _ in range(10):
        g.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        start.record()
        for _ in range(replays):
            g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / replays / inner)
    return sorted(times)[len(times) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-sizes", default="1,2")
    p.add_argument("--precision", default="fp16", choices=["fp16", "bf16"])
    p.add_argument("--no-cudnn-benchmark", action="store_true")
    p.add_argument("--json", help="write the per-convolution times here")
    a = p.parse_args()
    import torchvision

    torch.backends.cudnn.benchmark = not a.no_cudnn_benchmark
    dtype = torch.float16 if a.precision == "fp16" else torch.bfloat16
    model = torchvision.models.resnet50().eval()
    with torch.no_grad():  # non-trivial statistics, so folding is not the identity
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        model_sites = sites(model)
    cl = torch.channels_last
    for s in model_sites:
        for k in ("w", "b"):
            if s.get(k) is not None:
                t = s[k].to("cuda", dtype)
                s[k] = t.contiguous(memory_format=cl) if t.dim() == 4 else t
    fc = copy.deepcopy(model.fc).to("cuda", dtype)
    reference = model.to("cuda")  # fp32, unfolded: checks the folding and the wiring

    def head(x):
        return fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    report = {}
    with torch.inference_mode():
        for n in [int(v) for v in a.batch_sizes.split(",")]:
            image = torch.randn(n, 3, 224, 224, device="cuda", dtype=dtype).contiguous(memory_format=cl)
            acts = [image]
            for s in model_sites:
                acts.append(run_site(s, acts, True))
            want = reference(image.float())
            error = (head(acts[-1]).float() - want).abs().max().item() / want.abs().max().item()
            print(f"batch {n}: folded {a.precision} output vs fp32 model: max error {error:.2e} of max")
            if error > 0.05:
                raise SystemExit("the folded model does not compute ResNet-50")
            rows = []
            for i, s in enumerate(model_sites):
                if s["kind"] == "pool":
                    continue
                local = acts[: i + 1]
                t_f = graph_time(lambda: run_site(s, local, True), inner=10)
                t_u = graph_time(lambda: run_site(s, local, False), inner=10)
                shape = "x".join(str(d) for d in acts[s["src"]].shape)
                rows.append(dict(name=s["name"], kind=s["kind"], input=shape,
                                 wshape="x".join(str(d) for d in s["w"].shape), fused_ms=t_f, unfused_ms=t_u))
            best = {r["name"]: r["fused_ms"] <= r["unfused_ms"] for r in rows}
            whole = {
                "fused": graph_time(lambda: forward(model_sites, image, True, head)),
                "unfused": graph_time(lambda: forward(model_sites, image, False, head)),
                "best-per-conv": graph_time(lambda: forward(model_sites, image, best, head)),
            }
            report[n] = dict(rows=rows, whole=whole)
            print(f"\n## batch {n}: whole model in a CUDA graph (ms): " +
                  ", ".join(f"{k} {v:.4f}" for k, v in whole.items()))
            print(f"sum of convolutions alone: fused {sum(r['fused_ms'] for r in rows):.4f}, "
                  f"unfused {sum(r['unfused_ms'] for r in rows):.4f}, "
                  f"best {sum(min(r['fused_ms'], r['unfused_ms']) for r in rows):.4f}")
            print("| conv | kind | input | weight | fused ms | unfused ms |")
            print("|---|---|---|---|---|---|")
            for r in rows:
                print(f"| {r['name']} | {r['kind']} | {r['input']} | {r['wshape']} | "
                      f"{r['fused_ms']:.4f} | {r['unfused_ms']:.4f} |")
    sizes = list(report)
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[1]
        print(f"\n## convolutions slower at batch {lo} than at batch {hi} (fused), worst first")
        pairs = zip(report[lo]["rows"], report[hi]["rows"])
        worst = sorted(pairs, key=lambda p: p[1]["fused_ms"] - p[0]["fused_ms"])
        for r_lo, r_hi in worst[:15]:
            if r_lo["fused_ms"] > r_hi["fused_ms"]:
                print(f"{r_lo['name']:22s} {r_lo['kind']:9s} {r_lo['fused_ms']:.4f} ms at {lo} vs "
                      f"{r_hi['fused_ms']:.4f} at {hi}; unfused at {lo}: {r_lo['unfused_ms']:.4f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                       "precision": a.precision, "batches": report}, f, indent=1)


if __name__ == "__main__":
    main()
