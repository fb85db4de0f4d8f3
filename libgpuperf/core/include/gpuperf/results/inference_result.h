#pragma once
// What an inference benchmark measured, as plain data (torch-free): one entry per batch size,
// the headline figures, the machine it ran on, and the optional simulated serving sweep.
// Printers and the JSON writer only read it; from_json<InferenceResult>() reads it back, so that
// gpuperf_compare, gpuperf_report and gpuperf_advise take inference results beside training
// records.
//
//   auto result = gpuperf::from_json<InferenceResult>(text);   // gpuperf.inference/3, /2 or /1
//   for (const auto& b : result.batches) std::cout << b.batch_size << ": " << b.latency.p50 <<
//   "\n";

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gpuperf/timing/latency.h"
#include "gpuperf/serving/serving.h"
#include "gpuperf/results/run_record.h"

namespace gpuperf {

/// The schema tag of inference result files. Version 3 names the graph mode "graph_mode"
/// ("cuda-graph" or "eager"), as run records and the CSV exports do; version 2 (still read) wrote
/// it as the boolean "cuda_graph". Version 2 named the device object "device", as run records do;
/// version 1 (still read) wrote "device" as a string ("cuda:0") beside "device_name" and the object
/// under "fingerprint".
inline constexpr const char* kInferenceSchema = "gpuperf.inference/3";
/// The tag of version 2 inference results (the boolean "cuda_graph"), which readers still accept.
inline constexpr const char* kInferenceSchemaV2 = "gpuperf.inference/2";
/// The tag of version 1 inference results, which readers still accept.
inline constexpr const char* kInferenceSchemaV1 = "gpuperf.inference/1";
/// Per-call latencies a result file holds at most per batch size (a bound on the file's size).
inline constexpr std::size_t kMaxStoredLatencies = 100000;

/// Latency and throughput of one batch size.
struct BatchSizeResult {
  std::int64_t batch_size = 0;
  LatencySummary latency;         ///< per call, seconds
  double throughput_median = 0;   ///< batch_size / latency.p50, samples/s
  double throughput_overall = 0;  ///< all timed samples / sum of call times, samples/s
  std::int64_t iterations = 0;    ///< timed calls
  double total_seconds = 0;       ///< sum of the timed calls
  /// Peak bytes allocated by LibTorch's caching allocator from just before this batch size's
  /// first call (a graph's capture included) to its last timed call: the model, the input and
  /// everything the calls allocated. kNotAvailable (NaN) on the CPU and in files written before
  /// it was stored.
  double peak_memory_bytes = kNotAvailable;
  /// Per-call latencies in seconds, in call order (every timed call after a measurement; at most
  /// kMaxStoredLatencies, spread evenly over the run, once written to a file). Empty when not
  /// kept: files written before they were stored, or InferenceRun::keep_latencies 0.
  std::vector<double> latencies;
};

/// The default smallest batch size for which inference lets cuDNN time its algorithms
/// (InferenceOptions::cudnn_benchmark_from_batch).
inline constexpr std::int64_t kDefaultCudnnBenchmarkFromBatch = 128;

/// The result of an inference benchmark run.
struct InferenceResult {
  std::string model;
  std::string device;  ///< "cpu", "cuda:0"
  std::string device_name;
  /// The machine and software, as in training records. Files written before it was stored read
  /// back with only `name` (from device_name) and `kind` set.
  DeviceFingerprint fingerprint;
  std::string precision;  ///< fp32, tf32, fp16, bf16
  std::string memory_format;
  bool cuda_graph = false;            ///< replayed a CUDA graph (JSON: graph_mode)
  std::string graph_fallback_reason;  ///< why a requested CUDA graph was not used; else empty
  std::string kernel_fusion =
      "none";          ///< what InferenceOptions::kernel_fusion fused ("none": nothing)
  std::string timer;   ///< "cuda-event" or "steady-clock"
  int warmup = 0;      ///< untimed calls per batch size
  int iterations = 0;  ///< timed calls per batch size
  std::vector<std::int64_t> input_shape;  ///< one sample, e.g. {3, 224, 224}; empty: not stored
  bool cudnn_benchmark = false;
  /// With cudnn_benchmark, the smallest batch size cuDNN timed its algorithms for; smaller ones
  /// took its heuristics. Files written before it was stored read back as 1.
  std::int64_t cudnn_benchmark_from_batch = 1;
  std::int64_t seed = 0;
  std::vector<BatchSizeResult> batches;  ///< in the order measured
  std::string stop_reason;     ///< why the sweep ended ("all batch sizes measured", OOM, ...)
  bool out_of_memory = false;  ///< the sweep stopped at a batch size that did not fit
  std::string command;         ///< the command line, shell-quoted
  std::string timestamp_utc;
  ServingSweep
      serving;  ///< the serving sweep, simulated or executed (serving_measured); may be empty
  bool serving_measured =
      false;  ///< run_serving executed it; otherwise simulate_serving modelled it
  ServingOptions serving_options;  ///< rate is per point; the rest applies to all points
};

/// The figures quoted first.
struct InferenceHeadline {
  bool has_batch1 = false;           ///< batch size 1 was measured
  double batch1_p50 = 0;             ///< seconds
  double batch1_tail_ratio = 0;      ///< p99 / p50 at batch 1
  double best_throughput = 0;        ///< largest throughput_median, samples/s
  std::int64_t best_batch_size = 0;  ///< the batch size that gave it
};

/// The sweep's batch sizes: `list` if it is not empty, else 1, 2, 4, ... up to max_batch_size,
/// and max_batch_size itself when it is not a power of two. Throws ConfigError naming
/// "batch_sizes" or "max_batch" for a size <= 0.
[[nodiscard]] std::vector<std::int64_t> sweep_batch_sizes(const std::vector<std::int64_t>& list,
                                                          std::int64_t max_batch_size);

/// The graph mode as run records, CSV exports and version 3 files name it: "cuda-graph" when the
/// calls replayed a captured CUDA graph, else "eager".
[[nodiscard]] const char* graph_mode_name(const InferenceResult& result);

/// Headline figures of a result; throws ConfigError when no batch size was measured.
[[nodiscard]] InferenceHeadline inference_headline(const InferenceResult& result);

/// A human-readable table of the result, then the serving sweep if there is one.
void write_text(std::ostream& out, const InferenceResult& result);

/// The result as JSON text (schema "gpuperf.inference/3"). Per-call latencies, where kept, are
/// written as "latencies_s", at most kMaxStoredLatencies per batch size (evenly_spaced()).
[[nodiscard]] std::string to_json(const InferenceResult& result);

/// Parses a result written by to_json(), including older versions (kInferenceSchemaV2,
/// kInferenceSchemaV1) and files written before the fingerprint, configuration extras and per-call
/// latencies were stored. Throws IoError naming the field when the text is malformed or foreign.
template <>
InferenceResult from_json<InferenceResult>(const std::string& text);

/// `count` values of `values` spread evenly over it (the first, then every len/count-th), in
/// order; all of them when there are no more than `count`.
[[nodiscard]] std::vector<double> evenly_spaced(const std::vector<double>& values,
                                                std::size_t count);

}  // namespace gpuperf
