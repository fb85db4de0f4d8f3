#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs a project that
# uses find_package(gpuperf COMPONENTS core) without LibTorch: no Torch_DIR is passed, and
# CMAKE_DISABLE_FIND_PACKAGE_Torch makes any search for LibTorch fail the configure step.
# Then checks that find_package(gpuperf) refuses another LibTorch than the one gpuperf was built
# with. Usage: run.sh <gpuperf build dir> <scratch dir>
set -eu
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release --no-warn-unused-cli \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON
cmake --build "$work/build"
# The program itself loads no LibTorch library either: the library names ldd lists (not its
# load addresses, whose hex digits can read "c10").
if command -v ldd >/dev/null && \
   LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64" ldd "$work/build/consumer_core" |
   awk '{print $1}' | grep -Ei '^lib(torch|c10|caffe2)'; then
  echo "run.sh: consumer_core loads LibTorch" >&2
  exit 1
fi
data_dir="$work/prefix/share/gpuperf"
LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$work/build/consumer_core" "$data_dir" "$work"

# A consumer of gpuperf::gpuperf with another LibTorch than gpuperf's is refused at configure
# time, naming both versions: a stand-in LibTorch package that says it is version 0.0.1.
fake="$work/fake-torch"
mkdir -p "$fake" "$work/mismatch"
cat >"$fake/TorchConfig.cmake" <<'CMAKE'
set(Torch_FOUND TRUE)
CMAKE
cat >"$fake/TorchConfigVersion.cmake" <<'CMAKE'
set(PACKAGE_VERSION "0.0.1")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
CMAKE
cat >"$work/mismatch/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(gpuperf_mismatch CXX)
find_package(gpuperf REQUIRED)
CMAKE
if cmake -S "$work/mismatch" -B "$work/mismatch/build" -G Ninja --no-warn-unused-cli \
     -DCMAKE_PREFIX_PATH="$work/prefix" -DTorch_DIR="$fake" >"$work/mismatch.log" 2>&1; then
  echo "run.sh: find_package(gpuperf) accepted LibTorch 0.0.1" >&2
  exit 1
fi
if ! grep -q "gpuperf was built with LibTorch" "$work/mismatch.log" ||
   ! grep -q "0.0.1" "$work/mismatch.log"; then
  echo "run.sh: the mismatch error does not name both versions:" >&2
  cat "$work/mismatch.log" >&2
  exit 1
fi
echo "ok: another LibTorch is refused at configure time"
