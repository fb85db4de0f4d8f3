#!/usr/bin/env python3
"""A stop signal ends a gpuperf program cleanly: sent to a real CPU run of seed_benchmark.

  signal_test.py run   <seed_benchmark>   SIGINT, SIGTERM and SIGHUP while the windows are timed
  signal_test.py write <seed_benchmark>   SIGINT and SIGTERM while the result is being written

Each case checks the exit status (130, 143, 129), that the last line on stderr is
"seed_benchmark: interrupted by SIGxxx; no result written", that no "<target>.tmp-<pid>" (or
".probe-") file is left, and that the target is absent, or unchanged where it existed before.

'write' holds the program inside its atomic write. The temporary file has an unpredictable name
and is created O_EXCL|O_NOFOLLOW (a FIFO planted at a guessed name is never opened), so the hold
is the writer's test seam: with GPUPERF_TEST_HOLD_WRITE naming a FIFO, the writer opens that FIFO
after writing its registered temporary file and before the rename, and blocks there; the signal
then lands with the temporary file registered, and the handler must remove it. Whether the
program is blocked there is read from /proc/<pid>/wchan; where /proc does not say, that mode
exits 77 (SKIPPED).

No wall-clock bound is a pass criterion: the script polls, and gives up only after generous
timeouts so that a broken program cannot hang the test suite.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

GIVE_UP_SECONDS = 300  # only against hangs; a healthy case takes a second or two
SKIP = 77
NAMES = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}
failures = []


def default_signals():
    # A test runner started under nohup would hand its ignored SIGHUP down; the program keeps a
    # signal it was started with ignored (as it should), so reset them for the child.
    for s in NAMES:
        signal.signal(s, signal.SIG_DFL)


def wait_for(condition, what):
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    failures.append(f"gave up waiting for {what} after {GIVE_UP_SECONDS} s")
    return False


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def finish(proc, sig, work, target, before, err_path, case):
    """Sends `sig`, waits, and checks everything the handler promises."""
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=GIVE_UP_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        failures.append(f"{case}: still running {GIVE_UP_SECONDS} s after {NAMES[sig]}")
        return
    problems = []
    if code != 128 + sig:
        problems.append(f"exit status {code}, expected {128 + sig}")
    lines = read(err_path).splitlines()
    expected = f"seed_benchmark: interrupted by {NAMES[sig]}; no result written"
    if not lines or lines[-1] != expected:
        problems.append(f"last stderr line {lines[-1:]!r}, expected {expected!r}")
    if sum("interrupted" in line for line in lines) != 1:
        problems.append("not exactly one 'interrupted' line on stderr")
    left = [n for n in os.listdir(work) if ".tmp-" in n or ".probe-" in n]
    if left:
        problems.append(f"temporary files left: {left}")
    if before is None and os.path.lexists(target):
        problems.append("a result file was written at the target")
    if before is not None:
        with open(target, "rb") as f:
            if f.read() != before:
                problems.append("the existing target file changed")
    if problems:
        failures.append(f"{case}: " + "; ".join(problems) + f"\n  stderr tail: {lines[-3:]}")
    else:
        print(f"ok: {case}: exit {code}, '{lines[-1]}', no temporary file, target "
              f"{'unchanged' if before is not None else 'absent'}")


def prepare_target(work, existing):
    """The result path in `work` and, with `existing`, the earlier result written there first
    (which an interrupted run must leave unchanged); None when the target starts absent."""
    target = os.path.join(work, "result.json")
    if not existing:
        return target, None
    before = b'{"an": "earlier result"}\n'
    with open(target, "wb") as f:
        f.write(before)
    return target, before


def run_mode(program, sig, existing):
    case = f"run, {NAMES[sig]}, target {'existing' if existing else 'absent'}"
    with tempfile.TemporaryDirectory() as work:
        target, before = prepare_target(work, existing)
        err_path = os.path.join(work, "stderr.txt")
        # Enough windows to still be running whenever the signal comes; progress lines on stderr
        # say that the timed windows (and with them the handler) are there.
        args = [program, "--device", "cpu", "--batch-size", "2", "--warmup", "0",
                "--steps-per-window", "1", "--windows", "1000000", "--threads", "1",
                "--json", target]
        with open(err_path, "wb") as err:
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, cwd=work,
                                    preexec_fn=default_signals)
        started = wait_for(lambda: re.search(r"window \d+/", read(err_path)) is not None or
                           proc.poll() is not None, f"{case}: a timed window")
        if not started or proc.poll() is not None:
            proc.kill()
            proc.wait()
            failures.append(f"{case}: the run did not get to its windows: {read(err_path)[-500:]}")
            return
        finish(proc, sig, work, target, before, err_path, case)


def blocked_in_fifo_open(pid):
    """True/False from /proc, or None where /proc does not tell."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read().strip()
    except OSError:
        return None
    if wchan in ("", "0"):
        return None if not os.path.exists(f"/proc/{pid}") else False
    return "partner" in wchan or "fifo" in wchan


def write_mode(program, sig, existing):
    case = f"write, {NAMES[sig]}, target {'existing' if existing else 'absent'}"
    with tempfile.TemporaryDirectory() as work:
        target, before = prepare_target(work, existing)
        err_path = os.path.join(work, "stderr.txt")
        args = [program, "--device", "cpu", "--batch-size", "2", "--warmup", "0",
                "--steps-per-window", "1", "--windows", "2", "--threads", "1", "--quiet",
                "--json", target]
        hold = os.path.join(work, "hold.fifo")
        os.mkfifo(hold)
        env = dict(os.environ, GPUPERF_TEST_HOLD_WRITE=hold)
        with open(err_path, "wb") as err:
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, cwd=work,
                                    env=env, preexec_fn=default_signals)
        state = {"unknown": False}

        def blocked():
            if proc.poll() is not None:
                return True
            answer = blocked_in_fifo_open(proc.pid)
            if answer is None:
                state["unknown"] = True
                return True
            return answer

        if not wait_for(blocked, f"{case}: the program to open its temporary file"):
            proc.kill()
            proc.wait()
            return
        if state["unknown"]:
            proc.kill()
            proc.wait()
            print(f"SKIPPED: /proc/{proc.pid}/wchan does not say where the program waits")
            sys.exit(SKIP)
        if proc.poll() is not None:
            failures.append(f"{case}: the program ended (exit {proc.returncode}) before opening "
                            f"its temporary file: {read(err_path)[-500:]}")
            return
        temporaries = [n for n in os.listdir(work) if n.startswith("result.json.tmp-")]
        if len(temporaries) != 1:
            failures.append(f"{case}: expected one temporary file while held, found {temporaries}")
        os.unlink(hold)  # not a leftover of the program's
        finish(proc, sig, work, target, before, err_path, case)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("run", "write"):
        sys.exit(__doc__)
    mode, program = sys.argv[1], os.path.abspath(sys.argv[2])
    if mode == "run":
        run_mode(program, signal.SIGINT, existing=False)
        run_mode(program, signal.SIGTERM, existing=True)
        run_mode(program, signal.SIGHUP, existing=False)
    else:
        write_mode(program, signal.SIGINT, existing=False)
        write_mode(program, signal.SIGTERM, existing=True)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
