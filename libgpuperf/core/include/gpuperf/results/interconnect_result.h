#pragma once
// Interconnect arithmetic, torch-free: the collectives timed, nccl-tests' size and bus-bandwidth
// definitions, and size sweeps. The measuring side is gpuperf/micro/interconnect.h.
//
//   // nccl-tests, PERFORMANCE.md: algbw = S / t; all-reduce busbw = algbw * 2(n-1)/n.
//   double busbw = gpuperf::bus_bandwidth_factor(gpuperf::Collective::kAllReduce, 2) * s / t;
//   auto sizes = gpuperf::parse_byte_sizes("1M..1G", "collective-sizes");   // 1 MiB .. 1 GiB, x2

#include <cstdint>
#include <string>
#include <vector>

namespace gpuperf {

/// The collectives timed, each as nccl-tests runs it (sum for the reductions).
enum class Collective { kAllReduce, kAllGather, kReduceScatter };

/// Every Collective, in report order.
[[nodiscard]] const std::vector<Collective>& all_collectives();
/// "all-reduce", "all-gather", "reduce-scatter".
[[nodiscard]] std::string to_string(Collective collective);
/// Parses a comma-separated list (case-insensitive; "allreduce" and "all_reduce" also work);
/// duplicates collapse. Throws ConfigError naming `option` and the bad item.
[[nodiscard]] std::vector<Collective> parse_collectives(const std::string& list,
                                                        const std::string& option);

/// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw x factor, the traffic
/// each rank's link carries relative to S / t, so that busbw is comparable with the hardware's
/// per-direction bandwidth whatever the rank count. All-reduce: 2(n-1)/n; all-gather and
/// reduce-scatter: (n-1)/n. Throws ConfigError for ranks < 1.
[[nodiscard]] double bus_bandwidth_factor(Collective collective, int ranks);

/// Buffer sizes of one collective of nccl-tests' size S over n ranks. S is what nccl-tests
/// prints in its "size" column and divides by the time for algbw: all-reduce: each rank's buffer
/// (input = output); all-gather: the gathered output (each rank sends S/n); reduce-scatter: each
/// rank's input (each receives S/n).
struct CollectiveBuffers {
  double size_bytes = 0;            ///< S, rounded down so that every rank's part is whole
  std::int64_t input_elements = 0;  ///< per rank
  std::int64_t output_elements = 0;
};
/// Buffers for `collective` of about `size_bytes` over `ranks` ranks of `element_bytes`-wide
/// elements; S is rounded down to a multiple of ranks x element_bytes. Throws ConfigError when
/// nothing is left or the arguments are not positive.
[[nodiscard]] CollectiveBuffers collective_buffers(Collective collective, double size_bytes,
                                                   int ranks, double element_bytes);

/// nccl-tests' time of one collective: the slowest rank's mean per-iteration time, from each
/// rank's seconds for `iterations` back-to-back calls. Throws ConfigError for an empty list,
/// iterations < 1 or a time that is not positive.
[[nodiscard]] double collective_seconds(const std::vector<double>& rank_seconds, int iterations);

/// Parses a size list: comma-separated items, each a size ("4096", "64K", "1M", "1MiB", "2G";
/// binary multiples, B optional) or a sweep "A..B" (A, 2A, 4A, ... up to B) or "A..B:F" (factor F).
/// Returns bytes in order, duplicates removed (format_exact_bytes() prints them back). Throws
/// ConfigError naming `option` and the item.
[[nodiscard]] std::vector<double> parse_byte_sizes(const std::string& text,
                                                   const std::string& option);

}  // namespace gpuperf
