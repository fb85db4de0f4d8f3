// Data-parallel training: the launchers' environments, and the averaged gradients against the
// full-batch gradient in fp64 (two ranks as two threads over Gloo on loopback).
#include "testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/nn/functional/loss.h>
#include <torch/cuda.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/linear.h>
#if GPUPERF_TEST_GLOO
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/distributed/data_parallel.h"
#include "gpuperf/comm/launch_env.h"
#include "gpuperf/comm/process_group.h"
#include "gpuperf/train/train_step.h"

namespace {

using Catch::Matchers::Contains;

std::optional<gpuperf::LaunchEnv> read(const std::map<std::string, std::string>& vars) {
  return gpuperf::read_launch_env([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

// A TCP socket bound to a free loopback port; the port in `port`.
int bound_loopback_socket(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  port = ntohs(address.sin_port);
  return fd;
}

int free_port() {
  int port = 0;
  ::close(bound_loopback_socket(port));
  return port;
}

gpuperf::LaunchEnv two_rank_env(int rank, int port) {
  gpuperf::LaunchEnv env;
  env.rank = rank;
  env.world_size = 2;
  env.local_rank = rank;
  env.local_world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  return env;
}

// Runs `body(rank)` as ranks 0 and 1 on two threads; the exceptions' messages, by rank.
std::vector<std::string> run_two_ranks(const std::function<void(int)>& body) {
  std::vector<std::string> errors(2);
  auto guarded = [&](int rank) {
    try {
      body(rank);
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread other(guarded, 1);
  guarded(0);
  other.join();
  return errors;
}

// The fp64 reference: one model, the whole batch, the mean loss.
struct Reference {
  torch::Tensor x, y;
  torch::nn::Linear model{5, 3};
  explicit Reference(torch::Device device) {
    torch::manual_seed(7);
    x = torch::randn({8, 5}, torch::kFloat64).to(device);
    y = torch::randint(0, 3, {8}).to(device);
    model->to(device, torch::kFloat64);
    torch::nn::functional::cross_entropy(model(x), y).backward();
  }
};

// Two ranks, each on half the batch, through DataParallelSync; checks the broadcast and the
// averaged gradients against the reference.
void check_two_rank_gradients(torch::Device device0, torch::Device device1,
                              gpuperf::C10dBackend backend) {
  const Reference ref(device0);
  const int port = free_port();
  std::vector<torch::Tensor> weight_grads(2), bias_grads(2), weights(2);
  const auto errors = run_two_ranks([&](int rank) {
    const torch::Device device = rank == 0 ? device0 : device1;
    gpuperf::ProcessGroupOptions options;
    options.timeout_seconds = 30;
    options.backend = backend;
    gpuperf::ProcessGroup group(two_rank_env(rank, port), device, options);
    torch::nn::Linear model(5, 3);  // rank 1's own initial weights differ
    model->to(device, torch::kFloat64);
    if (rank == 0) {
      torch::NoGradGuard no_grad;
      model->weight.copy_(ref.model->weight);
      model->bias.copy_(ref.model->bias);
    }
    gpuperf::DataParallelOptions dp;
    dp.bucket_bytes = 64;  // several buckets, so their launch order matters
    gpuperf::DataParallelSync sync(*model, group, dp);
    const torch::Tensor half = ref.x.narrow(0, 4 * rank, 4).to(device);
    const torch::Tensor target = ref.y.narrow(0, 4 * rank, 4).to(device);
    torch::nn::functional::cross_entropy(model(half), target).backward();
    sync.after_backward();
    weight_grads[rank] = model->weight.grad().to(device0);
    bias_grads[rank] = model->bias.grad().to(device0);
    weights[rank] = model->weight.detach().to(device0);
  });
  INFO(errors[0] << " / " << errors[1]);
  REQUIRE((errors[0].empty() && errors[1].empty()));
  CHECK(torch::equal(weights[1], ref.model->weight.detach()));  // broadcast from rank 0
  for (int rank = 0; rank < 2; ++rank) {
    CHECK(torch::allclose(weight_grads[rank], ref.model->weight.grad(), 1e-12, 1e-12));
    CHECK(torch::allclose(bias_grads[rank], ref.model->bias.grad(), 1e-12, 1e-12));
  }
}

}  // namespace

TEST_CASE("No launcher variable, or a one-task job, means a single process", "[dist]") {
  CHECK_FALSE(read({}).has_value());
  CHECK_FALSE(read({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}).has_value());
  CHECK_FALSE(read({{"RANK", "0"}, {"WORLD_SIZE", "1"}}).has_value());
}

TEST_CASE("torchrun's, Open MPI's and Slurm's variables give the rank and the rendezvous",
          "[dist]") {
  const auto t = read({{"RANK", "3"},
                       {"WORLD_SIZE", "8"},
                       {"LOCAL_RANK", "1"},
                       {"LOCAL_WORLD_SIZE", "2"},
                       {"MASTER_ADDR", "node0"},
                       {"MASTER_PORT", "1234"}});
  REQUIRE(t.has_value());
  CHECK(t->launcher == "torchrun");
  CHECK((t->rank == 3 && t->world_size == 8 && t->local_rank == 1 && t->local_world_size == 2));
  CHECK((t->master_addr == "node0" && t->master_port == 1234));

  // Open MPI without its local size: not known to be one machine, so the address is needed.
  CHECK_THROWS_WITH(read({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
                    Contains("MASTER_ADDR is not set"));
  const auto m = read({{"OMPI_COMM_WORLD_RANK", "1"},
                       {"OMPI_COMM_WORLD_SIZE", "2"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  REQUIRE(m.has_value());
  CHECK(m->launcher == "mpi");
  CHECK((m->rank == 1 && m->master_addr == "127.0.0.1" && m->master_port == 29500));

  const auto s = read({{"SLURM_PROCID", "5"},
                       {"SLURM_NTASKS", "16"},
                       {"SLURM_LOCALID", "1"},
                       {"SLURM_NTASKS_PER_NODE", "4(x4)"},
                       {"MASTER_ADDR", "gpu-a"}});
  REQUIRE(s.has_value());
  CHECK(
      (s->launcher == "slurm" && s->rank == 5 && s->local_rank == 1 && s->master_addr == "gpu-a"));
  const auto one_node = read({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_NNODES", "1"}});
  REQUIRE(one_node.has_value());
  CHECK((one_node->master_addr == "127.0.0.1" && one_node->local_world_size == 2));

  // torchrun inside an srun step: the innermost launcher's variables win.
  const auto nested = read({{"RANK", "2"},
                            {"WORLD_SIZE", "4"},
                            {"SLURM_PROCID", "0"},
                            {"SLURM_NTASKS", "2"},
                            {"MASTER_ADDR", "a"}});
  REQUIRE(nested.has_value());
  CHECK((nested->launcher == "torchrun" && nested->rank == 2));
}

TEST_CASE("Under torchrun's agent store every rank joins as a client under the attempt's prefix",
          "[dist]") {
  std::map<std::string, std::string> vars{
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_PORT", "1234"}};
  const auto own = read(vars);  // --standalone, --rdzv-backend c10d: rank 0 serves the store
  REQUIRE(own.has_value());
  CHECK((!own->agent_store && own->store_prefix.empty()));
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  vars["TORCHELASTIC_RESTART_COUNT"] = "0";
  CHECK_FALSE(read(vars)->agent_store);

  vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";  // plain torchrun (static rendezvous)
  vars["TORCHELASTIC_RESTART_COUNT"] = "2";
  const auto agent = read(vars);
  REQUIRE(agent.has_value());
  CHECK((agent->launcher == "torchrun" && agent->agent_store));
  CHECK(agent->store_prefix == "/worker/attempt_2");
  CHECK((agent->master_addr == "127.0.0.1" && agent->master_port == 1234));

  // gpuperf's own launcher serves its store itself whatever it inherited.
  vars["GPUPERF_LAUNCHER"] = "gpuperf";
  CHECK_FALSE(read(vars)->agent_store);
}

TEST_CASE("Missing or contradictory launcher variables are refused by name", "[dist]") {
  CHECK_THROWS_WITH(read({{"RANK", "0"}}), Contains("WORLD_SIZE"));
  CHECK_THROWS_WITH(read({{"RANK", "4"}, {"WORLD_SIZE", "4"}}), Contains("RANK='4'"));
  CHECK_THROWS_WITH(read({{"RANK", "x"}, {"WORLD_SIZE", "4"}}), Contains("RANK='x'"));
  // Digits only: what strtol would have read as a number is refused.
  for (const char* odd : {" +0", "+0", "0x1", " 1", "1 ", "-0", ""}) {
    INFO("RANK='" << odd << "'");
    CHECK_THROWS_WITH(read({{"RANK", odd}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "2"}}),
                      Contains("RANK='" + std::string(odd) + "'"));
  }
  // A world without this process's rank is refused, not run as one process.
  CHECK_THROWS_WITH(read({{"WORLD_SIZE", "2"}}), Contains("WORLD_SIZE='2' is set but RANK is not"));
  CHECK_THROWS_WITH(read({{"OMPI_COMM_WORLD_SIZE", "4"}}),
                    Contains("OMPI_COMM_WORLD_SIZE='4' is set but OMPI_COMM_WORLD_RANK is not"));
  CHECK_FALSE(read({{"WORLD_SIZE", "1"}}).has_value());  // one process, as it says
  CHECK_THROWS_WITH(
      read({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}),
      Contains("LOCAL_RANK=2") && Contains("LOCAL_WORLD_SIZE"));
  CHECK_THROWS_WITH(read({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}}),
                    Contains("MASTER_ADDR is not set"));
  CHECK_THROWS_WITH(read({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}),
                    Contains("MASTER_PORT='70000'"));
  CHECK_THROWS_WITH(read({{"RANK", "0"},
                          {"WORLD_SIZE", "2"},
                          {"LOCAL_WORLD_SIZE", "2"},
                          {"TORCHELASTIC_USE_AGENT_STORE", "yes"}}),
                    Contains("TORCHELASTIC_USE_AGENT_STORE='yes'"));
  CHECK_THROWS_WITH(read({{"RANK", "0"},
                          {"WORLD_SIZE", "2"},
                          {"LOCAL_WORLD_SIZE", "2"},
                          {"TORCHELASTIC_USE_AGENT_STORE", "True"}}),
                    Contains("TORCHELASTIC_RESTART_COUNT is not set"));
  CHECK_THROWS_WITH(read({{"RANK", "0"},
                          {"WORLD_SIZE", "2"},
                          {"LOCAL_WORLD_SIZE", "2"},
                          {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                          {"TORCHELASTIC_RESTART_COUNT", "-1"}}),
                    Contains("TORCHELASTIC_RESTART_COUNT='-1'"));
}

#if GPUPERF_TEST_GLOO
TEST_CASE(
    "Two data-parallel ranks start from rank 0's weights and step with the full-batch "
    "gradient (fp64 reference)",
    "[dist]") {
  check_two_rank_gradients(torch::kCPU, torch::kCPU, gpuperf::C10dBackend::kGloo);
}

TEST_CASE("A data-parallel sync removes its gradient hooks when it goes", "[dist]") {
  gpuperf::LaunchEnv env = two_rank_env(0, free_port());
  env.world_size = 1;
  env.local_world_size = 1;
  gpuperf::ProcessGroup group(env, torch::kCPU);
  torch::nn::Linear model(4, 2);
  const torch::Tensor x = torch::randn({3, 4});
  {
    gpuperf::DataParallelSync sync(*model, group);
    model(x).sum().backward();
    sync.after_backward();  // one rank: the mean is the gradient itself
  }
  const torch::Tensor first = model->weight.grad().clone();
  model->weight.mutable_grad().zero_();
  model(x).sum().backward();  // no sync any more: the hooks must be gone, not dangling
  CHECK(torch::allclose(model->weight.grad(), first));
}

TEST_CASE("A rank whose store port is held by a program that never answers fails, naming it",
          "[dist]") {
  // The silent program: it accepts every connection on the port and never writes a byte.
  int port = 0;
  const int listener = bound_loopback_socket(port);
  REQUIRE(::listen(listener, 16) == 0);
  std::vector<int> accepted;
  std::thread silent([&] {
    for (;;) {
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) return;  // the listener was shut down
      accepted.push_back(fd);
    }
  });
  gpuperf::ProcessGroupOptions options;
  options.timeout_seconds = 1;
  std::string error;
  try {
    gpuperf::ProcessGroup group(two_rank_env(1, port), torch::kCPU, options);
  } catch (const gpuperf::Error& e) {
    error = e.what();
  }
  ::shutdown(listener, SHUT_RDWR);
  ::close(listener);
  silent.join();
  for (const int fd : accepted) ::close(fd);
  CHECK_THAT(error, Catch::Contains("rank 1 of 2: joining the store at 127.0.0.1:" +
                                    std::to_string(port)));
  CHECK_THAT(error, Catch::Contains("is another program holding the port?"));
}

TEST_CASE("A collective whose peer has gone fails with one line naming the rank", "[dist]") {
  const int port = free_port();
  const auto errors = run_two_ranks([&](int rank) {
    gpuperf::ProcessGroupOptions options;
    options.timeout_seconds = 5;
    gpuperf::ProcessGroup group(two_rank_env(rank, port), torch::kCPU, options);
    group.barrier();        // both groups are whole
    if (rank == 1) return;  // then rank 1 leaves: its group and connections go
    torch::Tensor value = torch::ones({1}, torch::kFloat64);
    group.allreduce_sum(value);
  });
  INFO(errors[0]);
  CHECK(errors[1].empty());
  // Gone (the connection closed) or silent until the timeout: either way one line, this rank's.
  CHECK_THAT(errors[0], Catch::StartsWith("rank 0 of 2: an all-reduce with the other ranks failed "
                                          "(gloo)"));
  CHECK(errors[0].find('\n') == std::string::npos);
  CHECK(errors[0].find("pair.cc") == std::string::npos);
}

TEST_CASE("Two ranks meet in a store that torchrun's agent already serves on their port",
          "[dist]") {
  const int port = free_port();
  c10d::TCPStoreOptions agent_options;  // the agent's server, as torchrun's static rendezvous
  agent_options.port = static_cast<std::uint16_t>(port);
  agent_options.isServer = true;
  agent_options.waitWorkers = false;
  const auto agent = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", agent_options);
  std::vector<double> sums(2);
  const auto errors = run_two_ranks([&](int rank) {
    gpuperf::LaunchEnv env = two_rank_env(rank, port);
    env.agent_store = true;
    env.store_prefix = "/worker/attempt_1";
    gpuperf::ProcessGroupOptions options;
    options.timeout_seconds = 30;
    gpuperf::ProcessGroup group(env, torch::kCPU, options);
    torch::Tensor value = torch::full({1}, rank + 1.0, torch::kFloat64);
    group.allreduce_sum(value);
    sums[rank] = value.item<double>();
  });
  INFO(errors[0] << " / " << errors[1]);
  REQUIRE((errors[0].empty() && errors[1].empty()));
  CHECK((sums[0] == 3.0 && sums[1] == 3.0));
}

TEST_CASE("Two ranks accumulating micro-batches take the full-batch SGD step (fp64 reference)",
          "[dist]") {
  const Reference ref(torch::kCPU);
  const torch::Tensor expected = ref.model->weight.detach() - 0.1 * ref.model->weight.grad();
  const int port = free_port();
  std::vector<torch::Tensor> weights(2);
  const auto errors = run_two_ranks([&](int rank) {
    gpuperf::ProcessGroupOptions options;
    options.timeout_seconds = 30;
    gpuperf::ProcessGroup group(two_rank_env(rank, port), torch::kCPU, options);
    torch::nn::Linear model(5, 3);
    model->to(torch::kFloat64);
    if (rank == 0) {
      torch::NoGradGuard no_grad;
      model->weight.copy_(ref.model->weight);
      model->bias.copy_(ref.model->bias);
    }
    gpuperf::TrainStepOptions step_options;
    step_options.precision = gpuperf::Precision::kFp32;
    step_options.optimizer = gpuperf::OptimizerKind::kSgd;
    step_options.momentum = 0;
    step_options.learning_rate = 0.1;
    step_options.accumulation_steps = 2;  // each rank: two micro-batches of 2
    gpuperf::TrainStep step(torch::nn::AnyModule(model), torch::kCPU, step_options);
    step.set_gradient_sync(std::make_shared<gpuperf::DataParallelSync>(step.module(), group));
    (void)step(ref.x.narrow(0, 4 * rank, 4), ref.y.narrow(0, 4 * rank, 4));
    weights[rank] = model->weight.detach().clone();
  });
  INFO(errors[0] << " / " << errors[1]);
  REQUIRE((errors[0].empty() && errors[1].empty()));
  for (int rank = 0; rank < 2; ++rank) {
    CHECK(torch::allclose(weights[rank], expected, 1e-12, 1e-12));
  }
}

TEST_CASE("Data-parallel gradients of CUDA tensors over Gloo equal the full-batch gradient",
          "[dist][gpu]") {
  GPUPERF_REQUIRE_GPU();
  check_two_rank_gradients(torch::Device(torch::kCUDA, 0), torch::Device(torch::kCUDA, 0),
                           gpuperf::C10dBackend::kGloo);
}
#endif

TEST_CASE("Two NCCL ranks on two GPUs get the full-batch gradient (fp64 reference)",
          "[dist][gpu][gpu2]") {
  GPUPERF_REQUIRE_TWO_GPUS();
  check_two_rank_gradients(torch::Device(torch::kCUDA, 0), torch::Device(torch::kCUDA, 1),
                           gpuperf::C10dBackend::kNccl);
}

TEST_CASE("Two NCCL ranks training in a captured CUDA graph end with identical parameters",
          "[dist][gpu][gpu2]") {
  GPUPERF_REQUIRE_TWO_GPUS();
  const int port = free_port();
  std::vector<std::uint64_t> digests(2);
  std::vector<std::string> modes(2);
  const auto errors = run_two_ranks([&](int rank) {
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank));
    gpuperf::ProcessGroupOptions options;
    options.timeout_seconds = 60;
    gpuperf::ProcessGroup group(two_rank_env(rank, port), device, options);
    torch::manual_seed(100 + rank);  // different weights: the broadcast must align them
    gpuperf::TrainStepOptions step_options;
    step_options.precision = gpuperf::Precision::kFp16;
    step_options.fused_optimizer = true;
    step_options.cuda_graph = true;
    gpuperf::TrainStep step(torch::nn::AnyModule(torch::nn::Linear(32, 10)), device, step_options);
    step.set_gradient_sync(std::make_shared<gpuperf::DataParallelSync>(step.module(), group));
    const torch::Tensor x = torch::randn({16, 32}, torch::TensorOptions().device(device));
    // Class indices: LibTorch's randint with options but no dtype draws floats.
    const torch::Tensor y =
        torch::randint(0, 10, {16}, torch::TensorOptions().device(device).dtype(torch::kLong));
    for (int i = 0; i < 6; ++i) (void)step(x, y);  // each rank its own batch
    torch::cuda::synchronize(device.index());
    digests[rank] = gpuperf::parameter_digest(step.module());
    modes[rank] = step.graph_captured() ? "cuda-graph" : "eager: " + step.graph_fallback_reason();
  });
  INFO(errors[0] << " / " << errors[1]);
  REQUIRE((errors[0].empty() && errors[1].empty()));
  INFO("rank 0: " << modes[0] << "; rank 1: " << modes[1]);
  CHECK(digests[0] == digests[1]);
  CHECK(modes[0] == "cuda-graph");
}
