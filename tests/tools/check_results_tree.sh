#!/usr/bin/env bash
# docs/results holds what runs produced (records, logs, tables, READMEs), never a copy of a script:
# a run names the committed script (benchmarks/...) or `git show <commit>:<path>` of the script it
# ran. Fails, listing them, when a shell script sits under docs/results.
#   check_results_tree.sh <root>               the tree
#   check_results_tree.sh <root> --self-test   a planted script must be reported
set -euo pipefail
root=$1
scripts_under() { find "$1" -type f -name '*.sh' | sort; }
if [ "${2:-}" = --self-test ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/docs/results/run"
  : >"$work/docs/results/run/README.md"
  if ! "$0" "$work" >/dev/null; then echo "self-test: a clean tree failed"; exit 1; fi
  : >"$work/docs/results/run/call1.sh"
  if "$0" "$work" >/dev/null; then echo "self-test: a planted script passed"; exit 1; fi
  echo "ok: a planted script is reported"
  exit 0
fi
found=$(scripts_under "$root/docs/results")
if [ -n "$found" ]; then
  echo "scripts under docs/results (commit them under benchmarks/, or name them by commit):"
  echo "$found"
  exit 1
fi
echo "ok: no scripts under docs/results"
