#!/usr/bin/env python3
"""The GPU decode thread's time per nvJPEG call, fitted as a + b x images (least squares), from the
run records of training on files that nvJPEG decoded (`--data DIR --decode gpu`):

    python3 gpu_decode_fit.py docs/results/2026-12-06-h200-llama-jpeg-auto/call*/*.json

A call decodes the GPU's part of `loader_gpu_batches_per_call` loader batches (the loader threads
decode the rest: `--host-decode-share`). Fit records of one decoder set-up (the same batches a call
and tree): the fixed part moves with them. Per record: calls = images decoded / (batch size x
batches per call); the time a call is the decode thread's time in nvJPEG's calls
(`loader_gpu_thread_decode_seconds`) over the calls; its images are the ones nvJPEG decoded
(hardware and GPU backends). The fixed part `a` is what a call costs whatever it decodes. Records
of one decode thread only (with several, their times overlap); others, records without GPU
decoding and files that are not run records are listed as left out. Exit 2 when fewer than two
records, or records all of one size (within an image), remain.
"""
import json
import math
import statistics
import sys


def point(record):
    """(images a call, milliseconds a call) of one record, or the reason it is left out."""
    m = record.get("metrics", {})
    if not m.get("loader_decodes_on_gpu") or "loader_gpu_thread_decode_seconds" not in m:
        return "no GPU decoding"
    if m.get("loader_gpu_decode_threads", 1) != 1:
        return f"{m['loader_gpu_decode_threads']:g} decode threads"
    per_call = record["config"]["batch_size"] * m.get("loader_gpu_batches_per_call", 1)
    calls = m["loader_images_decoded"] / per_call
    if calls <= 0:
        return "no calls"
    gpu = m.get("loader_gpu_hardware_decoded", 0) + m.get("loader_gpu_backend_decoded", 0)
    return gpu / calls, 1000 * m["loader_gpu_thread_decode_seconds"] / calls


def main(paths):
    if not paths:
        print("usage: gpu_decode_fit.py RECORD.json... (the run records of training on files "
              "nvJPEG decoded)", file=sys.stderr)
        return 2
    xs, ys = [], []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                p = point(json.load(f))
        except OSError as e:
            p = f"cannot be read: {e.strerror}"
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            p = f"not a run record: {type(e).__name__}"
        if isinstance(p, str):
            print(f"left out: {path} ({p})")
            continue
        xs.append(p[0])
        ys.append(p[1])
    n = len(xs)
    if n < 2 or max(xs) - min(xs) < 1:  # sizes a fraction of an image apart are one size
        print(f"gpu_decode_fit: {n} usable records, not of two sizes: nothing to fit",
              file=sys.stderr)
        return 2
    b, a = statistics.linear_regression(xs, ys)
    rms = math.sqrt(statistics.fmean((y - a - b * x) ** 2 for x, y in zip(xs, ys)))
    print(f"{n} records, {min(xs):.0f}-{max(xs):.0f} images a call: {a:.1f} ms a call + "
          f"{1000 * b:.1f} us an image (RMS residual {rms:.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
