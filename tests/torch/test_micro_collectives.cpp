// Collectives through c10d (Gloo over loopback on the CPU; NCCL and P2P copies on 2 GPUs).
#include "testing.h"

#include <torch/types.h>

#include <string>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/micro/interconnect.h"

namespace {

using Catch::Matchers::Contains;
using gpuperf::C10dBackend;
using gpuperf::Collective;

// Small enough for a shared 2-core machine, still a median over windows.
gpuperf::MicroOptions tiny_timing() {
  gpuperf::MicroOptions o;
  o.warmup = 1;
  o.calls_per_window = 2;
  o.windows = 3;
  return o;
}

const gpuperf::MicroResult& find(const std::vector<gpuperf::MicroResult>& results,
                                 const std::string& name) {
  for (const auto& r : results) {
    if (r.name == name) return r;
  }
  FAIL("no result named " << name);
  throw gpuperf::Error("unreachable");
}

double figure(const gpuperf::MicroResult& r, const std::string& key) {
  for (const auto& [k, v] : r.figures) {
    if (k == key) return v;
  }
  FAIL("result " << r.name << " has no figure " << key);
  return 0;
}

}  // namespace

TEST_CASE("the checks accept each collective's analytic result and name a wrong one", "[micro]") {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  for (const int n : {2, 3}) {
    for (int rank = 0; rank < n; ++rank) {
      // All-reduce of r+1 over n ranks: n(n+1)/2 everywhere.
      torch::Tensor sum = torch::full({6}, n * (n + 1) / 2.0, f32);
      CHECK(gpuperf::check_collective_output(Collective::kAllReduce, sum, rank, n).empty());
      // All-gather: chunk k holds rank k's r+1.
      torch::Tensor gathered = torch::arange(1, n + 1, f32).repeat_interleave(4);
      CHECK(gpuperf::check_collective_output(Collective::kAllGather, gathered, rank, n).empty());
      // Reduce-scatter of (q+1)(k+1): rank r gets sum_q (q+1)(r+1) = (r+1) n(n+1)/2.
      std::vector<torch::Tensor> inputs;
      for (int q = 0; q < n; ++q) {
        torch::Tensor input = torch::empty({4L * n}, f32);
        gpuperf::fill_collective_input(Collective::kReduceScatter, input, q, n);
        inputs.push_back(input);
      }
      const torch::Tensor reduced = torch::stack(inputs).sum(0).view({n, 4})[rank];
      CHECK(reduced.eq((rank + 1) * n * (n + 1) / 2.0).all().item<bool>());
      CHECK(gpuperf::check_collective_output(Collective::kReduceScatter, reduced, rank, n).empty());
    }
  }
  // Wrong results say what the rank got.
  const torch::Tensor stale = torch::full({6}, 1.0, f32);
  CHECK_THAT(gpuperf::check_collective_output(Collective::kAllReduce, stale, 1, 2),
             Contains("rank 1 got values in [1, 1], expected 3"));
  const torch::Tensor swapped = torch::tensor({2.0F, 2.0F, 1.0F, 1.0F});
  CHECK_THAT(gpuperf::check_collective_output(Collective::kAllGather, swapped, 0, 2),
             Contains("expected 1..2 by chunk"));
  torch::Tensor rs_input = torch::empty({6}, f32);
  gpuperf::fill_collective_input(Collective::kReduceScatter, rs_input, 1, 3);
  CHECK(rs_input.equal(torch::tensor({2.0F, 2.0F, 4.0F, 4.0F, 6.0F, 6.0F})));
}

TEST_CASE("collective options reject bad values, naming the field", "[micro]") {
  gpuperf::CollectiveOptions o;
  o.sizes = {1024};
  o.ranks = 1;
  CHECK_THROWS_WITH(o.validate(), Contains("ranks"));
  o.ranks = 2;
  o.sizes.clear();
  CHECK_THROWS_WITH(o.validate(), Contains("sizes"));
  o.sizes = {-1};
  CHECK_THROWS_WITH(o.validate(), Contains("sizes"));
  o.sizes = {1024};
  o.collectives.clear();
  CHECK_THROWS_WITH(o.validate(), Contains("collectives"));
}

TEST_CASE("NCCL collectives are refused with the reason where the build cannot run them",
          "[micro]") {
  std::string reason;
  if (gpuperf::collective_backend_available(C10dBackend::kNccl, &reason)) {
    CHECK(reason.empty());
    return;
  }
  CHECK_THAT(reason, Contains("NCCL"));
  gpuperf::CollectiveOptions o;
  o.backend = C10dBackend::kNccl;
  o.sizes = {1024};
  CHECK_THROWS_AS(gpuperf::run_collectives(o, tiny_timing()), gpuperf::ConfigError);
}

#if GPUPERF_TEST_GLOO

TEST_CASE("Gloo collectives over 2 and 3 CPU ranks give the analytic sums and bus bandwidths",
          "[micro]") {
  for (const int ranks : {2, 3}) {
    gpuperf::CollectiveOptions o;
    o.backend = C10dBackend::kGloo;
    o.ranks = ranks;
    o.sizes = {12 * 1024, 48 * 1024};
    // run_collectives checks each result once per size and throws on a wrong one.
    const auto results = gpuperf::run_collectives(o, tiny_timing());
    REQUIRE(results.size() == 6);
    for (const char* name : {"all-reduce", "all-gather"}) {
      for (const char* size : {"12KiB", "48KiB"}) {
        const gpuperf::MicroResult& r =
            find(results, std::string("collective/") + name + "/" + size);
        INFO(r.name << " over " << ranks << " ranks: " << r.status);
        REQUIRE(r.ok());
        CHECK(r.windows.size() == 3);
        CHECK(r.value() > 0);
        CHECK(r.unit == "GB/s");
        CHECK_THAT(r.note, Contains("CPU, Gloo over loopback: not an interconnect"));
        const double factor = gpuperf::bus_bandwidth_factor(
            r.variant == "all-reduce" ? Collective::kAllReduce : Collective::kAllGather, ranks);
        CHECK(figure(r, "bus_factor") == factor);
        CHECK(figure(r, "ranks") == ranks);
        // busbw = algbw x factor, and algbw = S / t (medians of the same windows).
        CHECK(figure(r, "algbw_gb_s") * factor == Approx(r.value()).epsilon(1e-9));
        CHECK(r.buffer_bytes / (figure(r, "time_us") * 1e-6) / 1e9 ==
              Approx(figure(r, "algbw_gb_s")).epsilon(1e-9));
      }
    }
    // LibTorch 1.13's Gloo has no reduce_scatter; where it has one, the result was checked.
    const gpuperf::MicroResult& rs = find(results, "collective/reduce-scatter/12KiB");
    INFO(rs.status);
    CHECK((rs.ok() || rs.status.find("does not support reduce_scatter") != std::string::npos));
  }
}

#else

TEST_CASE("without Gloo headers the CPU collectives are refused with the package to install",
          "[micro]") {
  std::string reason;
  CHECK_FALSE(gpuperf::collective_backend_available(C10dBackend::kGloo, &reason));
  CHECK_THAT(reason, Contains("libgloo-dev"));
}

#endif

TEST_CASE("NCCL collectives and P2P copies between two GPUs are correct", "[micro][gpu][gpu2]") {
  GPUPERF_REQUIRE_TWO_GPUS();

  // A copy between the GPUs delivers every byte.
  const auto on = [](int d) {
    return torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA, d);
  };
  const torch::Tensor src = torch::randn({1 << 20}, on(0));
  torch::Tensor dst = torch::empty({1 << 20}, on(1));
  dst.copy_(src, /*non_blocking=*/true);
  CHECK(dst.cpu().equal(src.cpu()));

  const gpuperf::P2pReport p2p = gpuperf::run_p2p({0, 1}, 4.0 * 1024 * 1024, 4, tiny_timing());
  REQUIRE(p2p.links.size() == 2);
  for (const auto& r : p2p.results) {
    INFO(r.name << ": " << r.status);
    CHECK(r.ok());
    CHECK(r.value() > 0);
  }
  const auto& one_way = find(p2p.results, "p2p/copy/0->1");
  CHECK(one_way.work_per_call == 4.0 * 1024 * 1024);  // bytes once, one way
  CHECK(find(p2p.results, "p2p/bidirectional/0<->1").work_per_call == 8.0 * 1024 * 1024);
  CHECK(find(p2p.results, "p2p/latency/1->0").unit == "us");

  gpuperf::CollectiveOptions o;
  o.backend = C10dBackend::kNccl;
  o.ranks = 2;
  o.sizes = {1024.0 * 1024, 8.0 * 1024 * 1024};
  const auto results = gpuperf::run_collectives(o, tiny_timing());  // throws on a wrong sum
  REQUIRE(results.size() == 6);
  for (const auto& r : results) {
    INFO(r.name << ": " << r.status);
    CHECK(r.ok());
    CHECK(r.value() > 0);
  }
}

TEST_CASE("one c10d backend for process groups and collectives: names, auto, refusals",
          "[collectives]") {
  CHECK(gpuperf::parse_c10d_backend("auto", "f") == C10dBackend::kAuto);
  CHECK(gpuperf::parse_c10d_backend("nccl", "f") == C10dBackend::kNccl);
  CHECK(gpuperf::parse_c10d_backend("gloo", "f") == C10dBackend::kGloo);
  CHECK_THROWS_WITH(gpuperf::parse_c10d_backend("mpi", "ProcessGroupOptions::backend"),
                    Contains("ProcessGroupOptions::backend") && Contains("'mpi'"));
  for (const auto b : {C10dBackend::kAuto, C10dBackend::kNccl, C10dBackend::kGloo}) {
    CHECK(gpuperf::parse_c10d_backend(gpuperf::to_string(b), "f") == b);
  }
  // auto: NCCL between CUDA devices, Gloo on the CPU; a named backend stays as named.
  CHECK(gpuperf::resolve_c10d_backend(C10dBackend::kAuto, torch::kCPU) == C10dBackend::kGloo);
  CHECK(gpuperf::resolve_c10d_backend(C10dBackend::kAuto, torch::Device(torch::kCUDA, 0)) ==
        C10dBackend::kNccl);
  CHECK(gpuperf::resolve_c10d_backend(C10dBackend::kGloo, torch::Device(torch::kCUDA, 0)) ==
        C10dBackend::kGloo);
  // The collective microbenchmark times the backend it is given: auto is refused by field.
  gpuperf::CollectiveOptions o;
  o.backend = C10dBackend::kAuto;
  CHECK_THROWS_WITH(o.validate(), Contains("CollectiveOptions::backend"));
}
