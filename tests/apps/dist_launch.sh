#!/usr/bin/env bash
# Data-parallel runs on the CPU (Gloo over loopback) through every launcher path: gpuperf's own
# --nproc-per-node with 2 and 4 ranks, torchrun's variables and Open MPI's set by hand; then the
# failures: a killed rank stops the job with its name, a missing peer times out instead of
# hanging, ranks with different settings and two jobs on one port refuse at the rendezvous, bad
# launcher variables are refused (exit 2, nothing written).
#   dist_launch.sh <seed_benchmark>
set -u
program=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'pkill -P $$ 2>/dev/null; rm -rf "$work"' EXIT
source "$here/usage_error_check.sh"
tiny=(--device cpu --batch-size 8 --warmup 1 --steps-per-window 2 --windows 3 --threads 1 --quiet)
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# <json> <world size> <launcher>: the record of a data-parallel run that agreed.
check_record() {
  python3 - "$@" <<'PY' || return 1
import json, sys
path, world, launcher = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.load(open(path))["distributed"]
problems = []
if d["world_size"] != world: problems.append(f"world_size {d['world_size']}")
if d["launcher"] != launcher: problems.append(f"launcher {d['launcher']}")
if not d["parameters_identical"]: problems.append("parameters differ across ranks")
if not d["global_throughput"] > 0: problems.append(f"global throughput {d['global_throughput']}")
if len(d["rank_throughput"]) != world or min(d["rank_throughput"]) <= 0:
    problems.append(f"rank throughput {d['rank_throughput']}")
# The record re-runs the job: gpuperf's own launcher's command keeps --nproc-per-node.
command = json.load(open(path))["command"]
if launcher == "gpuperf" and f"--nproc-per-node {world}" not in command:
    problems.append(f"command {command!r} lost --nproc-per-node")
if problems: print("; ".join(problems)); sys.exit(1)
PY
}

for n in 2 4; do
  if timeout 300 "$program" "${tiny[@]}" --nproc-per-node "$n" --json "$work/n$n.json" >"$work/n$n.out" 2>&1 &&
     check_record "$work/n$n.json" "$n" gpuperf; then
    echo "ok: --nproc-per-node $n"
  else
    fail "--nproc-per-node $n: $(tail -3 "$work/n$n.out")"
  fi
done

# torchrun's and Open MPI's variables, set by hand for two processes.
# two_ranks <name> <launcher> <rank 1's variables...> -- <rank 0's variables...>
two_ranks() {
  local name=$1 launcher=$2 one=() zero=() port
  shift 2
  while [ "$1" != -- ]; do one+=("$1"); shift; done
  shift
  zero=("$@")
  port=$(free_port)
  env "${one[@]}" MASTER_PORT=$port \
    timeout 300 "$program" "${tiny[@]}" --json "$work/$name-1.json" >"$work/$name-1.out" 2>&1 &
  env "${zero[@]}" MASTER_PORT=$port \
    timeout 300 "$program" "${tiny[@]}" --json "$work/$name.json" >"$work/$name-0.out" 2>&1
  local rc=$?
  wait
  if [ $rc -eq 0 ] && check_record "$work/$name.json" 2 "$launcher" && [ ! -e "$work/$name-1.json" ]; then
    echo "ok: $launcher variables (rank 0 alone writes the result)"
  else
    fail "$launcher variables: rc $rc, $(tail -3 "$work/$name-0.out")"
  fi
}
two_ranks t torchrun RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 -- \
  RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1
two_ranks m mpi OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=1 \
  OMPI_COMM_WORLD_LOCAL_SIZE=2 -- OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 \
  OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2

# A rank killed mid-run: the launcher names it and stops the others; no result file.
"$program" --device cpu --batch-size 8 --warmup 1 --steps-per-window 1 --windows 100000 --threads 1 \
  --quiet --nproc-per-node 2 --json "$work/k.json" >"$work/k.out" 2>"$work/k.err" &
launcher=$!
victim=""
for _ in $(seq 1 300); do
  for child in $(pgrep -P $launcher); do
    grep -qz '^RANK=1$' "/proc/$child/environ" 2>/dev/null && victim=$child
  done
  [ -n "$victim" ] && break
  sleep 0.1
done
sleep 1
[ -n "$victim" ] && kill -9 "$victim"
start=$SECONDS
for _ in $(seq 1 600); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
if kill -0 $launcher 2>/dev/null; then
  kill -9 $launcher; fail "killed rank: the launcher still runs after 60 s"
else
  wait $launcher; rc=$?
  if [ $rc -ne 0 ] && grep -q "rank 1 (pid $victim) was killed by signal 9" "$work/k.err" &&
     [ ! -e "$work/k.json" ]; then
    echo "ok: killed rank named, job stopped in $((SECONDS - start)) s (exit $rc)"
  else
    fail "killed rank: rc $rc, victim '$victim', $(cat "$work/k.err" | tail -3)"
  fi
fi

# The launcher killed by SIGKILL: its ranks end with it (parent-death signal) and write nothing.
"$program" --device cpu --batch-size 8 --warmup 1 --steps-per-window 1 --windows 100000 --threads 1 \
  --quiet --nproc-per-node 2 --json "$work/orphan.json" >"$work/orphan.out" 2>&1 &
launcher=$!
ranks=""
for _ in $(seq 1 300); do
  ranks=$(pgrep -P $launcher | tr '\n' ' ')
  [ "$(echo $ranks | wc -w)" -eq 2 ] && break
  sleep 0.1
done
sleep 1
kill -9 $launcher; wait $launcher 2>/dev/null
alive=""
for _ in $(seq 1 300); do
  alive=""
  for r in $ranks; do kill -0 "$r" 2>/dev/null && alive="$alive $r"; done
  [ -z "$alive" ] && break
  sleep 0.1
done
if [ -n "$ranks" ] && [ -z "$alive" ] && [ ! -e "$work/orphan.json" ]; then
  echo "ok: the ranks ($ranks) ended with their SIGKILLed launcher; no result"
else
  for r in $alive; do kill -9 "$r" 2>/dev/null; done
  fail "SIGKILLed launcher: ranks '$ranks', still alive after 30 s: '$alive'"
fi

# A peer that never comes: rank 0 gives up after --dist-timeout with an error, not a hang.
port=$(free_port)
start=$SECONDS
RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  timeout 120 "$program" "${tiny[@]}" --dist-timeout 3 --json "$work/alone.json" \
  >"$work/alone.out" 2>&1
rc=$?
# One error line that names the rank and the rendezvous, within twice the timeout (the store, then
# the connections; wide bounds: a busy machine).
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ ! -e "$work/alone.json" ] &&
   grep -q "error: rank 0 of 2: .* at 127.0.0.1:$port failed (timeout 3 s)" "$work/alone.out" &&
   [ "$(grep -c error "$work/alone.out")" -eq 1 ]; then
  echo "ok: missing peer -> exit $rc after $((SECONDS - start)) s: $(grep error "$work/alone.out" | head -1)"
else
  fail "missing peer: rc $rc after $((SECONDS - start)) s: $(tail -2 "$work/alone.out")"
fi

# Ranks that run different settings: every rank refuses at the rendezvous, naming the first
# differing setting and both values (exit 2, nothing written), instead of Gloo aborting.
port=$(free_port)
RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 \
  "$program" "${tiny[@]}" --seed 5 --dist-timeout 60 --json "$work/diff-1.json" >"$work/diff-1.out" 2>&1 &
one=$!
RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 \
  "$program" "${tiny[@]}" --dist-timeout 60 --json "$work/diff-0.json" >"$work/diff-0.out" 2>&1
rc0=$?
wait "$one"
rc1=$?
if [ "$rc0" -eq 2 ] && [ "$rc1" -eq 2 ] &&
   grep -q -- "--seed: differs between the ranks: 5 on rank 1, 0 on rank 0 (here)" "$work/diff-0.out" &&
   grep -q -- "--seed: differs between the ranks: 5 on rank 1 (here), 0 on rank 0" "$work/diff-1.out" &&
   [ ! -e "$work/diff-0.json" ] && [ ! -e "$work/diff-1.json" ]; then
  echo "ok: different settings refused on both ranks: $(grep error "$work/diff-0.out")"
else
  fail "different settings: exit $rc0/$rc1: $(tail -1 "$work/diff-0.out") / $(tail -1 "$work/diff-1.out")"
fi

# Two jobs on one MASTER_PORT: a rank of job b that reaches job a's store is refused, and job a's
# rank 0 stops naming it; neither trains with the other's ranks or writes a result.
port=$(free_port)
GPUPERF_JOB_ID=a RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  timeout 300 "$program" "${tiny[@]}" --json "$work/job-a.json" >"$work/job-a.out" 2>&1 &
zero=$!
GPUPERF_JOB_ID=b RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  timeout 300 "$program" "${tiny[@]}" --json "$work/job-b.json" >"$work/job-b.out" 2>&1
rcb=$?
wait "$zero"
rca=$?
if [ "$rca" -eq 1 ] && [ "$rcb" -eq 1 ] &&
   grep -q "rank 1 of job 'b' reached the store of job 'a'" "$work/job-a.out" &&
   grep -q "rank 1 of job 'b' reached the store of job 'a'" "$work/job-b.out" &&
   [ ! -e "$work/job-a.json" ] && [ ! -e "$work/job-b.json" ]; then
  echo "ok: two jobs on one port refuse each other: $(grep error "$work/job-a.out")"
else
  fail "two jobs on one port: exit $rca/$rcb: $(tail -1 "$work/job-a.out") / $(tail -1 "$work/job-b.out")"
fi

outputs=("$work/bad.json")
RANK=0 check_usage_error "WORLD_SIZE" "$program" "${tiny[@]}" --json "$work/bad.json"
RANK=2 WORLD_SIZE=2 check_usage_error "RANK='2'" "$program" "${tiny[@]}" --json "$work/bad.json"
WORLD_SIZE=2 check_usage_error "WORLD_SIZE='2' is set but RANK is not" "$program" "${tiny[@]}" --json "$work/bad.json"
RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_PORT=1 check_usage_error "--nproc-per-node: 4 inside a job" "$program" "${tiny[@]}" --nproc-per-node 4 --json "$work/bad.json"
check_usage_error "--dist-backend: unknown value 'mpi'" "$program" "${tiny[@]}" --dist-backend mpi --json "$work/bad.json"
check_usage_error "--dist-timeout: must be >= 0.001" "$program" "${tiny[@]}" --dist-timeout 0 --json "$work/bad.json"
check_usage_error "--dist-timeout: must be >= 0.001" "$program" "${tiny[@]}" --dist-timeout 1e-300 --json "$work/bad.json"
RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_PORT=1 check_usage_error "--adaptive: not available in a data-parallel run" "$program" "${tiny[@]}" --adaptive --json "$work/bad.json"
# Checked by the launcher before the fork: one line, not one per rank.
check_usage_error "--lr: must be finite and > 0, got 0" "$program" "${tiny[@]}" --nproc-per-node 2 --lr 0 --json "$work/bad.json"
check_usage_error "--device cuda:0: a data-parallel rank uses cuda:LOCAL_RANK" "$program" "${tiny[@]:2}" --device cuda:0 --nproc-per-node 2 --json "$work/bad.json"
check_usage_error "--adaptive: not available in a data-parallel run" "$program" "${tiny[@]}" --nproc-per-node 2 --adaptive --json "$work/bad.json"
# A device-dependent setting is said once, by the launcher, not once per rank after the fork.
check_usage_error "--graph on: needs a CUDA device" "$program" "${tiny[@]}" --nproc-per-node 2 --graph on --json "$work/bad.json"

[ "$failures" -eq 0 ] && echo "all passed" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
