#pragma once
// The one place gpuperf makes c10d's process groups (Gloo, NCCL): the launched job's
// ProcessGroup (comm/process_group.cpp) and the in-process ranks of the collectives
// microbenchmark (micro/collectives.cpp) both get theirs here. Compiled with USE_C10D_GLOO /
// USE_C10D_NCCL (libgpuperf/CMakeLists.txt), as the process-group headers need.
#include <chrono>
#include <functional>
#include <string>

#include "compat.h"
#include "gpuperf/comm/backend.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace gpuperf::detail {

/// A rank's c10d process group and how to shut it down.
struct C10dGroup {
  c10::intrusive_ptr<compat::C10dBackend> backend;
  /// ProcessGroupNCCL wants shutdown() before it is destroyed (LibTorch 2.4+); empty otherwise.
  std::function<void()> shutdown;
  /// "gloo" or "nccl".
  std::string name;
};

/// Rank `rank` of `size` over `store`: Gloo (over 127.0.0.1 with `loopback`, else the host's
/// default device) or NCCL (on the current CUDA device), connecting and every later collective
/// bounded by `timeout`. `backend` is resolved (not kAuto). ConfigError naming the backend when
/// this build lacks it; c10d's own error when the group cannot connect.
[[nodiscard]] C10dGroup make_c10d_group(C10dBackend backend,
                                        const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                        int size, std::chrono::milliseconds timeout, bool loopback);

}  // namespace gpuperf::detail
