// make_c10d_group(): with its two callers, the only translation units that include c10d's
// process-group headers. Defined only in builds with Gloo or NCCL; the callers call it only there.
#include "comm/c10d_group.h"

#include "gpuperf/base/error.h"

#if GPUPERF_WITH_GLOO || GPUPERF_WITH_NCCL
#include <torch/csrc/distributed/c10d/Store.hpp>
#endif
#if GPUPERF_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if GPUPERF_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#if GPUPERF_WITH_GLOO || GPUPERF_WITH_NCCL

namespace gpuperf::detail {

C10dGroup make_c10d_group(C10dBackend backend, const c10::intrusive_ptr<c10d::Store>& store,
                          int rank, int size, std::chrono::milliseconds timeout, bool loopback) {
  if (backend == C10dBackend::kGloo) {
#if GPUPERF_WITH_GLOO
    // Gloo's contexts keep the timeout they were connected with for every later collective.
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // By address on one machine: createDefaultDevice() resolves the host name, which fails in
    // chroots and containers without one.
    options->devices.push_back(loopback
                                   ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                   : c10d::ProcessGroupGloo::createDefaultDevice());
    return {c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options), {}, "gloo"};
#else
    throw ConfigError(
        "gpuperf was built without Gloo (its headers were not found at configure time; on "
        "Debian: apt-get install libgloo-dev)");
#endif
  }
  if (backend == C10dBackend::kNccl) {
#if GPUPERF_WITH_NCCL
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
    C10dGroup group{nccl, {}, "nccl"};
#if GPUPERF_NCCL_HAS_SHUTDOWN
    group.shutdown = [nccl] { nccl->shutdown(); };
#endif
    return group;
#else
    throw ConfigError("gpuperf was built without NCCL (nccl.h not found at configure time)");
#endif
  }
  throw ConfigError("make_c10d_group: the backend " + to_string(backend) +
                    " is not resolved to gloo or nccl");
}

}  // namespace gpuperf::detail

#endif  // GPUPERF_WITH_GLOO || GPUPERF_WITH_NCCL
