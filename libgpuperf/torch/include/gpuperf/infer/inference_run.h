#pragma once
// An inference benchmark as one typed call: a batch-size sweep of per-call latency and
// throughput, and optionally a serving sweep (simulated from the measured call times, or
// measured with every batch executed on the device).
//
//   gpuperf::InferenceRun run;
//   run.model = "resnet50";
//   run.memory_format = gpuperf::MemoryFormat::kChannelsLast;
//   run.batch_sizes = {1, 8, 64};
//   gpuperf::InferenceResult result = gpuperf::run_inference(run);
//
// Validated once, resolved once (device, `auto` precision and switches), measured; the result
// records what ran.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuperf/base/choices.h"
#include "gpuperf/base/run_basics.h"
#include "gpuperf/results/inference_result.h"

namespace gpuperf {

/// How the serving sweep gets its service times.
enum class ServeMode {
  kSimulated,  ///< a queueing model driven by the measured median call times
  kMeasured,   ///< Poisson arrivals in real time, every batch executed on the device
};

/// Parses "simulated", "measured"; ConfigError naming --<option> otherwise.
[[nodiscard]] ServeMode parse_serve_mode(const std::string& text,
                                         const std::string& option = "serve-mode");

/// What an inference measurement runs (device, seed, threads, quiet, command line: RunBasics).
struct InferenceRun : RunBasics {
  std::string model = "simple";
  std::int64_t num_classes = 0;        ///< 0: the model's default
  std::optional<Precision> precision;  ///< nullopt: fp16 on CUDA, fp32 on the CPU
  MemoryFormat memory_format = MemoryFormat::kContiguous;
  Switch cuda_graph = Switch::kAuto;      ///< replay a captured CUDA graph; auto: on CUDA
  Switch kernel_fusion = Switch::kAuto;   ///< fold BatchNorm, fused conv epilogues; auto: on CUDA
  std::vector<std::int64_t> batch_sizes;  ///< explicit sweep; empty: doubling up to max_batch
  std::int64_t max_batch = 256;           ///< doubling sweep 1, 2, 4, ... up to this (or OOM)
  int warmup = 10;                        ///< untimed calls per batch size
  int iterations = 100;                   ///< timed calls per batch size
  bool cudnn_benchmark = true;
  /// The smallest batch size cuDNN times its algorithms for (InferenceOptions).
  std::int64_t cudnn_benchmark_from_batch = kDefaultCudnnBenchmarkFromBatch;
  std::vector<double> serve_rates;      ///< offered rates (requests/s); empty: no serving sweep
  double max_batch_delay_ms = 1.0;      ///< serving: longest wait for a fuller batch, ms
  std::int64_t serve_max_batch = 0;     ///< serving: largest batch; 0: the largest measured
  std::int64_t serve_requests = 20000;  ///< serving: requests per rate (measured: at most)
  ServeMode serve_mode = ServeMode::kSimulated;
  double serve_seconds = 5;  ///< measured serving: seconds of arrivals per rate (>= 100 requests)
  /// Per-call latencies kept per batch size in the result (evenly spread; 0: none), for
  /// gpuperf_compare's rank test. At most kMaxStoredLatencies.
  std::size_t keep_latencies = 1000;
  /// kernel_trace (RunBasics): after the sweep, kKernelTraceCalls more calls at each measured
  /// batch size (after 3 untraced ones) are traced.
  static constexpr int kKernelTraceCalls = 10;

  /// The batch sizes the sweep tries, in order: batch_sizes, or 1, 2, 4, ... then max_batch.
  [[nodiscard]] std::vector<std::int64_t> planned_batch_sizes() const;
  /// Throws ConfigError naming the first bad field ("InferenceRun::iterations") and its value.
  void validate() const;
};

/// Runs the sweep (and the serving sweep, if rates are given) and returns the result (no file;
/// unless run.quiet, a progress line per batch size and rate logged to stderr at level info).
/// ConfigError for bad options before anything runs; OutOfMemoryError when the first batch size
/// does not fit (a later one ends the sweep and is recorded instead).
[[nodiscard]] InferenceResult run_inference(const InferenceRun& run);

}  // namespace gpuperf
