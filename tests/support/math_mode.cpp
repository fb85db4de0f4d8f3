// Every test case of the LibTorch test executables starts with TF32 off for both cuBLAS and
// cuDNN: a test's math mode is its own, never what an earlier case (a tf32 training run sets
// the process-wide switches) or the LibTorch build's default left behind. A case that wants
// TF32 turns it on itself. On a CPU build the switches exist and change nothing.
// Catch2 2.x declares its listener base only for files that ask for the external interfaces.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "testing.h"

#include <ATen/Context.h>

namespace {

struct Tf32OffAtEachTestCase : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& /*info*/) override {
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(Tf32OffAtEachTestCase)
