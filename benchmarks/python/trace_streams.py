#!/usr/bin/env python3
"""Where the GPU time of a kernel trace goes, stream by stream, and where each host thread waits.

Reads a Chrome trace as gpuperf's --kernel-trace and torch.profiler's export_chrome_trace write it
(optionally gzipped) and prints:
  - per CUDA stream: kernels, copies and memsets, their count and busy microseconds;
  - the streams other than the busiest one (the training stream, as a rule), per operation name;
  - per host thread, the CUDA runtime calls that took longest in all (count, microseconds).

Usage: trace_streams.py TRACE [--top N]
"""
import argparse
import collections
import gzip
import json
import sys

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
HOST_CATEGORIES = ("cuda_runtime", "cuda_driver")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--top", type=int, default=15, help="rows per table (default 15)")
    args = parser.parse_args()
    if args.top < 1:
        parser.error(f"--top must be >= 1, got {args.top}")
    try:
        events = load(args.trace)
    except (OSError, ValueError, KeyError) as error:
        print(f"trace_streams.py: cannot read {args.trace}: {error}", file=sys.stderr)
        return 2

    device = [e for e in events if e.get("cat") in DEVICE_CATEGORIES]
    if not device:
        print(f"trace_streams.py: {args.trace} holds no GPU kernels or copies", file=sys.stderr)
        return 2
    busy = collections.defaultdict(float)
    count = collections.Counter()
    per_name = collections.defaultdict(lambda: [0, 0.0])
    for e in device:
        stream = e.get("args", {}).get("stream")
        busy[stream] += e.get("dur", 0)
        count[stream] += 1
        key = (stream, e.get("name", "?")[:90])
        per_name[key][0] += 1
        per_name[key][1] += e.get("dur", 0)
    start = min(e["ts"] for e in device)
    end = max(e["ts"] + e.get("dur", 0) for e in device)
    print(f"GPU events over {end - start:.0f} us")
    print("stream  events  busy us")
    for stream in sorted(busy, key=lambda s: -busy[s]):
        print(f"{stream!s:>6}  {count[stream]:>6}  {busy[stream]:>9.0f}")

    main_stream = max(busy, key=busy.get)
    others = collections.defaultdict(lambda: [0, 0.0, 0])
    for (stream, name), (n, dur) in per_name.items():
        if stream == main_stream:
            continue
        row = others[name]
        row[0] += n
        row[1] += dur
        row[2] += 1
    print(f"\nbeside the busiest stream ({main_stream}): operation, streams, count, busy us")
    for name, (n, dur, streams) in sorted(others.items(), key=lambda x: -x[1][1])[: args.top]:
        print(f"  {name}  streams {streams}  count {n}  {dur:.0f} us")

    host = collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        if e.get("cat") in HOST_CATEGORIES:
            row = host[(e.get("tid"), e.get("name", "?"))]
            row[0] += 1
            row[1] += e.get("dur", 0)
    print("\nCUDA runtime calls by host thread: thread, call, count, us")
    for (tid, name), (n, dur) in sorted(host.items(), key=lambda x: -x[1][1])[: args.top]:
        print(f"  {tid}  {name}  {n}  {dur:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
