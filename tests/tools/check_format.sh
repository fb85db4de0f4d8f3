#!/usr/bin/env bash
# Every C, C++ and CUDA file git tracks is formatted as the committed .clang-format says:
# `clang-format --dry-run -Werror` over the tree, the files that differ listed. SKIPPED (77)
# where there is no clang-format 14 (Debian 12's: other versions format some lines differently)
# or no git checkout to list the files from.
# Usage: check_format.sh <source dir> [--self-test]
set -u
root=$1
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ]; then echo "SKIPPED: no clang-format"; exit 77; fi
version=$("$format" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then echo "SKIPPED: clang-format $version, not 14"; exit 77; fi
if [ "${2:-}" = --self-test ]; then
  # The check must see a badly formatted file: one planted in a scratch copy of the style.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp "$root/.clang-format" "$work/"
  printf 'int  f( int x ){return x;}\n' >"$work/bad.cpp"
  if "$format" --dry-run -Werror "$work/bad.cpp" >/dev/null 2>&1; then
    echo "FAIL: a badly formatted file passed"; exit 1
  fi
  echo "ok: a badly formatted file is reported"; exit 0
fi
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "SKIPPED: $root is not a git checkout"; exit 77
fi
cd "$root" || exit 1
failures=0
while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue  # deleted in the work tree, not yet committed
  if ! "$format" --dry-run -Werror "$file" >/dev/null 2>&1; then
    echo "not formatted: $file (clang-format -i $file)"
    failures=$((failures + 1))
  fi
done < <(git ls-files -z -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
if [ "$failures" -ne 0 ]; then echo "FAIL: $failures file(s) differ from .clang-format"; exit 1; fi
echo "ok: every tracked C/C++/CUDA file is formatted"
