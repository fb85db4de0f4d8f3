#!/usr/bin/env python3
"""Regression checks of #17's fixes that are not bad command lines (those are in table.tsv).

  regressions.py long-names <bin dir>  a 255-byte file name (NAME_MAX) is written
  regressions.py memory     <bin dir> [<examples dir>]
                                       allocations no machine can make end with exit 1 and one
                                       line naming the setting, and no result (SKIPPED, 77,
                                       where vm.overcommit_memory=1 would let them start);
                                       region_timing's only with the examples' build folder
  regressions.py outputs    <bin dir>  (#33) links planted at the old predictable temporary and
                                       probe names truncate nothing; --json /dev/stdout (and a
                                       link to it) with standard output a file is refused, and
                                       /dev/stdout stays a link
"""
import os
import subprocess
import sys
import tempfile

GIVE_UP_SECONDS = 300  # against hangs only
SKIP = 77
failures = []


def run(argv, cwd):
    return subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, errors="replace", timeout=GIVE_UP_SECONDS)


def check(ok, what, done=None):
    if ok:
        print("ok:", what)
    else:
        detail = f"\n  exit {done.returncode}\n  stdout: {done.stdout[-600:]!r}\n  stderr: " \
                 f"{done.stderr[-600:]!r}" if done is not None else ""
        failures.append(what + detail)


def long_names(bin_dir):
    # Its temporary file ("<name>.tmp-<pid>") would pass NAME_MAX; it is shortened instead.
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    example = os.path.join(source, "docs/examples/h200-resnet50-fp16-cl.json")
    with tempfile.TemporaryDirectory() as work:
        for program, name in (("gpuperf_compare", "c" * 250 + ".md"),
                              ("gpuperf_report", "r" * 250 + ".html")):
            done = run([os.path.join(bin_dir, program), example, "-o", name], work)
            left = [n for n in os.listdir(work) if ".tmp-" in n or ".probe-" in n]
            check(done.returncode == 0 and os.path.isfile(os.path.join(work, name)) and not left,
                  f"{program} writes a {len(name)}-byte file name, no temporary file left", done)
        seed = os.path.join(bin_dir, "seed_benchmark")
        name = "s" * 250 + ".json"
        done = run([seed, "--device", "cpu", "--batch-size", "2", "--warmup", "0", "--windows",
                    "1", "--steps-per-window", "1", "--threads", "1", "--quiet", "--json", name],
                   work)
        check(done.returncode == 0 and os.path.isfile(os.path.join(work, name)),
              "seed_benchmark writes a 255-byte file name", done)


def memory(bin_dir, examples_dir=None):
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            always = f.read().strip() == "1"
    except OSError:
        always = False
    if always:
        print("SKIPPED: vm.overcommit_memory=1 lets a 24 TB allocation start and the OOM killer end "
              "it; these checks need the kernel to refuse it")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory() as work:
        if examples_dir is None:
            print("not checked: region_timing (the teaching examples are not built)")
        else:
            # 2e9 samples of 3x32x32 floats: 24.6 TB, more than any machine's memory.
            done = run([os.path.join(examples_dir, "region_timing"), "2", "2000000000"], work)
            lines = done.stderr.splitlines()
            check(done.returncode == 1 and len(lines) == 1 and lines[0].startswith(
                "region_timing: error: out of host memory with batch_size 2000000000: ") and
                not done.stdout, "region_timing: an impossible batch is exit 1 naming batch_size",
                done)
        # 2^20 x 2^20 fp32 operands: 4 TiB each. The library calls that "unsupported"; the
        # program refuses to write it as a result.
        done = run([os.path.join(bin_dir, "microbench"), "--device", "cpu", "--dtypes", "fp32",
                    "--gemm-size", "1048576", "--no-memory", "--warmup", "0", "--windows", "1",
                    "--calls-per-window", "1", "--quiet", "--json", "micro.json"], work)
        lines = done.stderr.splitlines()
        check(done.returncode == 1 and len(lines) == 1 and
              "out of host memory with --gemm-size 1048576" in lines[0] and
              not os.path.exists(os.path.join(work, "micro.json")),
              "microbench: an impossible GEMM is exit 1 naming --gemm-size, no result", done)


SEED_QUICK = ["--device", "cpu", "--batch-size", "2", "--warmup", "0", "--windows", "1",
              "--steps-per-window", "1", "--threads", "1", "--quiet"]


def outputs(bin_dir):
    seed = os.path.join(bin_dir, "seed_benchmark")
    with tempfile.TemporaryDirectory() as work:
        # Before #33 the temporary and probe files were "<target>.tmp-<pid>" and
        # "<target>.probe-<pid>", opened with O_TRUNC and following links: links planted there
        # (the pid is known: the shell waits for a line, then becomes the program) truncated and
        # overwrote the victim.
        victim = os.path.join(work, "victim.txt")
        with open(victim, "w") as f:
            f.write("precious\n")
        target = os.path.join(work, "result.json")
        proc = subprocess.Popen(["sh", "-c", 'read _ && exec "$0" "$@"', seed] + SEED_QUICK +
                                ["--json", target], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work)
        for suffix in (".tmp-", ".probe-"):
            os.symlink(victim, f"{target}{suffix}{proc.pid}")
        out, err = proc.communicate(b"go\n", timeout=GIVE_UP_SECONDS)
        with open(victim) as f:
            intact = f.read() == "precious\n"
        check(proc.returncode == 0 and intact and os.path.isfile(target) and
              not os.path.islink(target),
              "links planted at predictable temporary names: the victim is intact, the result a "
              f"file of its own (exit {proc.returncode}, {err.decode(errors='replace')[-300:]!r})")
        # --json /dev/stdout with standard output redirected to a file: /dev/stdout resolves to
        # that regular file, and (as root) the rename replaced the /dev/stdout link itself.
        os.symlink("/dev/stdout", os.path.join(work, "out-link.json"))
        for path in ("/dev/stdout", "/proc/self/fd/1", "out-link.json"):
            with open(os.path.join(work, "stdout.txt"), "w") as stdout_file:
                done = subprocess.run([seed] + SEED_QUICK + ["--json", path], cwd=work,
                                      stdin=subprocess.DEVNULL, stdout=stdout_file,
                                      stderr=subprocess.PIPE, text=True, timeout=GIVE_UP_SECONDS)
            lines = done.stderr.splitlines()
            check(done.returncode == 2 and len(lines) == 1 and "--json" in lines[0] and
                  path in lines[0] and os.path.islink("/dev/stdout"),
                  f"--json {path} with standard output a file is refused, one line (exit "
                  f"{done.returncode}, {lines[-2:]!r})")


def main():
    modes = {"long-names": long_names, "memory": memory, "outputs": outputs}
    args = sys.argv[1:]
    most = 3 if args[:1] == ["memory"] else 2  # memory takes the examples' folder too
    if not 2 <= len(args) <= most or args[0] not in modes:
        sys.exit(__doc__)
    modes[args[0]](*args[1:])
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
