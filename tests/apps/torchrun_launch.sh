#!/usr/bin/env bash
# Two CPU ranks (Gloo) started by the real torchrun, in each of its rendezvous modes: plain
# (static: torchrun's agent serves the TCPStore at MASTER_PORT and the ranks join it), --standalone
# and --rdzv_backend c10d (rank 0 serves the store). SKIPPED (exit 77) where no python3 imports
# torch.distributed.run (Debian: python3-torch).
#   torchrun_launch.sh <seed_benchmark>
set -u
program=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tiny=(--device cpu --batch-size 8 --warmup 1 --steps-per-window 2 --windows 3 --threads 1 --quiet)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The python3 on PATH first; then Debian's, where PATH has another one (pyenv, a venv) without torch.
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import torch.distributed.run' >/dev/null 2>&1; then python=$candidate; break; fi
done
if [ -z "$python" ]; then
  echo "SKIPPED: no python3 imports torch.distributed.run (Debian: apt-get install python3-torch)"
  exit 77
fi

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# torchrun 1.13 knows only the underscore spellings (2.x takes both), and Debian's (Python 3.11)
# fails in start_processes without --redirects (AttributeError: 'NoneType' object has no
# attribute 'get'); --tee 1 keeps the ranks' output on the console.
torchrun=("$python" -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node 2)

# <json> <world size>: rank 0's record of a run whose ranks agreed.
check_record() {
  "$python" - "$@" <<'PY' || return 1
import json, sys
path, world = sys.argv[1], int(sys.argv[2])
d = json.load(open(path))["distributed"]
problems = []
if d["world_size"] != world: problems.append(f"world_size {d['world_size']}")
if d["launcher"] != "torchrun": problems.append(f"launcher {d['launcher']}")
if not d["parameters_identical"]: problems.append("parameters differ across ranks")
if len(d["rank_throughput"]) != world or min(d["rank_throughput"]) <= 0:
    problems.append(f"rank throughput {d['rank_throughput']}")
# The record re-runs the job: torchrun's command (its agent's command line), not a rank's.
command = json.load(open(path))["command"]
if "torch.distributed.run" not in command or "nproc_per_node" not in command:
    problems.append(f"command {command!r} is not torchrun's")
if problems: print("; ".join(problems)); sys.exit(1)
PY
}

# <name> <torchrun's rendezvous options...>
run_torchrun() {
  local name=$1
  shift
  (cd "$work" && timeout 300 "${torchrun[@]}" "$@" --no_python "$program" "${tiny[@]}" \
     --json "$work/$name.json" >"$work/$name.out" 2>&1)
  local rc=$?
  if [ $rc -eq 0 ] && [ -e "$work/$name.json" ] && check_record "$work/$name.json" 2; then
    echo "ok: torchrun $* (2 ranks, identical parameters, rank 0's record)"
  else
    fail "torchrun $*: rc $rc, $(tail -5 "$work/$name.out")"
  fi
}

run_torchrun static --master_addr 127.0.0.1 --master_port "$(free_port)"
# torchrun 1.13's --standalone serves its rendezvous on the fixed port 29400 (2.x: a free one).
if "$python" -c 'import socket; socket.socket().bind(("", 29400))' 2>/dev/null; then
  run_torchrun standalone --standalone
else
  echo "not run: torchrun --standalone (port 29400, where torchrun 1.13 puts its rendezvous, is in use)"
fi
run_torchrun c10d --nnodes 1 --rdzv_backend c10d --rdzv_endpoint "127.0.0.1:$(free_port)"

[ "$failures" -eq 0 ] && echo "all passed" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
