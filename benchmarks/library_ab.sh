#!/usr/bin/env bash
# A/B of one change to libgpuperf on the machine at hand: the library built as the tree is ("new")
# and with one sed expression applied to one of its source files ("old"), then one command run
# against each in turn, ROUNDS times, through LD_LIBRARY_PATH (the programs' RUNPATH gives way to
# it). The source file is put back afterwards, and the build folder holds the tree's library again.
#
#   benchmarks/library_ab.sh BUILD FILE SED_EXPRESSION OUT ROUNDS -- COMMAND [ARGS...]
#
# In COMMAND and ARGS "{variant}" becomes old or new and "{round}" the round. Each run's output
# goes to OUT/<variant>-<round>.txt; the libraries stay in $AB_LIBS/<variant> (default OUT/libs:
# set AB_LIBS elsewhere when OUT is archived, the libraries are large). Example (training
# on the legacy default stream against the side stream, two rounds):
#
#   benchmarks/library_ab.sh build-gpu libgpuperf/torch/src/train/training_run.cpp \
#     's/^  const SideStreamScope stream(r.device);$//' out/ab 2 -- \
#     build-gpu/apps/resnet50_benchmark --data data --decode gpu --json 'out/ab/{variant}-{round}.json'
set -uo pipefail

usage() {
  echo "usage: $0 BUILD FILE SED_EXPRESSION OUT ROUNDS -- COMMAND [ARGS...]" >&2
  exit 2
}
[ $# -ge 7 ] && [ "$6" = "--" ] || usage
build=$1 file=$2 expression=$3 out=$4 rounds=$5
shift 6
[ -f "$build/build.ninja" ] || [ -f "$build/Makefile" ] || {
  echo "$0: $build is not a configured build folder" >&2
  exit 2
}
[ -f "$file" ] || { echo "$0: no source file $file" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$0: ROUNDS must be a whole number >= 1, got '$rounds'" >&2; exit 2; }

libs=${AB_LIBS:-$out/libs}
mkdir -p "$out" "$libs/new" "$libs/old" || exit 2
out=$(cd "$out" && pwd)
libs=$(cd "$libs" && pwd)
original=$(mktemp)
cp "$file" "$original"
restore() {
  cp "$original" "$file"
  rm -f "$original"
}
trap restore EXIT

# Builds the library target and copies the library (the file its soname names) into $1.
library_into() {
  cmake --build "$build" --target gpuperf >"$out/build-$2.log" 2>&1 ||
    { echo "$0: building the $2 library failed (see $out/build-$2.log)" >&2; exit 1; }
  # libgpuperf.so links to the soname (libgpuperf.so.MAJOR.MINOR), which the programs load.
  local soname
  soname=$(readlink "$build/libgpuperf/libgpuperf.so")
  [ -n "$soname" ] || { echo "$0: no libgpuperf.so link in $build/libgpuperf" >&2; exit 1; }
  cp -L "$build/libgpuperf/libgpuperf.so" "$1/$soname"
}

library_into "$libs/new" new
sed -i "$expression" "$file"
if cmp -s "$file" "$original"; then
  echo "$0: the expression changed nothing in $file" >&2
  exit 2
fi
library_into "$libs/old" old
cp "$original" "$file"
library_into "$libs/new" new  # the build folder holds the tree's library again

for ((r = 1; r <= rounds; ++r)); do
  for variant in old new; do
    args=()
    for a in "$@"; do
      a=${a//\{variant\}/$variant}
      args+=("${a//\{round\}/$r}")
    done
    LD_LIBRARY_PATH="$libs/$variant${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "${args[@]}" \
      >"$out/$variant-$r.txt" 2>&1
    echo "$variant round $r: exit $? ($out/$variant-$r.txt)"
  done
done
