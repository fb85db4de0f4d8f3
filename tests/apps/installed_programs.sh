#!/usr/bin/env bash
# The installed programs start as installed: the build is installed into a scratch prefix (not
# the one configured, so the RPATH must be relative to the program) and every program under
# <prefix>/bin answers --version, and gpu_info --json writes JSON, with LD_LIBRARY_PATH unset.
#   installed_programs.sh <cmake> <gpuperf build dir> <scratch dir>
set -u
cmake=$1
build=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if ! "$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1; then
  echo "FAIL: cmake --install: $(tail -5 "$work/install.log")"
  exit 1
fi
bin=$work/prefix/bin
programs=$(ls "$bin")
[ -n "$programs" ] || fail "nothing installed under bin/"

# <output file> <command...>: runs it without LD_LIBRARY_PATH; its exit code.
bare() {
  local out=$1
  shift
  env -u LD_LIBRARY_PATH "$@" >"$out" 2>&1
}

for program in $programs; do
  if bare "$work/$program.version" "$bin/$program" --version &&
     grep -q "^$program (gpuperf [0-9]*\.[0-9]*\.[0-9]*" "$work/$program.version"; then
    echo "ok: $program --version: $(head -1 "$work/$program.version")"
  else
    fail "$program --version: $(head -3 "$work/$program.version")"
  fi
done

for required in seed_benchmark gpu_info; do
  [ -x "$bin/$required" ] || fail "$required is not installed"
done
if bare "$work/gpu_info.json" "$bin/gpu_info" --json &&
   python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert isinstance(d, dict) and d' \
     "$work/gpu_info.json" 2>"$work/gpu_info.check"; then
  echo "ok: gpu_info --json: $(tr -d '\n ' <"$work/gpu_info.json" | cut -c1-80)"
else
  fail "gpu_info --json: $(head -5 "$work/gpu_info.json") $(cat "$work/gpu_info.check" 2>/dev/null)"
fi

[ "$failures" -eq 0 ] && echo "all passed" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
