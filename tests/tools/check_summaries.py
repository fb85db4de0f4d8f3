#!/usr/bin/env python3
"""The side-by-side summaries, run on committed H200 results (docs/results/2026-11-29-*):

  - summarize_inference.py flags a batch size whose p50 is above a larger batch size's (the
    committed PyTorch eager run has batch 1 at 6.304 ms above batch 64 at 5.017 ms), and stays
    quiet for a side whose latency grows with the batch size;
  - summarize_side_by_side.py sets each model and precision's best gpuperf row against the best
    PyTorch variant of the same call (bf16 seed: PyTorch's fused Adam in a CUDA graph, not eager);
  - the README's headline table is, row for row, the headline.md of the results folder it names;
  - headline.py (docs/results/2026-12-01-h200-kernel-trace): its medians and ratios equal the ones
    computed here from the raw runs, the best variant is the fastest one, the two folders of two
    device calls merge, a batch size slower than a larger one is flagged, and each inference
    batch size's peak memory is the largest over the repeats, beside the best variant's;
  - headline.py says which figures have fewer repeats than the table (the committed run of
    docs/results/2026-12-01-h200-own-kernels/call5 was cut short in its third repeat), and says
    nothing of the kind for complete runs;
  - headline.py's proof of training (issue #30): the committed ResNet-50 compile peers, which
    ended with a NaN loss, are INVALID and never the best, and the table exits 1; in a copy of a
    valid table (which exits 0), a planted NaN-loss run is listed and left out of its variant's
    median, a variant whose every loss did not fall is INVALID (exit 1), and so is a gpuperf
    run whose loss rose;
  - train_peer.py --rewrite's model computes the stock seed model's function from the same
    weights (SKIPPED where torch does not import);
  - compare_headlines.py flags a moved gpuperf figure and leaves host-bound peers unjudged;
  - profile_step.py --trace reports how long kernels overlapped in a trace taken with dependent
    launches (docs/results/2026-12-02-h200-folded-totals/call2), the sum of their durations less
    the time the GPU was busy, and reports no overlap in the trace without them;
  - lm_equivalence.py --table-from renders the committed Llama 1B run that was cut short
    (docs/results/2026-12-05-h100-llama-equivalence/callE): gpuperf within PyTorch's spread
    (0.0728 against 0.1163), NOT RUN for the float32 runs and the gradients; a copy with
    gpuperf's loss moved by 0.2 at one step fails (exit 1); the run split over two files (as two
    device calls' --runs leave it) merges into the same table; files of other settings, or with
    the same run twice, are refused (exit 2); Llama 1B's committed float32 runs
    (docs/results/2026-12-06-h100-llama-chain-512/call2) fail the fixed 1e-3, and with a planted
    PyTorch float32 run S merged in are judged against S's distance from R (pass at 0.03, fail at
    0), and with the S measured on the H100 (docs/results/2026-12-06-h100-llama-max-autotune/call1)
    pass (0.01959 against 0.02290 + 1e-3);
  - summarize_lm.py's power table on the committed H200 Llama side by side with planted
    gpu_info --watch samples: each side's median power and SM clock of GPU 0 over its busy samples
    only, and the committed lm.md's lines unchanged beside it;
  - trace_streams.py names the busiest stream, sums what ran beside it over its streams, and sums
    each host thread's CUDA calls, on a planted trace whose figures are known; it refuses a trace
    without GPU events (exit 2);
  - gpu_decode_fit.py recovers a planted fixed cost and cost per image from records whose decode
    times are exactly linear in the images nvJPEG decoded (batches of two loader batches a call
    among them), leaves out records of two decode threads, without GPU decoding, not JSON or
    missing, and refuses records all of one size (exit 2);
  - summarize_share_ab.py's medians on the committed H100 A/B of the adaptive host share
    (docs/results/2026-12-07-h100-host-share-control/call1) equal the ones computed here from the
    runs whose loss fell, its three runs whose loss rose are INVALID, a planted run whose loss
    rose is left out of its median, and a folder without records exits 2.

  check_summaries.py <repository root>"""
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(root, script, folder):
    done = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "python", script),
                           os.path.join(root, "docs", "results", folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL: {script} exit {done.returncode}\n{done.stderr}")
        sys.exit(1)
    return done.stdout


def headline(root, out, folders, expect=0):
    """headline.py's (Markdown, headline.json) on `folders`, or an error unless it exits
    `expect` (1: a table with a side whose every run is INVALID)."""
    done = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "python", "headline.py"),
                           "--out", out] + folders, capture_output=True, text=True)
    if done.returncode != expect:
        return None, f"headline.py exit {done.returncode}, expected {expect}: {done.stderr}"
    return (done.stdout, json.load(open(os.path.join(out, "headline.json")))), None


def finite(value):
    return isinstance(value, (int, float)) and math.isfinite(value)


def check_headline(root):
    failures = []
    base = os.path.join(root, "docs", "results", "2026-12-01-h200-kernel-trace")
    folders = [os.path.join(base, "call3", "headline"), os.path.join(base, "call4", "headline")]
    with tempfile.TemporaryDirectory() as tmp:
        # call3's compile peers (fused SGD, PyTorch 2.11) ended every run with a NaN loss: those
        # variants are INVALID, and so the table exits 1.
        result, error = headline(root, tmp, folders, expect=1)
        if error:
            return [error]
        text, table = result
        rows = {(r["section"], r["batch_size"]): r for r in table["rows"]}
        # The reference: medians over repeats straight from the raw files, of the runs whose
        # loss is finite.
        ours = statistics.median(json.load(open(p))["throughput"]["median"] for p in
                                 glob.glob(os.path.join(folders[0], "train-resnet50-gpuperf-*.json")))
        peers = {}
        for line in open(os.path.join(folders[0], "peer.jsonl")):
            r = json.loads(line)
            if finite(r["final_loss"]):
                peers.setdefault(r["variant"], []).append(r["median"])
        best = max(peers, key=lambda v: statistics.median(peers[v]))
        row = rows.get(("train-resnet50", None))
        if row is None:
            failures.append("no ResNet-50 training row in the merged headline")
        else:
            if row["invalid"] != ["compile", "compile-reduce-overhead"] or best != "eager":
                failures.append(f"the NaN-loss compile peers are not INVALID: {row['invalid']}, "
                                f"the finite runs' best {best}")
            if "| INVALID | INVALID |" not in text or len(row["invalid_runs"]) != 6:
                failures.append("the NaN-loss runs are not shown INVALID:\n" + text)
            if row["best_pytorch"] != best:
                failures.append(f"best ResNet-50 variant {row['best_pytorch']}, expected {best}")
            want = ours / statistics.median(peers[best])
            if abs(row["gpuperf_vs_best"] - want) > 1e-12:
                failures.append(f"ResNet-50 ratio {row['gpuperf_vs_best']}, expected {want}")
        # Latency rows: the ratio is the best (lowest) PyTorch p50 over gpuperf's.
        p50 = statistics.median(
            b["latency"]["p50_s"] for p in glob.glob(os.path.join(folders[1], "infer-*-gpuperf-*.json"))
            for b in json.load(open(p))["batches"] if b["batch_size"] == 1)
        peer_p50 = {}
        for line in open(os.path.join(folders[1], "peer.jsonl")):
            r = json.loads(line)
            if r["section"] == "infer-resnet50" and r["batch_size"] == 1:
                peer_p50.setdefault(r["variant"], []).append(r["p50_s"])
        fastest = min(peer_p50, key=lambda v: statistics.median(peer_p50[v]))
        row = rows.get(("infer-resnet50", 1))
        if row is None or row["best_pytorch"] != fastest or abs(
                row["gpuperf_vs_best"] - statistics.median(peer_p50[fastest]) / p50) > 1e-12:
            failures.append(f"batch-1 latency row wrong: {row and (row['best_pytorch'], row['gpuperf_vs_best'])}")
        if "FLAG" in text:
            failures.append("the committed headline flags a latency inversion it does not have")
        if "Fewer repeats" in text or table["meta"]["short"]:
            failures.append("a complete headline reports figures with fewer repeats")
        # A batch 1 made slower than batch 8 in every repeat must be flagged.
        # The same copy gains peak memory per batch size: gpuperf batch GiB plus the repeat's
        # index in MiB, each peer half a GiB per sample; a row shows the largest over repeats.
        slow = os.path.join(tmp, "slow")
        shutil.copytree(folders[1], slow)
        gpuperf_files = sorted(glob.glob(os.path.join(slow, "infer-*-gpuperf-*.json")))
        for i, p in enumerate(gpuperf_files):
            record = json.load(open(p))
            eight = [b for b in record["batches"] if b["batch_size"] == 8][0]["latency"]["p50_s"]
            for b in record["batches"]:
                if b["batch_size"] == 1:
                    b["latency"]["p50_s"] = 2 * eight
                b["peak_memory_bytes"] = (b["batch_size"] << 30) + (i << 20)
            json.dump(record, open(p, "w"))
        lines = [json.loads(line) for line in open(os.path.join(slow, "peer.jsonl"))]
        with open(os.path.join(slow, "peer.jsonl"), "w") as f:
            for r in lines:
                if r["section"] == "infer-resnet50":
                    r["peak_memory_bytes"] = r["batch_size"] << 29
                f.write(json.dumps(r) + "\n")
        result, error = headline(root, os.path.join(tmp, "out"), [slow])
        if error:
            return failures + [error]
        if "FLAG infer-resnet50 gpuperf: batch 1 p50" not in result[0]:
            failures.append("a batch 1 slower than batch 8 is not flagged:\n" + result[0])
        row = {(r["section"], r["batch_size"]): r for r in result[1]["rows"]}[("infer-resnet50", 8)]
        want = {"gpuperf": (8 << 30) + ((len(gpuperf_files) - 1) << 20),
                row["best_pytorch"]: 8 << 29}
        if row["peak_memory_bytes"] != want:
            failures.append(f"batch-8 peak memory {row['peak_memory_bytes']}, expected {want}")
        line = (f"- Peak memory, infer-resnet50 batch 8: gpuperf 8.00 GiB, {row['best_pytorch']} "
                f"4.00 GiB (2.00x).")
        if line not in result[0]:
            failures.append(f"no line '{line}' in:\n" + result[0])
    return failures


def check_readme_headline(root):
    """Every table row of the headline.md the README names is in the README, unchanged."""
    readme = open(os.path.join(root, "README.md")).read()
    marker = "its `headline.md` (["
    if marker not in readme:
        return ["the README does not name the results folder of its headline"]
    folder = readme.split(marker, 1)[1].split("]", 1)[0]
    path = os.path.join(root, folder, "headline.md")
    if not os.path.exists(path):
        return [f"the README's headline names {folder}, which has no headline.md"]
    rows = [line for line in open(path).read().splitlines() if line.startswith("| ")]
    missing = [line for line in rows if line not in readme.splitlines()]
    if not rows or missing:
        return [f"README headline differs from {folder}headline.md in: {missing[:2]}"]
    return []


def check_section_filter(root):
    """FOLDER:SECTION takes that section alone, with the same figures as the whole folder's."""
    folder = os.path.join(root, "docs", "results", "2026-12-01-h200-own-kernels", "call4",
                          "headline")
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        whole, error = headline(root, a, [folder])
        if error:
            return [error]
        part, error = headline(root, b, [folder + ":train-seed"])
        if error:
            return [error]
    sections = {r["section"] for r in part[1]["rows"]}
    if sections != {"train-seed"}:
        return [f"{folder}:train-seed gave sections {sorted(sections)}"]
    seed = [r for r in whole[1]["rows"] if r["section"] == "train-seed"]
    if seed != part[1]["rows"]:
        return ["the train-seed row differs between the whole folder and the filtered one"]
    return []


def check_short_repeats(root):
    """The committed call-5 run stopped after gpuperf and eager in its third repeat: the compile
    peers have 2 of 3 repeats, and the table must say so."""
    folder = os.path.join(root, "docs", "results", "2026-12-01-h200-own-kernels", "call5",
                          "headline")
    with tempfile.TemporaryDirectory() as tmp:
        # Its compile peers ended with NaN losses too (exit 1); INVALID runs still count as run.
        result, error = headline(root, tmp, [folder], expect=1)
        if error:
            return [error]
        text, table = result
    want = ["train-resnet50 compile: 2 of 3", "train-resnet50 compile-reduce-overhead: 2 of 3"]
    if table["meta"]["short"] != want or "Fewer repeats than the table's" not in text:
        return [f"short repeats reported as {table['meta']['short']}, expected {want}"]
    return []


def check_loss_validity(root):
    """A copy of a valid committed table (train-seed, no first losses recorded then) exits 0 with
    nothing INVALID; planted runs that did not train are listed and left out."""
    failures = []
    folder = os.path.join(root, "docs", "results", "2026-12-01-h200-own-kernels", "call4",
                          "headline")
    with tempfile.TemporaryDirectory() as tmp:
        result, error = headline(root, os.path.join(tmp, "valid"), [folder])
        if error:
            return [f"a valid table: {error}"]
        if "INVALID" in result[0] or any(r["invalid_runs"] for r in result[1]["rows"]):
            failures.append("a valid table lists INVALID runs:\n" + result[0])
        seed = {r["section"]: r for r in result[1]["rows"]}["train-seed"]
        best = seed["best_pytorch"]

        # Planted: eager's repeat 1 a hundred times faster with a NaN loss (listed, left out of
        # eager's median, not the best); every compile run's loss flat at its first (compile
        # INVALID, exit 1); gpuperf's repeat 2 with a loss that rose (listed, left out).
        planted = os.path.join(tmp, "planted")
        shutil.copytree(folder, planted)
        lines = [json.loads(line) for line in open(os.path.join(planted, "peer.jsonl"))]
        eager = []
        with open(os.path.join(planted, "peer.jsonl"), "w") as f:
            for r in lines:
                if r["section"] == "train-seed" and r["variant"] == "eager":
                    if r["repeat"] == 1:
                        r["median"] *= 100
                        r["first_loss"], r["final_loss"] = 2.3, float("nan")
                    else:
                        eager.append(r["median"])
                if r["section"] == "train-seed" and r["variant"] == "compile":
                    r["first_loss"] = r["final_loss"]
                f.write(json.dumps(r) + "\n")
        path = os.path.join(planted, "train-seed-gpuperf-2.json")
        record = json.load(open(path))
        record["first_loss"] = record["final_loss"] / 2
        json.dump(record, open(path, "w"))
        result, error = headline(root, os.path.join(tmp, "out"), [planted], expect=1)
        if error:
            return failures + [f"a table with an all-INVALID variant: {error}"]
        text, table = result
        seed = {r["section"]: r for r in table["rows"]}["train-seed"]
        listed = sorted((r["side"], r["repeat"]) for r in seed["invalid_runs"])
        want = [("compile", 1), ("compile", 2), ("compile", 3), ("eager", 1), ("gpuperf", 2)]
        if listed != want:
            failures.append(f"INVALID runs {listed}, expected {want}")
        if "  - INVALID train-seed eager, repeat 1: first loss 2.3, final loss nan: the final " \
                "loss is not finite." not in text:
            failures.append("the NaN-loss run's line is missing:\n" + text)
        if seed["best_pytorch"] != best or seed["pytorch"]["eager"]["values"] != eager:
            failures.append(f"the NaN-loss run counted: best {seed['best_pytorch']} (expected "
                            f"{best}), eager {seed['pytorch']['eager']['values']}")
        if seed["invalid"] != ["compile"] or "compile" in seed["pytorch"] or \
                "did not fall" not in text:
            failures.append(f"a variant whose loss never fell is not INVALID: {seed['invalid']}")
        cells = [line for line in text.splitlines() if line.startswith("| Seed")]
        if not cells or cells[0].count("| INVALID |") != 1:
            failures.append(f"compile's cell is not INVALID: {cells}")
        if len(seed["gpuperf"]["values"]) != 2:
            failures.append(f"gpuperf's run with a rising loss counted: {seed['gpuperf']}")
    return failures


def check_rewrite_equivalence(root):
    """train_peer.py --rewrite's model (channels_last, fc on the (H, W, C) flatten with its
    weight permuted) gives the stock seed model's outputs from the same weights."""
    try:
        import torch
    except ImportError:
        print("SKIPPED: the rewrite equivalence check (torch does not import)")
        return []
    sys.path.insert(0, os.path.join(root, "benchmarks", "python"))
    sys.dont_write_bytecode = True
    import train_peer
    torch.manual_seed(0)
    stock = train_peer.SimpleModel().eval()
    rewritten = train_peer.rewrite_simple(stock).to(memory_format=torch.channels_last).eval()
    x = torch.randn(4, 3, 32, 32)
    with torch.no_grad():
        want = stock(x)
        got = rewritten(x.contiguous(memory_format=torch.channels_last))
    if not torch.allclose(got, want, rtol=1e-4, atol=1e-5):
        return [f"the rewritten seed model differs from the stock one by "
                f"{(got - want).abs().max().item()}"]
    if rewritten.fc.weight.equal(stock.fc.weight) or not stock.conv2.weight.equal(
            rewritten.conv2.weight):
        return ["rewrite_simple() did not permute fc's weight alone"]
    print("ok: the rewritten seed model computes the stock one's outputs")
    return []


def check_compare_headlines(root):
    """compare_headlines.py: a headline against itself reproduces; a gpuperf median moved by 5%
    is flagged (exit 1); a host-bound peer moved by 20% is listed but not judged."""
    failures = []
    script = os.path.join(root, "benchmarks", "python", "compare_headlines.py")
    path = os.path.join(root, "docs", "results", "2026-12-01-h200-kernel-trace", "headline.json")
    same = subprocess.run([sys.executable, script, path, path], capture_output=True, text=True)
    if same.returncode != 0 or "0 change(s) above 3%" not in same.stdout:
        failures.append(f"a headline against itself: exit {same.returncode}\n{same.stdout}")
    with tempfile.TemporaryDirectory() as tmp:
        table = json.load(open(path))
        for row in table["rows"]:
            if row["section"] == "train-resnet50":
                row["gpuperf"]["median"] *= 1.05
            if row["section"] == "train-seed":
                row["pytorch"]["eager"]["median"] *= 1.2
        moved = os.path.join(tmp, "headline.json")
        json.dump(table, open(moved, "w"))
        done = subprocess.run([sys.executable, script, path, moved], capture_output=True, text=True)
        resnet = [l for l in done.stdout.splitlines() if l.startswith("| ResNet-50 training") and
                  "| gpuperf |" in l]
        seed_eager = [l for l in done.stdout.splitlines() if l.startswith("| Seed") and
                      "| eager |" in l]
        if done.returncode != 1 or not resnet or "+5.0% | FLAG" not in resnet[0]:
            failures.append(f"a 5% gpuperf change is not flagged: exit {done.returncode}\n" +
                            done.stdout)
        if not seed_eager or "host-bound, not judged" not in seed_eager[0]:
            failures.append("a host-bound peer's change is judged:\n" + done.stdout)
    return failures


def check_kernel_overlap(root):
    import gzip
    failures = []
    folder = os.path.join(root, "docs", "results", "2026-12-02-h200-folded-totals", "call2")
    for variant, dependent in (("new", True), ("previous", False)):
        path = os.path.join(folder, f"trace-resnet50-{variant}.json.gz")
        done = subprocess.run([sys.executable,
                               os.path.join(root, "benchmarks", "python", "profile_step.py"),
                               "--trace", path, "--steps", "5", "--batch-size", "256"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            failures.append(f"profile_step.py --trace {path}: exit {done.returncode}\n"
                            + done.stderr)
            continue
        lines = [l for l in done.stdout.splitlines() if "kernels overlapped for" in l]
        if not dependent:
            if lines:
                failures.append(f"an overlap reported where kernels ran one after another: {lines}")
            continue
        # The reference: the durations' sum less the union of the intervals, per step.
        events = json.load(gzip.open(path, "rt"))["traceEvents"]
        spans = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events
                       if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy",
                                                                 "gpu_memset"))
        busy, end = 0.0, spans[0][0]
        for start, stop in spans:
            start = max(start, end)
            if stop > start:
                busy += stop - start
            end = max(end, stop)
        expected = (sum(b - a for a, b in spans) - busy) / 5 / 1e3
        if not lines:
            failures.append("no overlap reported for the trace with dependent launches:\n"
                            + done.stdout[-600:])
            continue
        reported = float(lines[0].split("kernels overlapped for", 1)[1].split("ms")[0])
        if expected < 0.5 or abs(reported - expected) > 0.001:
            failures.append(f"overlap {reported} ms per step reported, {expected:.4f} expected")
    return failures


def check_trace_streams(root):
    # Stream 7 busy 300 us with two kernels; streams 21 and 22 each run one copy (10, 20 us) and
    # one conversion kernel (3 us); thread 5 waits 40 + 60 us in cudaEventSynchronize.
    events = [
        {"cat": "kernel", "name": "gemm", "ts": 0, "dur": 200, "args": {"stream": 7}},
        {"cat": "kernel", "name": "gemm", "ts": 200, "dur": 100, "args": {"stream": 7}},
        {"cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 10, "dur": 10, "args": {"stream": 21}},
        {"cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 30, "dur": 20, "args": {"stream": 22}},
        {"cat": "kernel", "name": "rgba2rgb", "ts": 60, "dur": 3, "args": {"stream": 21}},
        {"cat": "kernel", "name": "rgba2rgb", "ts": 70, "dur": 3, "args": {"stream": 22}},
        {"cat": "cuda_runtime", "name": "cudaEventSynchronize", "tid": 5, "ts": 0, "dur": 40},
        {"cat": "cuda_runtime", "name": "cudaEventSynchronize", "tid": 5, "ts": 50, "dur": 60},
        {"cat": "cuda_runtime", "name": "cudaGraphLaunch", "tid": 1, "ts": 0, "dur": 7},
    ]
    script = os.path.join(root, "benchmarks", "python", "trace_streams.py")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "trace.json")
        with open(trace, "w") as f:
            json.dump({"traceEvents": events}, f)
        done = subprocess.run([sys.executable, script, trace], capture_output=True, text=True)
        text = done.stdout
        for line in ["GPU events over 300 us", "beside the busiest stream (7)",
                     "Memcpy HtoD  streams 2  count 2  30 us", "rgba2rgb  streams 2  count 2  6 us",
                     "5  cudaEventSynchronize  2  100"]:
            if done.returncode != 0 or line not in text:
                failures.append(f"trace_streams.py: no '{line}' (exit {done.returncode}):\n{text}"
                                f"{done.stderr}")
        with open(trace, "w") as f:
            json.dump({"traceEvents": events[6:]}, f)
        empty = subprocess.run([sys.executable, script, trace], capture_output=True, text=True)
        if empty.returncode != 2 or "no GPU kernels" not in empty.stderr:
            failures.append(f"trace_streams.py took a trace without GPU events: exit "
                            f"{empty.returncode}\n{empty.stderr}")
    return failures


def check_lm_equivalence_table(root):
    failures = []
    script = os.path.join(root, "benchmarks", "python", "lm_equivalence.py")
    committed = os.path.join(root, "docs", "results", "2026-12-05-h100-llama-equivalence",
                             "callE", "lm_equivalence.json")

    def table(*paths):
        return subprocess.run([sys.executable, script, "--table-from", *paths],
                              capture_output=True, text=True)

    with open(committed) as f:
        whole = json.load(f)
    whole_table = table(committed)
    want = ["PASS: gpuperf graph within PyTorch's spread around A (0.0728 vs 0.1163",
            "NOT RUN: the float32 trajectory R", "NOT RUN: the first step's gradients",
            "| gpuperf graph | 12.1821 | 11.8982 | 11.8194 | 0.0728 |", "(cut short"]
    missing = [w for w in want if w not in whole_table.stdout]
    if whole_table.returncode != 0 or missing:
        failures.append(f"lm_equivalence.py --table-from: exit {whole_table.returncode}, missing "
                        f"{missing}\n{whole_table.stdout}{whole_table.stderr}")
    planted = json.loads(json.dumps(whole))
    planted["runs"]["gpuperf graph"][100] += 0.2
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "lm_equivalence.json")
        with open(path, "w") as f:
            json.dump(planted, f)
        done = table(path)
        if done.returncode != 1 or "FAIL: gpuperf graph within PyTorch's spread" not in done.stdout:
            failures.append(f"a gpuperf loss 0.2 off at one step passes: exit {done.returncode}"
                            f"\n{done.stdout}")
        halves = []
        for i, names in enumerate([["B pytorch fused again", "C pytorch foreach"],
                                   ["A pytorch fused", "gpuperf graph", "D pytorch graph",
                                    "E pytorch compile"]]):
            part = dict(whole, runs={n: whole["runs"][n] for n in names})
            halves.append(os.path.join(work, f"half{i}.json"))
            with open(halves[-1], "w") as f:
                json.dump(part, f)
        two = table(*halves)
        if two.returncode != 0 or two.stdout != whole_table.stdout:
            failures.append(f"two halves do not merge into the whole's table: exit "
                            f"{two.returncode}\n{two.stdout}{two.stderr}")
        other = dict(whole, settings=dict(whole["settings"], lr=3e-4))
        with open(os.path.join(work, "other.json"), "w") as f:
            json.dump(dict(other, runs={"R pytorch fp32": whole["runs"]["A pytorch fused"]}), f)
        for files, what in ((halves + [os.path.join(work, "other.json")], "other settings (lr)"),
                            (halves + [halves[0]], "a run twice")):
            done = table(*files)
            if done.returncode != 2:
                failures.append(f"files with {what} merged: exit {done.returncode}\n{done.stdout}")
    return failures + check_float32_spread(table, root)


def check_float32_spread(table, root):
    """Check (3) on the committed Llama float32 runs (gpuperf 0.01959 from R at most): against the
    fixed 1e-3 it fails; with a PyTorch float32 run S merged from a second file it is judged
    against S's own distance from R (a planted S 0.03 from R at one step: PASS; S equal to R:
    FAIL; the S measured on the H100, 0.02290 from R: PASS)."""
    failures = []
    committed = os.path.join(root, "docs", "results", "2026-12-06-h100-llama-chain-512", "call2",
                             "eq", "lm_equivalence.json")
    with open(committed) as f:
        whole = json.load(f)
    alone = table(committed)
    if alone.returncode != 1 or "FAIL: gpuperf fp32 within 1e-3 of PyTorch fp32 at every step " \
            "(0.01959)" not in alone.stdout:
        failures.append(f"Llama's float32 runs against 1e-3: exit {alone.returncode}\n"
                        f"{alone.stdout}{alone.stderr}")
    reference = whole["runs"]["R pytorch fp32"]
    with tempfile.TemporaryDirectory() as work:
        for moved, code, want in (
                (0.03, 0, "PASS: gpuperf fp32 within PyTorch's float32 spread around R (0.01959 "
                          "vs 0.03000 + 1e-3; S ran)"),
                (0.0, 1, "FAIL: gpuperf fp32 within PyTorch's float32 spread around R (0.01959 "
                         "vs 0.00000 + 1e-3; S ran)")):
            spread = list(reference)
            spread[100] += moved
            path = os.path.join(work, f"s-{moved}.json")
            with open(path, "w") as f:
                json.dump(dict(whole, runs={"S pytorch fp32 foreach": spread}), f)
            done = table(committed, path)
            if done.returncode != code or want not in done.stdout:
                failures.append(f"S {moved} from R: exit {done.returncode}, want {code} and "
                                f"'{want}'\n{done.stdout}{done.stderr}")
    measured = os.path.join(root, "docs", "results", "2026-12-06-h100-llama-max-autotune", "call1",
                            "eq", "lm_equivalence.json")
    done = table(committed, measured)
    want = ("PASS: gpuperf fp32 within PyTorch's float32 spread around R (0.01959 vs 0.02290 + "
            "1e-3; S ran)")
    if done.returncode != 0 or want not in done.stdout:
        failures.append(f"Llama's float32 runs with the measured S: exit {done.returncode}, want 0 "
                        f"and '{want}'\n{done.stdout}{done.stderr}")
    return failures


def check_lm_power(root):
    """summarize_lm.py's power table from planted gpu_info --watch --json samples on the committed
    H200 Llama side by side: the medians of GPU 0's busy samples only (an idle sample, a reading
    missing, a line cut short and another GPU's readings left out), every run of a side pooled;
    without samples the tables are the committed lm.md, unchanged."""
    failures = []
    folder = os.path.join(root, "docs", "results", "2026-12-06-h200-llama-jpeg-auto", "call6",
                          "lm-llama-1b")
    script = os.path.join(root, "benchmarks", "python", "summarize_lm.py")

    def sample(util, watts, mhz):
        gpus = [{"index": 0, "uuid": "GPU-a", "utilization_gpu_percent": util,
                 "power_draw_watts": watts, "sm_clock_mhz": mhz},
                {"index": 1, "uuid": "GPU-b", "utilization_gpu_percent": 100,
                 "power_draw_watts": 999.0, "sm_clock_mhz": 999}]
        return json.dumps({"available": True, "devices": gpus}) + "\n"

    with tempfile.TemporaryDirectory() as tmp:
        planted = os.path.join(tmp, "lm")
        shutil.copytree(folder, planted)
        # gpuperf: 690, 700 and 710 W busy in its three runs; torch.compile: 600 W in each.
        for r, watts in ((1, 690), (2, 700), (3, 710)):
            with open(os.path.join(planted, f"llama-1b-gpuperf-{r}.power.jsonl"), "w") as f:
                f.write(sample(30, 150.0, 1980) + sample(100, watts, 2000 - watts) * 2 +
                        '{"available": true, "dev')
        for r in (1, 2, 3):
            with open(os.path.join(planted, f"llama-1b-compile-{r}.power.jsonl"), "w") as f:
                f.write(sample(0, 80.0, 345) + sample(95, 600.0, 1900) +
                        sample(None, None, None))
        done = subprocess.run([sys.executable, script, planted], capture_output=True, text=True)
        want = ["| gpuperf | 6 (9) | 700 W [690, 710] | 1300 MHz [1290, 1310] |",
                "| pytorch compile | 3 (6) | 600 W [600, 600] | 1900 MHz [1900, 1900] |"]
        missing = [w for w in want if w not in done.stdout.splitlines()]
        if done.returncode != 0 or missing:
            failures.append(f"summarize_lm.py's power table: exit {done.returncode}, missing "
                            f"{missing}\n{done.stdout}{done.stderr}")
        committed = open(os.path.join(folder, "lm.md")).read().splitlines()
        lost = [line for line in committed if line not in done.stdout.splitlines()]
        if lost:
            failures.append(f"the power samples changed the committed lm.md's lines: {lost[:2]}")
    return failures


def check_gpu_decode_fit(root):
    """gpu_decode_fit.py on planted records: 20 ms a call + 30 us an image exactly."""
    failures = []
    script = os.path.join(root, "benchmarks", "python", "gpu_decode_fit.py")

    def record(gpu_images, batches_per_call=1, threads=1, on_gpu=1):
        calls = 79
        per_call = 256 * batches_per_call
        metrics = {"loader_decodes_on_gpu": on_gpu, "loader_gpu_decode_threads": threads,
                   "loader_gpu_batches_per_call": batches_per_call,
                   "loader_images_decoded": calls * per_call,
                   "loader_gpu_hardware_decoded": calls * gpu_images * 0.75,
                   "loader_gpu_backend_decoded": calls * gpu_images * 0.25,
                   "loader_gpu_thread_decode_seconds": calls * (0.020 + 30e-6 * gpu_images)}
        return {"config": {"batch_size": 256}, "metrics": metrics}

    with tempfile.TemporaryDirectory() as tmp:
        def write(name, value):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(value if isinstance(value, str) else json.dumps(value))
            return path

        good = [write(f"r{i}.json", record(n, b)) for i, (n, b) in
                enumerate(((64, 1), (128, 1), (250, 1), (400, 2)))]
        odd = [write("threads.json", record(100, threads=2)),
               write("cpu.json", record(100, on_gpu=0)), write("log.txt", "not json\n"),
               os.path.join(tmp, "missing.json")]
        done = subprocess.run([sys.executable, script] + good + odd, capture_output=True, text=True)
        want = ("4 records, 64-400 images a call: 20.0 ms a call + 30.0 us an image "
                "(RMS residual 0.00 ms)")
        left = [line for line in done.stdout.splitlines() if line.startswith("left out:")]
        if done.returncode != 0 or want not in done.stdout or len(left) != 4:
            failures.append(f"gpu_decode_fit.py: exit {done.returncode}, expected '{want}' and "
                            f"4 files left out\n{done.stdout}{done.stderr}")
        one = [write(f"s{i}.json", record(200)) for i in range(3)]
        done = subprocess.run([sys.executable, script] + one, capture_output=True, text=True)
        if done.returncode != 2:
            failures.append(f"gpu_decode_fit.py fitted records of one size: exit {done.returncode}")
    return failures


def check_share_ab(root):
    """summarize_share_ab.py on the committed H100 A/B (2026-12-07-h100-host-share-control/call1):
    the medians of the runs whose loss fell computed here, the three runs whose loss rose listed
    INVALID and left out; a copy with one more 8-thread "new" run whose loss rose is INVALID and
    leaves that median alone, and a folder without such records exits 2."""
    failures = []
    script = os.path.join(root, "benchmarks", "python", "summarize_share_ab.py")
    folder = os.path.join(root, "docs", "results", "2026-12-07-h100-host-share-control", "call1")
    runs = {}
    for path in glob.glob(os.path.join(folder, "j-*-t*-*.json")):
        name = os.path.basename(path)
        variant, threads = name.split("-")[1], int(name.split("-")[2][1:])
        record = json.load(open(path))
        if finite(record["final_loss"]) and record["final_loss"] < record["first_loss"]:
            runs.setdefault((variant, threads), []).append(
                record["metrics"]["data_to_synthetic_ratio"])
    done = subprocess.run([sys.executable, script, folder], capture_output=True, text=True)
    out = done.stdout
    for (variant, threads), ratios in runs.items():
        want = f"| {variant} | {threads} | {len(ratios)} | **{statistics.median(ratios):.4f}** "
        if want not in out:
            failures.append(f"summarize_share_ab.py: no row '{want}'\n{out}")
    invalid = [line for line in out.splitlines() if line.startswith("INVALID")]
    if done.returncode != 0 or len(invalid) != 3:
        failures.append(f"summarize_share_ab.py: exit {done.returncode}, {len(invalid)} INVALID "
                        f"lines, expected 0 and 3\n{out}{done.stderr}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in glob.glob(os.path.join(folder, "j-*.json")):
            shutil.copy(path, tmp)
        planted = json.load(open(os.path.join(folder, "j-new-t8-1.json")))
        planted["final_loss"] = planted["first_loss"] + 0.5
        planted["metrics"]["data_to_synthetic_ratio"] = 2.0
        with open(os.path.join(tmp, "j-new-t8-99.json"), "w") as f:
            json.dump(planted, f)
        copy = subprocess.run([sys.executable, script, tmp], capture_output=True, text=True)
        row = f"| new | 8 | {len(runs[('new', 8)])} | **{statistics.median(runs[('new', 8)]):.4f}** "
        if row not in copy.stdout or "j-new-t8-99.json" not in copy.stdout.split("INVALID", 1)[-1]:
            failures.append(f"summarize_share_ab.py counted a run whose loss rose\n{copy.stdout}")
        empty = subprocess.run([sys.executable, script, os.path.join(tmp, "none")],
                               capture_output=True, text=True)
        if empty.returncode != 2:
            failures.append(f"summarize_share_ab.py on a folder without records: exit "
                            f"{empty.returncode}, expected 2")
    return failures


def main():
    root = sys.argv[1]
    failures = []
    inference = run(root, "summarize_inference.py", "2026-11-29-h200-inference/side-by-side")
    guard = inference.split("Latency guard", 1)[-1].split("Targets", 1)[0]
    if "FLAG pytorch-eager: batch 1 p50 6.304 ms is above batch 64's 5.017 ms" not in guard:
        failures.append("the PyTorch eager batch-1 inversion is not flagged:\n" + guard)
    if "FLAG gpuperf-graph" in guard:
        failures.append("gpuperf-graph flagged although its p50 grows with the batch size")
    training = run(root, "summarize_side_by_side.py", "2026-11-29-h200/side-by-side")
    table = training.split("Against the best PyTorch variant", 1)[-1]
    bf16 = [line for line in table.splitlines() if line.startswith("| simple | bf16 |")]
    if not bf16 or "seed-bf16-graph (fused on, graph on)" not in bf16[0]:
        failures.append("the bf16 seed is not set against PyTorch's best (graph) variant:\n" +
                        table)
    failures += check_headline(root)
    failures += check_short_repeats(root)
    failures += check_loss_validity(root)
    failures += check_rewrite_equivalence(root)
    failures += check_readme_headline(root)
    failures += check_compare_headlines(root)
    failures += check_section_filter(root)
    failures += check_kernel_overlap(root)
    failures += check_trace_streams(root)
    failures += check_lm_equivalence_table(root)
    failures += check_lm_power(root)
    failures += check_gpu_decode_fit(root)
    failures += check_share_ab(root)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
