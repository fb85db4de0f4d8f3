#pragma once
// Include this instead of <catch2/catch.hpp> in tests that use LibTorch. c10 defines glog-style
// CHECK macros (c10/util/logging_is_not_google_glog.h) that abort the process and would silently
// replace Catch's CHECK: take c10's logging header first, drop its CHECK, then let Catch define
// its own. c10's header guard keeps later torch includes from defining it again.
#include <c10/util/Logging.h>
#undef CHECK

#include <catch2/catch.hpp>

#include <torch/cuda.h>

// The first line of every [gpu] and [gpu2] test: without the GPUs it needs, a test stops here
// and CTest reports it SKIPPED (the SKIP_REGULAR_EXPRESSION of tests/CMakeLists.txt matches the
// message), not failed and not passed: a CUDA build on a machine without a GPU, or with one GPU
// for the gpu2 tests.
#define GPUPERF_REQUIRE_GPUS(n)                                          \
  do {                                                                   \
    const auto gpus_found = torch::cuda::device_count();                 \
    if (gpus_found < (n)) {                                              \
      FAIL("SKIPPED: this test needs " << (n) << " CUDA GPU(s), found "  \
                                       << static_cast<int>(gpus_found)); \
    }                                                                    \
  } while (false)
#define GPUPERF_REQUIRE_GPU() GPUPERF_REQUIRE_GPUS(1)
#define GPUPERF_REQUIRE_TWO_GPUS() GPUPERF_REQUIRE_GPUS(2)
