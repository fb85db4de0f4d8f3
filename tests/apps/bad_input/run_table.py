#!/usr/bin/env python3
"""Runs the shared bad-input table (table.tsv) against gpuperf's programs.

  run_table.py --bin DIR --source DIR [--program NAME] [--jobs N] [--list]

Every row of table.tsv is one case: a bad command line for one program or a group of them. A
case passes when the program

  * exits with the row's status (2 unless the row says otherwise),
  * writes exactly one line to stderr, "<program>: error: ...", containing the row's option and
    value texts (the option named, the value quoted),
  * writes nothing to stdout (it ran nothing: a run prints its results there), and
  * creates, changes or removes no file in its working directory (no result, no temporary file,
    the input files byte for byte as they were).

Rows with status 0 are controls: the program's quick base run (below) must succeed and write its
outputs, so that a check that the base run would trip is known to be able to fail.

Each case runs in a fresh directory holding an input result (a.json), a link to it (link.json),
the datasheet file (specs.json), a subdirectory (sub/), a FIFO (fifo) and two token files.
Arguments are split like a shell's (shlex); inside single quotes \\xNN is the raw byte NN (non-UTF-8, control characters). These
placeholders are replaced in the arguments and the expected texts:

  {out} {out2}   files the case may write (they must not appear)
  {dir}          a directory                  {missing}  a path under a directory that is missing
  {input}        a.json, absolute             {input_rel} ./a.json    {input_link} link.json
  {specs}        specs.json, absolute         {proc}     /proc/...: cannot be created, not by root
  {fifo}         a FIFO: a special file       {work}     the case's directory
  {devnull}      /dev/null, for reading only: a program that wrongly wrote a result there would
                 replace it (run as root, the rename swaps the device for a file)
  {out_opt}      the program's output option (--json, --checkpoint, -o)
  {tokens}       a uint16 token file of 5,000 tokens below 50,257
  {tokens_bad}   the same with token 60,000 at position 4,321

Each program runs with base arguments that make a quick valid run (BASE below), so that a bad
argument that slips through shows as a run (stdout, files) rather than a long wait; a base option
is left out when the row gives that option itself.
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import shlex
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

GIVE_UP_SECONDS = 300  # against hangs only: a case fails before anything runs

TORCH = ["seed_benchmark", "resnet50_benchmark", "lm_benchmark", "inference_benchmark",
         "microbench", "region_timing", "transformer_lm"]
TOOLS = ["gpu_info", "gpuperf_compare", "gpuperf_report", "gpuperf_advise"]
GROUPS = {
    "@all": TORCH + TOOLS,
    "@torch": TORCH,
    "@tools": TOOLS,
    "@train": ["seed_benchmark", "resnet50_benchmark", "lm_benchmark"],
    "@benchmarks": ["seed_benchmark", "resnet50_benchmark", "inference_benchmark", "microbench"],
    "@writers": ["seed_benchmark", "resnet50_benchmark", "lm_benchmark", "inference_benchmark",
                 "microbench", "transformer_lm", "gpuperf_compare", "gpuperf_report"],
    "@readers": ["gpuperf_compare", "gpuperf_report"],
}

# The quick valid run of each program: (names of the option, any of which the row may give
# instead, arguments). Positional base arguments have no names and always stay.
TINY_TRAIN = [(("--device",), ["--device", "cpu"]), (("--warmup",), ["--warmup", "0"]),
              (("--windows",), ["--windows", "1"]),
              (("--steps-per-window",), ["--steps-per-window", "1"]),
              (("--threads",), ["--threads", "1"]), (("--quiet", "-q"), ["--quiet"]),
              (("--json",), ["--json", "{out}"])]
BASE = {
    "seed_benchmark": [(("--batch-size", "-b"), ["--batch-size", "2"])] + TINY_TRAIN,
    "resnet50_benchmark": [(("--batch-size", "-b"), ["--batch-size", "1"])] + TINY_TRAIN,
    "lm_benchmark": [(("--batch-size", "-b"), ["--batch-size", "1"]),
                     (("--seq-len",), ["--seq-len", "8"])] + TINY_TRAIN,
    "inference_benchmark": [
        (("--device",), ["--device", "cpu"]),
        (("--batch-sizes", "--max-batch"), ["--batch-sizes", "1"]),
        (("--warmup",), ["--warmup", "0"]), (("--iterations",), ["--iterations", "1"]),
        (("--threads",), ["--threads", "1"]), (("--quiet", "-q"), ["--quiet"]),
        (("--json",), ["--json", "{out}"])],
    "microbench": [
        (("--device",), ["--device", "cpu"]),
        (("--gemm-size", "--gemm-shape"), ["--gemm-size", "16"]),
        (("--dtypes",), ["--dtypes", "fp32"]), (("--memory-size-mib",), ["--memory-size-mib", "1"]),
        (("--host-size-mib",), ["--host-size-mib", "1"]), (("--warmup",), ["--warmup", "0"]),
        (("--windows",), ["--windows", "1"]), (("--calls-per-window",), ["--calls-per-window", "1"]),
        (("--quiet", "-q"), ["--quiet"]), (("--json",), ["--json", "{out}"])],
    "region_timing": [],
    "transformer_lm": [
        (("--device",), ["--device", "cpu"]), (("--steps",), ["--steps", "2"]),
        (("--batch-size",), ["--batch-size", "2"]), (("--seq-len",), ["--seq-len", "4"]),
        (("--vocab",), ["--vocab", "10"]), (("--d-model",), ["--d-model", "8"]),
        (("--layers",), ["--layers", "1"]), (("--heads",), ["--heads", "1"]),
        (("--accumulation",), ["--accumulation", "1"]),
        (("--checkpoint",), ["--checkpoint", "{out}"])],
    # NVML from a file that is not there: "telemetry unavailable" on stdout, on any machine.
    "gpu_info": [(("--nvml-library",), ["--nvml-library", "{work}/no-libnvidia-ml.so"])],
    "gpuperf_compare": [((), ["{input}"]), (("-o", "--output"), ["-o", "{out}"])],
    "gpuperf_report": [((), ["{input}"]), (("-o", "--output"), ["-o", "{out}"])],
    "gpuperf_advise": [(("--model",), ["--model", "resnet50"])],
}
OUTPUT_OPTION = {"seed_benchmark": "--json", "resnet50_benchmark": "--json", "lm_benchmark": "--json",
                 "inference_benchmark": "--json", "microbench": "--json",
                 "transformer_lm": "--checkpoint", "gpuperf_compare": "--output",
                 "gpuperf_report": "--output"}
# What a control run (status 0) must leave: the output file, or text on stdout.
WRITES_OUT = set(OUTPUT_OPTION)


class Case:
    def __init__(self, line_number, program, args, option, value, status):
        self.line_number, self.program, self.args = line_number, program, args
        self.option, self.value, self.status = option, value, status

    def name(self):
        return f"table.tsv:{self.line_number} {self.program} {self.args}"


def load_table(path):
    cases = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) < 4 or len(fields) > 5:
                sys.exit(f"table.tsv:{number}: expected 4 or 5 tab-separated fields, got "
                         f"{len(fields)}: {line!r}")
            programs, args, option, value = fields[:4]
            status = int(fields[4]) if len(fields) == 5 and fields[4] else 2
            for p in programs.split():
                for program in GROUPS.get(p, [p]):
                    if program not in BASE:
                        sys.exit(f"table.tsv:{number}: unknown program or group '{program}'")
                    cases.append(Case(number, program, args, option, value, status))
    return cases


def raw_bytes(arg):
    """An argument as bytes: \\xNN is the byte NN."""
    out = bytearray()
    for i, piece in enumerate(re.split(r"\\x([0-9a-fA-F]{2})", arg)):
        out += bytes([int(piece, 16)]) if i % 2 else piece.encode("utf-8")
    return bytes(out)


def make_work(root, source):
    work = tempfile.mkdtemp(dir=root)
    shutil.copy(os.path.join(source, "docs/examples/h200-resnet50-fp16-cl.json"),
                os.path.join(work, "a.json"))
    shutil.copy(os.path.join(source, "libgpuperf/data/gpu_specs.json"),
                os.path.join(work, "specs.json"))
    os.symlink("a.json", os.path.join(work, "link.json"))
    os.mkdir(os.path.join(work, "sub"))
    os.mkfifo(os.path.join(work, "fifo"))
    # Token files (uint16, little-endian): 5,000 tokens below GPT-2's vocabulary, and the same with
    # one token past it at position 4,321 (past every window of a short run's first draws).
    tokens = [i % 50257 for i in range(0, 5000 * 7, 7)]
    with open(os.path.join(work, "tokens.bin"), "wb") as f:
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))
    tokens[4321] = 60000
    with open(os.path.join(work, "tokens_bad.bin"), "wb") as f:
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))
    return work


def substitute(text, case, work):
    values = {
        "out": os.path.join(work, "out.file"), "out2": os.path.join(work, "out2.file"),
        "dir": os.path.join(work, "sub"), "missing": os.path.join(work, "missing-dir/out.file"),
        "input": os.path.join(work, "a.json"), "input_rel": "./a.json",
        "input_link": os.path.join(work, "link.json"), "specs": os.path.join(work, "specs.json"),
        "proc": "/proc/gpuperf-bad-input.file", "fifo": os.path.join(work, "fifo"),
        "devnull": "/dev/null", "work": work, "tokens": os.path.join(work, "tokens.bin"),
        "tokens_bad": os.path.join(work, "tokens_bad.bin"),
        "out_opt": OUTPUT_OPTION.get(case.program, "--no-output-option"),
    }
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], text)


def snapshot(work):
    state = {}
    for folder, dirs, files in os.walk(work):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, work)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                with open(path, "rb") as f:
                    state[rel] = ("file", hashlib.sha256(f.read()).hexdigest())
            else:
                state[rel] = ("other", stat.S_IFMT(mode))
    return state


def command(case, work, binary):
    row = [substitute(a, case, work) for a in shlex.split(case.args)]
    given = {a.split("=", 1)[0] for a in row if a.startswith("-")}
    args = []
    for names, base in BASE[case.program]:
        if not set(names) & given:
            args += [substitute(a, case, work) for a in base]
    return [binary] + [a.encode() for a in args] + [raw_bytes(a) for a in row]


def run_case(case, bin_dir, root, source):
    work = make_work(root, source)
    try:
        binary = os.path.join(bin_dir, case.program).encode()
        argv = command(case, work, binary)
        before = snapshot(work)
        try:
            done = subprocess.run(argv, cwd=work, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=GIVE_UP_SECONDS)
        except subprocess.TimeoutExpired:
            return f"still running after {GIVE_UP_SECONDS} s (it ran instead of refusing)"
        after = snapshot(work)
        err = done.stderr.decode("utf-8", "replace")
        out = done.stdout.decode("utf-8", "replace")
        shown = " ".join(a.decode("utf-8", "backslashreplace") for a in argv[1:])
        problems = []
        if done.returncode != case.status:
            problems.append(f"exit {done.returncode}, expected {case.status}")
        if case.status == 0:
            made = set(after) - set(before)
            if case.program in WRITES_OUT and "out.file" not in made:
                problems.append("the control run wrote no output file")
            if case.program not in WRITES_OUT and not out.strip():
                problems.append("the control run printed nothing")
        else:
            lines = err.splitlines()
            line = lines[0] if lines else ""
            option = substitute(case.option, case, work)
            value = substitute(case.value, case, work)
            if len(lines) != 1:
                problems.append(f"{len(lines)} lines on stderr, expected 1")
            if not line.startswith(f"{case.program}: error: "):
                problems.append("the line does not start with '<program>: error: '")
            if option not in line:
                problems.append(f"the line does not name the option {option!r}")
            if value not in line:
                problems.append(f"the line does not quote the value {value!r}")
            if out:
                problems.append("something was written to stdout (did it run?)")
            if after != before:
                changed = sorted(set(before) ^ set(after)) + sorted(
                    k for k in set(before) & set(after) if before[k] != after[k])
                problems.append(f"files created, changed or removed: {changed}")
        if problems:
            return "; ".join(problems) + f"\n    command: {shown}\n    stderr: {err[-600:]!r}" + (
                f"\n    stdout: {out[-300:]!r}" if out else "")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="directory of the built programs")
    parser.add_argument("--source", required=True, help="the source tree")
    parser.add_argument("--program", help="run only this program's cases")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="print the cases and exit")
    o = parser.parse_args()
    table = os.path.join(os.path.dirname(os.path.abspath(__file__)), "table.tsv")
    cases = load_table(table)
    if o.program:
        cases = [c for c in cases if c.program == o.program]
        if not cases:
            sys.exit(f"no cases for program '{o.program}'")
    if o.list:
        for c in cases:
            print(c.name())
        return 0
    if not os.access(os.path.join(o.bin, cases[0].program), os.X_OK):
        sys.exit(f"{o.bin}/{cases[0].program} is not an executable")
    with tempfile.TemporaryDirectory(prefix="gpuperf-bad-input-") as root:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, o.jobs)) as pool:
            results = list(pool.map(lambda c: (c, run_case(c, o.bin, root, o.source)), cases))
    failed = 0
    for case, problem in results:
        if problem:
            failed += 1
            print(f"FAIL: {case.name()}: {problem}")
        else:
            print(f"ok: {case.name()}")
    programs = sorted({c.program for c in cases})
    print(f"{len(cases)} cases over {len(programs)} program(s), {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
