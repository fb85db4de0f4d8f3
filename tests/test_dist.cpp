// Data-parallel training: the launchers' environments, and the averaged gradients against the
// full-batch gradient in fp64 (two ranks as two threads over Gloo on loopback).
#include "testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/linear.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/dist/data_parallel.h"
#include "gpuperf/dist/launch_env.h"
#include "gpuperf/dist/process_group.h"

namespace {

using Catch::Matchers::Contains;

std::optional<gpuperf::LaunchEnv> read(const std::map<std::string, std::string>& vars) {
  return gpuperf::read_launch_env([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

TEST_CASE("No launcher variable, or a one-task job, means a single process", "[dist]") {
  CHECK_FALSE(read({}).has_value());
  CHECK_FALSE(read({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}).has_value());
  CHECK_FALSE(read({{"RANK", "0"}, {"WORLD_SIZE", "1"}}).has_value());
}

TEST_CASE("torchrun's, Open MPI's and Slurm's variables give the rank and the rendezvous",
          "[dist]") {
  const auto t = read({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                       {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "1234"}});
  REQUIRE(t.has_value());
  CHECK(t->launcher == "torchrun");
  CHECK((t->rank == 3 && t->world_size == 8 && t->local_rank == 1 && t->local_world_size == 2));
  CHECK((t->master_addr == "node0" && t->master_port == 1234));

  // Open MPI without its local size: not known to be one machine, so the address is needed.
  CHECK_THROWS_WITH(read({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
                    Contains("MASTER_ADDR is not set"));
  const auto m = read({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  REQUIRE(m.has_value());
  CHECK(m->launcher == "mpi");
  CHECK((m->rank == 1 && m->master_addr == "127.0.0.1" && m->master_port == 29500));

  const auto s = read({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"},
                       {"SLURM_NTASKS_PER_NODE", "4(x4)"}, {"MASTER_ADDR", "gpu-a"}});
  REQUIRE(s.has_value());
  CHECK((s->launcher == "slurm" && s->rank == 5 && s->local_rank == 1 && s->master_addr == "gpu-a"));
  const auto one_node = read({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_NNODES", "1"}});
  REQUIRE(one_node.has_value());
  CHECK((one_node->master_addr == "127.0.0.1" && one_node->local_world_size == 2));

  // torchrun inside an srun step: the innermost launcher's variables win.
  const auto nested = read({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"SLURM_PROCID", "0"},
                            {"SLURM_NTASKS", "2"}, {"MASTER_ADDR", "a"}});
  REQUIRE(nested.has_value());
  CHECK((nested->launcher == "torchrun" && nested->rank == 2));
}

TEST_CASE("Missing or contradictory launcher variables are refused by name", "[dist]") {
  CHECK_THROWS_WITH(read({{"RANK", "0"}}), Contains("WORLD_SIZE"));
  CHECK_THROWS_WITH(read({{"RANK", "4"}, {"WORLD_SIZE", "4"}}), Contains("RANK='4'"));
  CHECK_THROWS_WITH(read({{"RANK", "x"}, {"WORLD_SIZE", "4"}}), Contains("RANK='x'"));
  CHECK_THROWS_WITH(read({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"},
                          {"LOCAL_WORLD_SIZE", "2"}}),
                    Contains("LOCAL_RANK=2") && Contains("LOCAL_WORLD_SIZE"));
  CHECK_THROWS_WITH(read({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}}),
                    Contains("MASTER_ADDR is not set"));
  CHECK_THROWS_WITH(read({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}),
                    Contains("MASTER_PORT='70000'"));
}

#if GPUPERF_TEST_GLOO
TEST_CASE("Two data-parallel ranks start from rank 0's weights and step with the full-batch "
          "gradient (fp64 reference)",
          "[dist]") {
  // Rank r trains on half r of the batch; the mean of the two half-batch gradients is the
  // full-batch gradient of the mean loss.
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({8, 5}, torch::kFloat64);
  const torch::Tensor y = torch::randint(0, 3, {8});
  torch::nn::Linear reference(5, 3);
  reference->to(torch::kFloat64);
  torch::nn::functional::cross_entropy(reference(x), y).backward();

  const int port = free_port();
  std::vector<torch::Tensor> weight_grads(2), bias_grads(2), weights(2);
  std::vector<std::string> errors(2);
  auto rank_main = [&](int rank) {
    try {
      gpuperf::LaunchEnv env;
      env.rank = rank;
      env.world_size = 2;
      env.local_rank = rank;
      env.local_world_size = 2;
      env.master_addr = "127.0.0.1";
      env.master_port = port;
      gpuperf::ProcessGroupOptions options;
      options.timeout_seconds = 30;
      gpuperf::ProcessGroup group(env, torch::kCPU, options);
      torch::nn::Linear model(5, 3);  // rank 1's own initial weights differ
      model->to(torch::kFloat64);
      if (rank == 0) {
        torch::NoGradGuard no_grad;
        model->weight.copy_(reference->weight);
        model->bias.copy_(reference->bias);
      }
      gpuperf::DataParallelOptions dp;
      dp.bucket_bytes = 64;  // several buckets, so their launch order matters
      gpuperf::DataParallelSync sync(*model, group, dp);
      const torch::Tensor half = x.narrow(0, 4 * rank, 4);
      torch::nn::functional::cross_entropy(model(half), y.narrow(0, 4 * rank, 4)).backward();
      sync.after_backward();
      weight_grads[rank] = model->weight.grad().clone();
      bias_grads[rank] = model->bias.grad().clone();
      weights[rank] = model->weight.detach().clone();
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread other(rank_main, 1);
  rank_main(0);
  other.join();
  INFO(errors[0] << " / " << errors[1]);
  REQUIRE((errors[0].empty() && errors[1].empty()));
  CHECK(torch::equal(weights[1], reference->weight.detach()));  // broadcast from rank 0
  for (int rank = 0; rank < 2; ++rank) {
    CHECK(torch::allclose(weight_grads[rank], reference->weight.grad(), 1e-12, 1e-12));
    CHECK(torch::allclose(bias_grads[rank], reference->bias.grad(), 1e-12, 1e-12));
  }
}
#endif
