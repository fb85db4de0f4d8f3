#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs a project that
# uses find_package(gpuperf COMPONENTS core) without LibTorch: no Torch_DIR is passed, and
# CMAKE_DISABLE_FIND_PACKAGE_Torch makes any search for LibTorch fail the configure step.
# Usage: run.sh <gpuperf build dir> <scratch dir>
set -eu
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release --no-warn-unused-cli \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON
cmake --build "$work/build"
# The program itself loads no LibTorch library either.
if command -v ldd >/dev/null && \
   LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64" ldd "$work/build/consumer_core" |
   grep -Ei 'torch|c10|caffe2'; then
  echo "run.sh: consumer_core loads LibTorch" >&2
  exit 1
fi
data_dir="$work/prefix/share/gpuperf"
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$work/build/consumer_core" "$data_dir" "$work"
