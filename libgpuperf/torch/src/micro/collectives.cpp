// Collectives through c10d, one thread per rank in this process, each rank with its own
// ProcessGroupNCCL (on cuda:rank) or ProcessGroupGloo (over loopback), sharing a HashStore.
// Timed as nccl-tests times them; see run_collectives() in gpuperf/micro/interconnect.h.
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "comm/c10d_group.h"
#include "compat.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/micro/interconnect.h"
#include "gpuperf/timing/statistics.h"
#include "micro/micro_internal.h"

#if GPUPERF_WITH_GLOO || GPUPERF_WITH_NCCL
#define GPUPERF_WITH_C10D 1
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#else
#define GPUPERF_WITH_C10D 0
#endif
#if GPUPERF_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>  // the backend's complete type
#endif
#if GPUPERF_WITH_NCCL
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>  // the backend's complete type
#endif

namespace gpuperf {

bool collective_backend_available(C10dBackend backend, std::string* reason) {
  std::string why;
  if (backend != C10dBackend::kGloo) {
#if !GPUPERF_WITH_CUDA
    why = "NCCL collectives need a CUDA LibTorch; this build has none";
#elif !GPUPERF_WITH_NCCL
    why =
        "gpuperf was built without NCCL (nccl.h not found at configure time; set NCCL_INCLUDE_DIR)";
#endif
  } else {
#if !GPUPERF_WITH_GLOO
    why =
        "gpuperf was built without Gloo (its headers were not found at configure time, or "
        "GPUPERF_GLOO=OFF; on Debian: apt-get install libgloo-dev)";
#endif
  }
  if (reason) *reason = why;
  return why.empty();
}

void fill_collective_input(Collective c, torch::Tensor& input, int rank, int ranks) {
  if (c == Collective::kReduceScatter) {
    const auto k = torch::arange(1, ranks + 1, input.options()).view({ranks, 1});
    input.view({ranks, -1}).copy_(k * static_cast<double>(rank + 1));
  } else {
    input.fill_(static_cast<double>(rank + 1));
  }
}

std::string check_collective_output(Collective c, const torch::Tensor& output, int rank,
                                    int ranks) {
  const double triangle = ranks * (ranks + 1) / 2.0;
  torch::Tensor expected;
  if (c == Collective::kAllGather) {
    expected = torch::arange(1, ranks + 1, output.options()).view({ranks, 1});
  } else {
    expected = torch::full({1}, c == Collective::kAllReduce ? triangle : triangle * (rank + 1),
                           output.options());
  }
  const torch::Tensor shaped = c == Collective::kAllGather ? output.view({ranks, -1}) : output;
  if (shaped.eq(expected).all().item<bool>()) return "";
  std::ostringstream text;
  text << "rank " << rank << " got values in [" << output.min().item<double>() << ", "
       << output.max().item<double>() << "], expected "
       << (c == Collective::kAllGather ? "1.." + std::to_string(ranks) + " by chunk"
                                       : std::to_string(expected.item<double>()));
  return text.str();
}

void CollectiveOptions::validate() const {
  if (backend == C10dBackend::kAuto) {
    throw ConfigError("CollectiveOptions::backend", "auto",
                      "must be nccl or gloo: the microbenchmark times the backend it is given");
  }
  if (ranks < 2) {
    throw ConfigError("CollectiveOptions::ranks", "must be >= 2, got " + std::to_string(ranks));
  }
  if (collectives.empty()) throw ConfigError("CollectiveOptions.collectives is empty");
  if (sizes.empty()) throw ConfigError("CollectiveOptions.sizes is empty");
  for (double s : sizes) {
    if (!(s > 0)) {
      throw ConfigError("CollectiveOptions::sizes", "must be > 0, got " + std::to_string(s));
    }
  }
  if (!(timeout_seconds > 0)) {
    throw ConfigError("CollectiveOptions::timeout_seconds",
                      "must be > 0, got " + std::to_string(timeout_seconds));
  }
}

namespace {

constexpr double kFloatBytes = 4;

// One collective at one size, as every rank runs it.
struct Plan {
  Collective collective;
  CollectiveBuffers buffers;
};

// What one rank saw, per plan.
struct RankOutcome {
  std::vector<std::vector<double>> window_seconds;  // [plan][window], calls_per_window calls
  std::vector<std::string> unsupported;             // [plan]: the op's refusal
  std::vector<std::string> wrong;                   // [plan]: the check's complaint
  std::exception_ptr error;
};

// A host barrier that a failing rank can abandon, so that the others stop instead of waiting
// forever for it.
class HostBarrier {
 public:
  explicit HostBarrier(int parties) : parties_(parties) {}

  // Waits for every party; false when the run was abandoned.
  bool wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (abandoned_) return false;
    const long generation = generation_;
    if (++waiting_ == parties_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return true;
    }
    cv_.wait(lock, [&] { return generation_ != generation || abandoned_; });
    return generation_ != generation;
  }

  void abandon() {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  const int parties_;
  int waiting_ = 0;
  long generation_ = 0;
  bool abandoned_ = false;
};

std::string size_key(double bytes) {
  std::string text = format_exact_bytes(bytes);
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

#if GPUPERF_WITH_C10D

// One call of the collective, waited for as torch.distributed's synchronous calls wait: for
// NCCL the current stream waits for NCCL's (no host block), for Gloo the host waits.
std::function<void()> make_call(detail::C10dGroup& group, C10dBackend backend, Collective c,
                                torch::Tensor& input, torch::Tensor& output, int ranks) {
  compat::C10dBackend& pg = *group.backend;
  const bool flat = backend == C10dBackend::kNccl;  // NCCL takes flat buffers directly
  switch (c) {
    case Collective::kAllReduce:
      return [&pg, &input] {
        std::vector<at::Tensor> tensors{input};
        pg.allreduce(tensors)->wait();
      };
    case Collective::kAllGather:
      if (flat) return [&pg, &input, &output] { pg._allgather_base(output, input)->wait(); };
      return [&pg, &input, &output, ranks] {
        std::vector<std::vector<at::Tensor>> outputs{output.chunk(ranks)};
        std::vector<at::Tensor> inputs{input};
        pg.allgather(outputs, inputs)->wait();
      };
    case Collective::kReduceScatter:
      if (flat) return [&pg, &input, &output] { pg._reduce_scatter_base(output, input)->wait(); };
      return [&pg, &input, &output, ranks] {
        std::vector<at::Tensor> outputs{output};
        std::vector<std::vector<at::Tensor>> inputs{input.chunk(ranks)};
        pg.reduce_scatter(outputs, inputs)->wait();
      };
  }
  throw ConfigError("unknown collective");
}

// Everything queued on this rank's device has run (the host barrier then lines ranks up).
void drain(const torch::Device& device) {
#if GPUPERF_WITH_NCCL
  if (device.is_cuda()) c10::cuda::getCurrentCUDAStream(device.index()).synchronize();
#else
  (void)device;
#endif
}

void run_rank(int rank, const CollectiveOptions& o, const MicroOptions& timing,
              const std::vector<Plan>& plans, const c10::intrusive_ptr<c10d::Store>& store,
              HostBarrier& barrier, RankOutcome& out) {
  const bool nccl = o.backend == C10dBackend::kNccl;
  const torch::Device device =
      nccl ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank))
           : torch::Device(torch::kCPU);
#if GPUPERF_WITH_NCCL
  std::optional<c10::cuda::CUDAGuard> guard;
  if (nccl) guard.emplace(static_cast<c10::DeviceIndex>(rank));
#endif
  // The in-process ranks meet over loopback.
  detail::C10dGroup group = detail::make_c10d_group(
      o.backend, store, rank, o.ranks,
      std::chrono::milliseconds(static_cast<long long>(o.timeout_seconds * 1e3)), true);
  auto timer = detail::timer_for(device);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  out.window_seconds.assign(plans.size(), {});
  out.unsupported.assign(plans.size(), "");
  out.wrong.assign(plans.size(), "");
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const Plan& plan = plans[p];
    torch::Tensor input = torch::empty({plan.buffers.input_elements}, f32);
    torch::Tensor output = plan.collective == Collective::kAllReduce
                               ? input
                               : torch::empty({plan.buffers.output_elements}, f32);
    const auto call = make_call(group, o.backend, plan.collective, input, output, o.ranks);
    // The first call is the check; an op the backend lacks refuses here, on every rank alike.
    try {
      fill_collective_input(plan.collective, input, rank, o.ranks);
      call();
      if (o.check_results)
        out.wrong[p] = check_collective_output(plan.collective, output, rank, o.ranks);
    } catch (const c10::Error& e) {
      out.unsupported[p] = detail::first_line(e.what_without_backtrace());
      continue;
    }
    for (int i = 0; i < timing.warmup; ++i) call();
    for (int w = 0; w < timing.windows; ++w) {
      // An all-reduce in place multiplies its data by the rank count per call: start each
      // window from the inputs, untimed, so that long windows never reach inf.
      fill_collective_input(plan.collective, input, rank, o.ranks);
      drain(device);
      if (!barrier.wait()) throw Error("another rank failed");
      timer->clear();
      const std::size_t start = timer->mark();
      for (int i = 0; i < timing.calls_per_window; ++i) call();
      const std::size_t stop = timer->mark();
      out.window_seconds[p].push_back(timer->seconds(start, stop));
    }
  }
  // Every rank is done with every collective before any group shuts down.
  if (!barrier.wait()) throw Error("another rank failed");
  drain(device);
  if (group.shutdown) group.shutdown();
}

#endif  // GPUPERF_WITH_C10D

}  // namespace

namespace {

// Every rank on its own thread, all sharing one in-process store; a rank that fails abandons
// the barrier so that the others stop. Rethrows the first rank's error.
std::vector<RankOutcome> run_ranks(const CollectiveOptions& o, const MicroOptions& timing,
                                   const std::vector<Plan>& plans) {
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(o.ranks));
#if GPUPERF_WITH_C10D
  const c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::HashStore>();
  HostBarrier barrier(o.ranks);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(o.ranks));
  for (int rank = 0; rank < o.ranks; ++rank) {
    threads.emplace_back([&, rank] {
      RankOutcome& out = outcomes[static_cast<std::size_t>(rank)];
      try {
        run_rank(rank, o, timing, plans, store, barrier, out);
      } catch (...) {
        out.error = std::current_exception();
        barrier.abandon();
      }
    });
  }
  for (auto& t : threads) t.join();
#endif
  for (const RankOutcome& out : outcomes) {
    if (out.error) std::rethrow_exception(out.error);
  }
  return outcomes;
}

// The result row of plan `p`: nccl-tests' bus bandwidth per window, from the slowest rank.
MicroResult collective_result(const Plan& plan, std::size_t p,
                              const std::vector<RankOutcome>& outcomes, const CollectiveOptions& o,
                              const MicroOptions& timing, const std::string& label) {
  MicroResult r;
  r.category = "collective";
  r.variant = to_string(plan.collective);
  r.name = "collective/" + r.variant + "/" + size_key(plan.buffers.size_bytes);
  r.shape = format_exact_bytes(plan.buffers.size_bytes);
  r.buffer_bytes = plan.buffers.size_bytes;
  r.work_per_call = plan.buffers.size_bytes;
  r.unit = "GB/s";
  r.unit_scale = 1e9;
  r.operand_sets = 1;
  r.warmup_calls = timing.warmup;
  r.calls_per_window = timing.calls_per_window;
  r.note = label + (plan.collective == Collective::kAllGather ? "; fp32" : "; fp32 sum") +
           "; busbw (nccl-tests)";
  for (const RankOutcome& out : outcomes) {
    if (!out.wrong[p].empty()) {
      throw Error(r.variant + " of " + r.shape + " over " + std::to_string(o.ranks) + " ranks (" +
                  to_string(o.backend) + ") gave a wrong result: " + out.wrong[p]);
    }
    if (!out.unsupported[p].empty() && r.ok()) r.status = "unsupported: " + out.unsupported[p];
  }
  const double factor = bus_bandwidth_factor(plan.collective, o.ranks);
  r.figures = {{"bus_factor", factor}, {"ranks", o.ranks}};
  if (!r.ok()) return r;
  std::vector<double> seconds;
  std::vector<double> algbw;
  for (int w = 0; w < timing.windows; ++w) {
    std::vector<double> per_rank;
    per_rank.reserve(outcomes.size());
    for (const RankOutcome& out : outcomes)
      per_rank.push_back(out.window_seconds[p][static_cast<std::size_t>(w)]);
    const double t = collective_seconds(per_rank, timing.calls_per_window);
    seconds.push_back(t * 1e6);
    algbw.push_back(plan.buffers.size_bytes / t / 1e9);
    r.windows.push_back(algbw.back() * factor);
  }
  r.summary = summarize(r.windows);
  r.figures.insert(r.figures.begin(), {{"algbw_gb_s", summarize(algbw).median},
                                       {"time_us", summarize(seconds).median}});
  return r;
}

}  // namespace

std::vector<MicroResult> run_collectives(const CollectiveOptions& o, const MicroOptions& timing) {
  o.validate();
  timing.validate();
  std::string reason;
  if (!collective_backend_available(o.backend, &reason)) throw ConfigError(reason);
  const bool nccl = o.backend == C10dBackend::kNccl;
  if (nccl && o.ranks > cuda_device_count()) {
    throw ConfigError("NCCL collectives over " + std::to_string(o.ranks) + " ranks need " +
                      std::to_string(o.ranks) + " GPUs, found " +
                      std::to_string(cuda_device_count()));
  }
  std::vector<Plan> plans;
  for (Collective c : o.collectives) {
    for (double s : o.sizes) plans.push_back({c, collective_buffers(c, s, o.ranks, kFloatBytes)});
  }
  const std::vector<RankOutcome> outcomes = run_ranks(o, timing, plans);
  const std::string label = nccl ? "ProcessGroupNCCL over " + std::to_string(o.ranks) + " GPUs"
                                 : "CPU, Gloo over loopback: not an interconnect";
  std::vector<MicroResult> results;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    results.push_back(collective_result(plans[p], p, outcomes, o, timing, label));
  }
  return results;
}

}  // namespace gpuperf
