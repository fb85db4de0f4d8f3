#!/usr/bin/env bash
# gpuperf's set-up in two commands, on a fresh Debian 12 (or any machine with the dependencies):
#   ./gpuperf.sh run [seed_benchmark options]   install what is missing, build, run the seed
#                                               benchmark on the best device present
#   ./gpuperf.sh test                           install what is missing, build, run the tests
# Environment: BUILD_DIR (default build), JOBS (default: all cores). To use another LibTorch
# (e.g. the PyTorch wheel's, with CUDA), set CMAKE_PREFIX_PATH or Torch_DIR before running.
set -euo pipefail
cd "$(dirname "$0")"
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

# Debian packages the build needs (libgloo-dev: the headers of c10d's Gloo process group, for the
# CPU collectives and CPU data-parallel runs; LibTorch carries its symbols); the tests also render
# the HTML report in headless Chromium. libjpeg62-turbo-dev: the CPU JPEG input pipeline (input/).
packages=(cmake ninja-build g++ libtorch-dev libspdlog-dev libfmt-dev catch2 nlohmann-json3-dev
          libcli11-dev libgloo-dev libjpeg62-turbo-dev python3)
# python3: the golden-record and layer checks; procps: pgrep in the data-parallel launch test;
# python3-jsonschema: the checks of every output format against docs/schema; libbenchmark-tools
# and python3-scipy: Google Benchmark's compare.py, reading the --benchmark-json output; clang-14
# and libclang-rt-14-dev (libFuzzer and clang's ASan/UBSan runtimes, which clang-14 only
# recommends): the fuzz tests (tests/fuzz), SKIPPED without them. python3-torch and
# python3-torchvision: gpuperf's ResNet-50 against PyTorch's from torchvision's weights on the CPU
# (benchmarks/python/equivalence.py --device cpu), SKIPPED without them. clang-format-14: the
# format test (tests/tools/check_format.sh), SKIPPED without it.
test_packages=(chromium procps python3-jsonschema libbenchmark-tools python3-scipy clang-14
               libclang-rt-14-dev clang-format-14 python3-torch python3-torchvision)

# Whether python3 imports a torch that carries its LibTorch's CMake package (the PyTorch wheel).
python_torch() {
  command -v python3 >/dev/null &&
    python3 -c 'import os, torch; assert os.path.isdir(os.path.join(torch.utils.cmake_prefix_path, "Torch"))' \
      >/dev/null 2>&1
}

install_missing() {
  if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    echo "gpuperf: no apt-get here; assuming the dependencies are installed" >&2
    return
  fi
  local missing=()
  for p in "${packages[@]}"; do
    # A user-provided LibTorch replaces Debian's, and so does the torch that python3 imports
    # (the build finds it; cmake/GpuperfFindTorch.cmake).
    if [ "$p" = libtorch-dev ] && { [ -n "${CMAKE_PREFIX_PATH:-}${Torch_DIR:-}" ] || python_torch; }; then
      continue
    fi
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "gpuperf: installing ${missing[*]}" >&2
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# build [target...]: configures, then builds the targets given (everything without).
build() {
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  run)
    install_missing
    build seed_benchmark  # only what runs: the tests and other programs build with `test`
    # The record goes to results/ unless the caller chose where (--json PATH, --json=PATH).
    for arg in "$@"; do
      case "$arg" in --json | --json=*) exec "$build_dir/apps/seed_benchmark" "$@" ;; esac
    done
    mkdir -p results
    exec "$build_dir/apps/seed_benchmark" --json results/seed_benchmark.json "$@"
    ;;
  test)
    packages+=("${test_packages[@]}")
    install_missing
    build
    exec ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
    ;;
  *)
    echo "usage: $0 run [seed_benchmark options] | test" >&2
    exit 2
    ;;
esac
