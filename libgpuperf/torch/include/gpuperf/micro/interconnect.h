#pragma once
// Interconnect microbenchmarks: copies between GPUs (one way, both ways at once, and the time of
// a tiny copy) for every pair, with the link between them from NVML; and collectives (all-reduce,
// all-gather, reduce-scatter) through c10d, one thread per rank in this process: NCCL on GPUs,
// or Gloo over loopback as the CPU variant (which measures no interconnect at all).
//
//   gpuperf::MicroOptions timing;                          // warm-up, windows of calls
//   gpuperf::P2pReport p2p = gpuperf::run_p2p({0, 1}, 256 << 20, 4, timing);
//   gpuperf::CollectiveOptions c;                          // NCCL over cuda:0 and cuda:1
//   c.sizes = gpuperf::parse_byte_sizes("1M..1G", "collective-sizes");
//   std::vector<gpuperf::MicroResult> rows = gpuperf::run_collectives(c, timing);
//   // each row's value is nccl-tests' bus bandwidth in GB/s; figures hold algbw and the time

#include <string>
#include <vector>

#include "gpuperf/comm/backend.h"
#include "gpuperf/results/interconnect_result.h"
#include "gpuperf/micro/micro.h"
#include "gpuperf/results/micro_result.h"

namespace gpuperf {

/// Number of CUDA devices this process sees (0 without CUDA).
[[nodiscard]] int cuda_device_count();

/// P2P measurements and the pairs they ran on.
struct P2pReport {
  std::vector<MicroResult>
      results;                  ///< "p2p/copy/i->j", "p2p/bidirectional/i<->j", "p2p/latency/i->j"
  std::vector<PeerLink> links;  ///< every ordered pair, with its link type from NVML
  std::vector<std::string> warnings;  ///< e.g. NVML unavailable, P2P access off for a pair
};

/// Times copies between every ordered pair of `devices` (CUDA indices): dst.copy_(src) of
/// `copy_bytes` one way (bytes counted once), both ways at once on two side streams (bytes of
/// both copies), and `latency_bytes` one way (time per call, us, copies issued back to back).
/// Peer access is enabled where CUDA allows it, as ATen's copies do. Throws ConfigError for
/// fewer than two devices, an unknown device, a size that is not a positive multiple of 4, or a
/// build without CUDA.
[[nodiscard]] P2pReport run_p2p(const std::vector<int>& devices, double copy_bytes,
                                double latency_bytes, const MicroOptions& options);

/// The link of every ordered pair of `devices` from NVML (`type` "unknown" and a warning when
/// NVML is unavailable); p2p_access is left false. Used by run_p2p.
[[nodiscard]] std::vector<PeerLink> describe_peer_links(const std::vector<int>& devices,
                                                        std::vector<std::string>* warnings);

/// Whether this build has `backend` (compiled in; NCCL also needs a CUDA LibTorch and nccl.h
/// at build time, Gloo its headers); when not, `reason` says why.
[[nodiscard]] bool collective_backend_available(C10dBackend backend, std::string* reason = nullptr);

/// What run_collectives() runs; timing (warm-up, calls per window, windows) is a MicroOptions.
struct CollectiveOptions {
  C10dBackend backend = C10dBackend::kNccl;  ///< nccl or gloo (validate() refuses auto)
  int ranks = 2;                             ///< threads, one rank each; NCCL: rank r on cuda:r
  std::vector<Collective> collectives = all_collectives();
  std::vector<double> sizes;     ///< nccl-tests' size S in bytes, fp32 elements; must not be empty
  bool check_results = true;     ///< verify each collective's result once per size
  double timeout_seconds = 300;  ///< c10d's operation timeout (a rank that hangs ends the run)

  /// Throws ConfigError naming the first bad field.
  void validate() const;
};

/// Fills a rank's input the way every checked call does: rank r contributes r+1 everywhere
/// (all-reduce, all-gather), or (r+1)(k+1) in chunk k of n (reduce-scatter, so that a
/// misplaced chunk shows).
void fill_collective_input(Collective collective, torch::Tensor& input, int rank, int ranks);
/// Empty when `output` is what `collective` must produce on `rank` of `ranks` from inputs made
/// by fill_collective_input(): all-reduce n(n+1)/2 everywhere; all-gather chunk k = k+1;
/// reduce-scatter (r+1) n(n+1)/2. Otherwise a line saying what the rank got and expected.
[[nodiscard]] std::string check_collective_output(Collective collective,
                                                  const torch::Tensor& output, int rank, int ranks);

/// Runs every collective at every size, nccl-tests' way: per size, one checked call (rank r
/// contributes r+1; a wrong sum or order throws Error naming the collective, size and rank),
/// warm-up calls, then windows of back-to-back calls each rank times on its own (CUDA events on
/// the current stream for NCCL, a steady clock for Gloo) after a host barrier; a window's time
/// is the slowest rank's mean per call. Each result's value is the bus bandwidth in GB/s
/// (median over windows); its figures carry algbw_gb_s, time_us, bus_factor and ranks. A
/// collective the backend lacks (Gloo's reduce_scatter in LibTorch 1.13) comes back with status
/// "unsupported: <reason>". Throws ConfigError for bad options or an unavailable backend.
[[nodiscard]] std::vector<MicroResult> run_collectives(const CollectiveOptions& options,
                                                       const MicroOptions& timing);

}  // namespace gpuperf
