#!/usr/bin/env python3
"""The Python peer of gpuperf's inference_benchmark: the same model, precision and per-call
timing in PyTorch, eager or replaying a CUDA graph, for side-by-side runs.

Method, as gpuperf's: the model is moved to the device, converted to the precision's dtype
(model.half() / model.bfloat16(), as deployed inference does), channels_last if asked, eval(),
and every call runs under torch.inference_mode(). Per batch size: one call (capture, in graph
mode, after a few eager calls on a side stream as PyTorch's CUDA-graph recipe does), `--warmup`
untimed calls, then `--iterations` timed calls, each bracketed by two CUDA events with no host
sync in between; the events are read after the last call. In graph mode each call copies its
input into the graph's static input, then replays. Percentiles interpolate linearly between
closest ranks (numpy's default). cuDNN autotunes its algorithms (torch.backends.cudnn.benchmark)
for batch sizes from --cudnn-benchmark-from (default 128) up; smaller ones take its heuristics,
as gpuperf's inference does by default.

Modes: eager, graph (CUDA graph of the eager model), frozen-graph (PyTorch's own inference
optimisation, torch.jit.freeze + torch.jit.optimize_for_inference of a traced model, which folds
BatchNorm into the convolutions and, on CUDA with cuDNN, fuses conv + add + ReLU; then captured in
a CUDA graph): PyTorch's best without compiling kernels. With torch.compile (PyTorch >= 2.0):
compile (mode "default", Inductor's kernels, run eagerly), compile-graph (the compiled model
captured in a CUDA graph as in graph mode: PyTorch's fastest batch-1 recipe),
compile-freeze-graph (compile-graph with Inductor's freezing, torch._inductor.config.freezing:
the weights become constants, BatchNorm is folded into the convolutions and what depends on
weights alone is computed once) and compile-max-autotune (mode "max-autotune" with freezing:
autotuned kernels and Inductor's own CUDA graphs). The
compile time (the first call of each batch size, which compiles for that shape) is printed as
"compile_s" beside the latencies; it is not in them.

    python3 infer_peer.py --model resnet50 --precision fp16 --memory-format channels_last \
        --batch-sizes 1,64,256 --mode graph

Prints one JSON line per batch size: {"mode": ..., "batch_size": ..., "p50_s": ...,
"peak_memory_bytes": ..., ...}, the peak being torch.cuda.max_memory_allocated() from just before
the batch size's first call to its last timed one. With
--record PATH it also writes the sweep as a gpuperf.inference/3 result
(libgpuperf/python/gpuperf_results.py) for gpuperf_compare, gpuperf_report and gpuperf_advise.
"""
import argparse
import json
import math
import sys
import time

import torch

from train_peer import build, import_gpuperf_results

# The modes whose model this script captures in a CUDA graph (max-autotune's are Inductor's
# own), and those compiled with Inductor's freezing.
CAPTURED = ("graph", "frozen-graph", "compile-graph", "compile-freeze-graph")
FREEZING = ("compile-freeze-graph", "compile-max-autotune")
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
          "bf16": torch.bfloat16}


def percentile(sorted_values, q):
    """numpy's default 'linear' method."""
    position = q / 100 * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def frozen(model, x):
    """PyTorch's TorchScript inference optimisation of `model`, traced on `x`."""
    with torch.no_grad():
        traced = torch.jit.trace(model, x.clone())
        return torch.jit.optimize_for_inference(torch.jit.freeze(traced))


def make_call(model, x, mode, graph_warmup):
    """Returns a function running one inference call on `x` (copied into a graph's input)."""
    if mode == "eager":
        return lambda: model(x)
    static_input = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(graph_warmup):
            model(static_input)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = model(static_input)

    def call():
        static_input.copy_(x, non_blocking=True)
        graph.replay()
        return static_output

    return call


def result_writer(a, sample_shape):
    """A gpuperf.inference/3 writer for this sweep's settings. Untimed calls per batch size: the
    first call, --warmup more and, in the graph modes, --graph-warmup eager calls before the
    capture. frozen-graph records what PyTorch fused as its kernel fusion."""
    gpuperf_results = import_gpuperf_results()
    # max-autotune's CUDA graphs are Inductor's own; the record says graph for every mode that
    # replays one.
    graph = a.mode not in ("eager", "compile")
    fusion = {"frozen-graph": "torch.jit.freeze+optimize_for_inference",
              "compile": "torch.compile default (Inductor)",
              "compile-graph": "torch.compile default (Inductor)",
              "compile-freeze-graph": "torch.compile default (Inductor, freezing)",
              "compile-max-autotune": "torch.compile max-autotune (Inductor, freezing)"}
    return gpuperf_results.InferenceResultWriter(
        model=a.model, precision=a.precision, memory_format=a.memory_format,
        graph_mode="cuda-graph" if graph else "eager",
        kernel_fusion=fusion.get(a.mode, "none"),
        warmup=1 + a.warmup + (a.graph_warmup if graph else 0), iterations=a.iterations,
        input_shape=sample_shape, cudnn_benchmark=True,
        cudnn_benchmark_from_batch=a.cudnn_benchmark_from, seed=a.seed, device="cuda",
        timer="cuda-event", torch_module=torch)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet50")
    p.add_argument("--precision", default="fp16", choices=list(DTYPES))
    p.add_argument("--memory-format", default="channels_last",
                   choices=["contiguous", "channels_last"])
    p.add_argument("--mode", default="graph",
                   choices=["eager", "graph", "frozen-graph", "compile", "compile-graph",
                            "compile-freeze-graph", "compile-max-autotune"])
    p.add_argument("--batch-sizes", default="1,8,64,256")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--graph-warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cudnn-benchmark-from", type=int, default=128, metavar="N",
                   help="the smallest batch size cuDNN autotunes (torch.backends.cudnn.benchmark "
                        "set before the batch size's first call); smaller ones take cuDNN's "
                        "heuristics, as gpuperf's --cudnn-benchmark-from (default 128)")
    p.add_argument("--record", metavar="PATH",
                   help="also write the sweep as a gpuperf.inference/3 result "
                        "(for gpuperf_compare)")
    a = p.parse_args()
    if a.cudnn_benchmark_from < 1:
        p.error(f"--cudnn-benchmark-from: must be >= 1, got {a.cudnn_benchmark_from}")

    torch.manual_seed(a.seed)
    torch.backends.cudnn.benchmark = True
    tf32 = a.precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    model, sample_shape, _ = build(a.model)
    memory_format = (torch.channels_last if a.memory_format == "channels_last"
                     else torch.contiguous_format)
    model = model.cuda().to(DTYPES[a.precision]).to(memory_format=memory_format).eval()
    if a.mode.startswith("compile"):
        if not hasattr(torch, "compile"):
            print(f"error: --mode {a.mode}: torch.compile needs PyTorch >= 2.0, this is "
                  f"{torch.__version__}", file=sys.stderr)
            return 2
        if a.mode in FREEZING:
            # Read when the model compiles (its first call), in inference mode as here.
            from torch._inductor import config as inductor_config
            inductor_config.freezing = True
        model = torch.compile(model, mode="max-autotune" if a.mode == "compile-max-autotune"
                              else None)
    writer = result_writer(a, sample_shape) if a.record else None

    for batch in (int(b) for b in a.batch_sizes.split(",")):
        x = torch.randn((batch, *sample_shape)).to("cuda", DTYPES[a.precision])
        x = x.contiguous(memory_format=memory_format)
        # cuDNN chooses a shape's algorithms at its first call (compile and capture warm-ups
        # included) and keeps them.
        torch.backends.cudnn.benchmark = batch >= a.cudnn_benchmark_from
        runnable = frozen(model, x) if a.mode == "frozen-graph" else model
        # The peak covers the first call (compile, capture and its warm-up calls) to the last
        # timed one, over what is already held (the model, the input), as gpuperf's.
        torch.cuda.reset_peak_memory_stats()
        with torch.inference_mode():
            # The first eager call of a compiled model compiles it for this shape: timed apart.
            started = time.perf_counter()
            if a.mode.startswith("compile"):
                runnable(x)
                torch.cuda.synchronize()
            compile_s = time.perf_counter() - started if a.mode.startswith("compile") else 0.0
            graph_mode = "graph" if a.mode in CAPTURED else "eager"
            call = make_call(runnable, x, graph_mode, a.graph_warmup)
            for _ in range(1 + a.warmup):
                call()
            events = [torch.cuda.Event(enable_timing=True) for _ in range(2 * a.iterations)]
            for i in range(a.iterations):
                events[2 * i].record()
                call()
                events[2 * i + 1].record()
            torch.cuda.synchronize()
        peak_memory_bytes = torch.cuda.max_memory_allocated()
        in_order = [events[2 * i].elapsed_time(events[2 * i + 1]) / 1e3
                    for i in range(a.iterations)]
        if writer is not None:
            writer.add_batch(batch, in_order, peak_memory_bytes=peak_memory_bytes)
        seconds = sorted(in_order)
        p50 = percentile(seconds, 50)
        print(json.dumps({
            "model": a.model, "precision": a.precision, "memory_format": a.memory_format,
            "mode": a.mode, "batch_size": batch, "iterations": a.iterations,
            "p50_s": p50, "p90_s": percentile(seconds, 90), "p95_s": percentile(seconds, 95),
            "p99_s": percentile(seconds, 99), "max_s": seconds[-1],
            "throughput_median": batch / p50,
            "throughput_overall": batch * a.iterations / sum(seconds), "compile_s": compile_s,
            "peak_memory_bytes": peak_memory_bytes,
            "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}), flush=True)
        del call
        torch.cuda.empty_cache()
    if writer is not None:
        writer.write(a.record)


if __name__ == "__main__":
    sys.exit(main())
