#pragma once
// Include this instead of <catch2/catch.hpp> in tests that use LibTorch. c10 defines glog-style
// CHECK macros (c10/util/logging_is_not_google_glog.h) that abort the process and would silently
// replace Catch's CHECK: take c10's logging header first, drop its CHECK, then let Catch define
// its own. c10's header guard keeps later torch includes from defining it again.
#include <c10/util/Logging.h>
#undef CHECK

#include <catch2/catch.hpp>

#include <torch/cuda.h>

// The first line of every [gpu2] test: with fewer than two CUDA GPUs the test stops here, and
// CTest reports it SKIPPED (the gpu2 tests' SKIP_REGULAR_EXPRESSION matches this message),
// not failed and not passed.
#define GPUPERF_REQUIRE_TWO_GPUS()                                                         \
  do {                                                                                     \
    const auto gpus_found = torch::cuda::device_count();                                   \
    if (gpus_found < 2) FAIL("SKIPPED: this test needs 2 CUDA GPUs, found " << gpus_found); \
  } while (false)
