// ProcessGroup over c10d. Only this translation unit includes c10d's process-group headers,
// which compile only with USE_C10D_GLOO / USE_C10D_NCCL defined (libgpuperf/CMakeLists.txt).
#include "gpuperf/comm/process_group.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <string>
#include <thread>
#include <stdexcept>
#include <future>
#include <utility>
#include <vector>

#include "comm/c10d_group.h"
#include "compat.h"
#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"

#if GPUPERF_WITH_GLOO || GPUPERF_WITH_NCCL
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#endif
#if GPUPERF_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if GPUPERF_WITH_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace gpuperf {

#if GPUPERF_WITH_GLOO || GPUPERF_WITH_NCCL

struct ProcessGroup::Impl {
  LaunchEnv env;
  std::string backend_name;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::C10dBackend> group;
  std::function<void()> shutdown;

  void adopt(detail::C10dGroup made) {
    group = std::move(made.backend);
    shutdown = std::move(made.shutdown);
    backend_name = std::move(made.name);
  }

  void reduce(torch::Tensor& tensor, c10d::ReduceOp::RedOpType op) const {
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp(op);
    wait(group->allreduce(tensors, options), "an all-reduce");
  }

  // Waits for a collective; a failure becomes one line naming this rank, the collective and
  // what c10d said, without Gloo's source location ("[./gloo/transport/tcp/pair.cc:589] ").
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) const {
    try {
      work->wait();
    } catch (const std::exception& e) {
      std::string said = e.what();
      said = said.substr(0, said.find('\n'));
      if (!said.empty() && said.front() == '[') {
        const std::size_t close = said.find("] ");
        if (close != std::string::npos) said = said.substr(close + 2);
      }
      const bool gone = said.find("reset by peer") != std::string::npos ||
                        said.find("closed by peer") != std::string::npos;
      throw Error(
          "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) + ": " +
          what + " with the other ranks failed (" + backend_name + ")" +
          (gone ? ": another rank has gone (its process ended or lost the connection)" : "") +
          ": " + said);
    }
  }
};

namespace {

// The one error of a rendezvous that failed: which rank, where, the timeout, and the first line
// of c10d's own words (Gloo's run to several lines).
[[noreturn]] void rendezvous_failed(const LaunchEnv& env, double timeout_seconds,
                                    const std::string& step, const std::exception& e) {
  std::string what = e.what();
  what = what.substr(0, what.find('\n'));
  throw Error("rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) + ": " +
              step + " at " + env.master_addr + ":" + std::to_string(env.master_port) +
              " failed (timeout " + format_number(timeout_seconds, 3) + " s): " + what);
}

}  // namespace

namespace {

bool is_loopback(const std::string& address) {
  return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

// What join_store() waits beyond the timeout before it gives up on c10d: the client's own
// connection retries end at the timeout; this is only for a peer that never answers.
constexpr std::chrono::seconds kStoreGrace{5};

// Rank 0 serves the TCPStore, unless torchrun's agent already does (then every rank is a client
// under the agent's prefix, as in torch.distributed's env:// rendezvous). c10d's client waits
// for the server's first answer without a deadline: a program that accepts on MASTER_PORT and
// never answers would hold the rank forever. The store is therefore joined on a thread of its own;
// past the timeout and a grace the rank fails naming the address, and that thread is left
// blocked behind (the rank is about to fail).
c10::intrusive_ptr<c10d::Store> join_store(const LaunchEnv& env,
                                           std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(env.master_port);
  options.isServer = env.rank == 0 && !env.agent_store;
  options.numWorkers = static_cast<std::size_t>(env.world_size);
  options.waitWorkers = true;
  options.timeout = timeout;
  const std::string step = env.agent_store ? "joining torchrun's agent store" : "joining the store";
  const double seconds = static_cast<double>(timeout.count()) / 1e3;
  using Joined = c10::intrusive_ptr<c10d::Store>;
  auto joined = std::make_shared<std::promise<Joined>>();
  std::future<Joined> result = joined->get_future();
  std::thread([joined, address = env.master_addr, options] {
    try {
      joined->set_value(c10::make_intrusive<c10d::TCPStore>(address, options));
    } catch (...) {
      joined->set_exception(std::current_exception());
    }
  }).detach();
  if (result.wait_for(timeout + kStoreGrace) != std::future_status::ready) {
    rendezvous_failed(env, seconds, step,
                      std::runtime_error("no answer from the store within the timeout and " +
                                         std::to_string(kStoreGrace.count()) +
                                         " s: is another program holding the port?"));
  }
  try {
    Joined store = result.get();
    if (!env.agent_store) return store;
    return c10::make_intrusive<c10d::PrefixStore>(env.store_prefix, std::move(store));
  } catch (const std::exception& e) {
    rendezvous_failed(env, seconds, step, e);
  }
}

// ---- Agreement at the rendezvous ----------------------------------------------------------------
// Before any collective, on the store: every rank claims its rank (a second claimant is another
// job's process), checks that the store is its own job's, and compares its settings with rank
// 0's; each rank's verdict goes to the store, rank 0 sums them up into one outcome, and every
// rank ends with that outcome: a ConfigError naming the first differing field, or an Error
// naming the rank, never a Gloo abort or a job trained with another's ranks.

constexpr char kUnit = '\x1f';    // between a field and its value
constexpr char kRecord = '\x1e';  // between settings

std::vector<std::uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }
std::string text_of(const std::vector<std::uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

std::string encode(const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string out;
  for (const auto& [field, value] : settings) {
    out += field;
    out += kUnit;
    out += value;
    out += kRecord;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> decode(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find(kRecord, start)) != std::string::npos; start = end + 1) {
    const std::string item = text.substr(start, end - start);
    const std::size_t unit = item.find(kUnit);
    out.emplace_back(item.substr(0, unit), unit == std::string::npos ? "" : item.substr(unit + 1));
  }
  return out;
}

// The verdict on a setting `field` that is `mine` here and `theirs` on rank 0.
std::string differs(const std::string& field, const std::string& mine, const std::string& theirs) {
  return "S" + field + kUnit + mine + kUnit + theirs;
}

// "" when `mine` is rank 0's; otherwise a verdict "S<field>\x1f<mine>\x1f<rank 0's>".
std::string compare_settings(const std::vector<std::pair<std::string, std::string>>& mine,
                             const std::vector<std::pair<std::string, std::string>>& theirs) {
  const std::size_t n = std::max(mine.size(), theirs.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string field = i < mine.size() ? mine[i].first : theirs[i].first;
    const std::string a = i < mine.size() ? mine[i].second : "(not set)";
    const std::string b =
        i < theirs.size() && theirs[i].first == field ? theirs[i].second : "(not set)";
    if (a != b) return differs(field, a, b);
  }
  return "";
}

// Throws what a verdict says, as rank `rank`'s (`here`: this process is that rank).
[[noreturn]] void throw_verdict(const std::string& verdict, int rank, int here) {
  if (verdict[0] == 'S') {
    const std::size_t one = verdict.find(kUnit);
    const std::size_t two = verdict.find(kUnit, one + 1);
    const std::string field = verdict.substr(1, one - 1);
    const std::string value = verdict.substr(one + 1, two - one - 1);
    const std::string zero = verdict.substr(two + 1);
    const std::string r = std::to_string(rank);
    throw ConfigError(field, "differs between the ranks: " + value + " on rank " + r +
                                 (here == rank ? " (here)" : "") + ", " + zero + " on rank 0" +
                                 (here == 0 ? " (here)" : "") +
                                 "; every rank must run the same settings");
  }
  throw Error(verdict.substr(1));
}

void agree(c10d::Store& store, const LaunchEnv& env, const ProcessGroupOptions& options) {
  const std::string me = std::to_string(env.rank);
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  const std::string job = env.job_id.empty() ? "(no job id)" : "'" + env.job_id + "'";
  std::string verdict = "ok";
  if (store.add("gpuperf/claimed/" + me, 1) > 1) {
    // Another process holds this rank already: this one is not the job's, and says so alone.
    throw Error("rank " + me + " of job " + job + ": another process already joined the store at " +
                where + " as rank " + me + " (another job on the same MASTER_PORT?)");
  }
  if (env.rank == 0) {
    store.set("gpuperf/job", bytes_of(env.job_id));
    store.set("gpuperf/settings", bytes_of(encode(options.settings)));
  } else {
    const std::string theirs = text_of(store.get("gpuperf/job"));
    if (theirs != env.job_id) {
      verdict = "Erank " + me + " of job " + job + " reached the store of job " +
                (theirs.empty() ? "(no job id)" : "'" + theirs + "'") + " at " + where +
                " (another job on the same MASTER_PORT?)";
    } else if (const std::string d = compare_settings(
                   options.settings, decode(text_of(store.get("gpuperf/settings"))));
               !d.empty()) {
      verdict = d;
    }
  }
  store.set("gpuperf/verdict/" + me, bytes_of(verdict));
  if (verdict != "ok") throw_verdict(verdict, env.rank, env.rank);
  if (env.rank == 0) {
    std::string outcome = "ok";
    int from = 0;
    for (int r = 1; r < env.world_size && outcome == "ok"; ++r) {
      const std::string v = text_of(store.get("gpuperf/verdict/" + std::to_string(r)));
      if (v != "ok") {
        outcome = v;
        from = r;
      }
    }
    for (int r = 1; r < env.world_size && outcome == "ok"; ++r) {
      if (store.add("gpuperf/claimed/" + std::to_string(r), 0) > 1) {
        outcome = "Erank " + std::to_string(r) + " was claimed by two processes at " + where +
                  " (another job on the same MASTER_PORT?)";
        from = r;
      }
    }
    store.set("gpuperf/outcome", bytes_of(std::to_string(from) + kUnit + outcome));
  }
  const std::string outcome = text_of(store.get("gpuperf/outcome"));
  const std::size_t unit = outcome.find(kUnit);
  const std::string what = outcome.substr(unit + 1);
  if (what != "ok") throw_verdict(what, std::stoi(outcome.substr(0, unit)), env.rank);
}

// agree() with c10d's store errors (a timeout, a lost connection) as one rendezvous error.
void agree_or_fail(c10d::Store& store, const LaunchEnv& env, const ProcessGroupOptions& options) {
  try {
    agree(store, env, options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    rendezvous_failed(env, options.timeout_seconds, "agreeing on the job and its settings", e);
  }
}

}  // namespace

void ProcessGroupOptions::validate() const {
  if (!(timeout_seconds >= 1e-3 && timeout_seconds <= 86400)) {
    throw ConfigError(
        "ProcessGroupOptions::timeout_seconds",
        "must be >= 0.001 and <= 86400 (a day), got " + std::to_string(timeout_seconds));
  }
}

ProcessGroup::ProcessGroup(const LaunchEnv& env, const torch::Device& device,
                           const ProcessGroupOptions& options)
    : impl_(std::make_unique<Impl>()) {
  options.validate();
  impl_->env = env;
  const C10dBackend backend = resolve_c10d_backend(options.backend, device);
  if (backend == C10dBackend::kNccl && !device.is_cuda()) {
    throw ConfigError("ProcessGroupOptions::backend", "nccl",
                      "NCCL needs CUDA devices; device is " + device.str());
  }
  const auto timeout =
      std::max(std::chrono::milliseconds(std::llround(options.timeout_seconds * 1e3)),
               std::chrono::milliseconds(1));
  if (backend == C10dBackend::kGloo) {
#if GPUPERF_WITH_GLOO
    impl_->store = join_store(env, timeout);
    agree_or_fail(*impl_->store, env, options);
    // Gloo's contexts keep the timeout they were connected with for every later collective, so
    // the connection gets the whole timeout too: a rendezvous waits at most twice it (the store,
    // then the connections) and fails with one error naming the rank.
    try {
      impl_->adopt(detail::make_c10d_group(C10dBackend::kGloo, impl_->store, env.rank,
                                           env.world_size, timeout, is_loopback(env.master_addr)));
    } catch (const std::exception& e) {
      rendezvous_failed(env, options.timeout_seconds, "connecting the Gloo group", e);
    }
    return;
#else
    throw ConfigError(
        "gpuperf was built without Gloo (on Debian: apt-get install libgloo-dev): no CPU "
        "data-parallel training");
#endif
  }
#if GPUPERF_WITH_NCCL
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(device.index()));
  impl_->store = join_store(env, timeout);
  agree_or_fail(*impl_->store, env, options);
  impl_->adopt(detail::make_c10d_group(C10dBackend::kNccl, impl_->store, env.rank, env.world_size,
                                       timeout, is_loopback(env.master_addr)));
#else
  throw ConfigError(
      "gpuperf was built without NCCL (nccl.h not found at configure time): no GPU "
      "data-parallel training");
#endif
}

ProcessGroup::~ProcessGroup() {
  if (impl_ && impl_->shutdown) {
    try {
      impl_->shutdown();
    } catch (...) {  // a failed shutdown at exit must not terminate the process
    }
  }
}

int ProcessGroup::rank() const { return impl_->env.rank; }
int ProcessGroup::world_size() const { return impl_->env.world_size; }
const LaunchEnv& ProcessGroup::env() const { return impl_->env; }
std::string ProcessGroup::backend_name() const { return impl_->backend_name; }

PendingCollective ProcessGroup::allreduce_sum_async(torch::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  c10::intrusive_ptr<c10d::Work> work = impl_->group->allreduce(tensors);
  const Impl* impl = impl_.get();  // the group outlives its pending collectives
  return [work, impl] { impl->wait(work, "an all-reduce of gradients"); };
}

void ProcessGroup::allreduce_sum(torch::Tensor& tensor) {
  impl_->reduce(tensor, c10d::ReduceOp::SUM);
}
void ProcessGroup::allreduce_max(torch::Tensor& tensor) {
  impl_->reduce(tensor, c10d::ReduceOp::MAX);
}
void ProcessGroup::allreduce_min(torch::Tensor& tensor) {
  impl_->reduce(tensor, c10d::ReduceOp::MIN);
}

void ProcessGroup::broadcast(torch::Tensor& tensor, int root) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  impl_->wait(impl_->group->broadcast(tensors, options), "a broadcast");
}

void ProcessGroup::barrier() { impl_->wait(impl_->group->barrier(), "a barrier"); }

#else  // no c10d backend built in

struct ProcessGroup::Impl {
  LaunchEnv env;
};

ProcessGroup::ProcessGroup(const LaunchEnv&, const torch::Device&, ProcessGroupOptions) {
  throw ConfigError(
      "gpuperf was built without c10d collectives (no Gloo headers, no NCCL): no data-parallel "
      "training (on Debian: apt-get install libgloo-dev)");
}
ProcessGroup::~ProcessGroup() = default;
int ProcessGroup::rank() const { return impl_->env.rank; }
int ProcessGroup::world_size() const { return impl_->env.world_size; }
const LaunchEnv& ProcessGroup::env() const { return impl_->env; }
std::string ProcessGroup::backend_name() const { return ""; }
PendingCollective ProcessGroup::allreduce_sum_async(torch::Tensor&) {
  return [] {};
}
void ProcessGroup::allreduce_sum(torch::Tensor&) {}
void ProcessGroup::allreduce_max(torch::Tensor&) {}
void ProcessGroup::allreduce_min(torch::Tensor&) {}
void ProcessGroup::broadcast(torch::Tensor&, int) {}
void ProcessGroup::barrier() {}

#endif

ProcessGroup::ProcessGroup(ProcessGroup&&) noexcept = default;
ProcessGroup& ProcessGroup::operator=(ProcessGroup&&) noexcept = default;

}  // namespace gpuperf
