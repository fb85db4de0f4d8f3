// Printing and JSON of inference results. nlohmann-json lives in this torch-free file only.
#include "gpuperf/results/inference_result.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <utility>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/base/files.h"
#include "gpuperf/results/run_record.h"
#include "base/json.h"

namespace gpuperf {
namespace {

nlohmann::json latency_json(const LatencySummary& s) {
  return {{"count", s.count}, {"mean_s", s.mean}, {"min_s", s.min},
          {"p50_s", s.p50},   {"p90_s", s.p90},   {"p95_s", s.p95},
          {"p99_s", s.p99},   {"max_s", s.max},   {"p99_over_p50", s.tail_ratio()}};
}

using detail::kMaxCount;
using detail::kMaxQuantity;

// Latency fields must be real durations: a null or negative one would poison every comparison.
double seconds_field(const detail::JsonReader& r, const char* key) {
  const double value = r.number(key);
  if (!(value >= 0) || !(value <= kMaxQuantity)) {
    r.fail(r.field(key),
           "is not a duration >= 0 s and <= " + detail::JsonReader::num(kMaxQuantity));
  }
  return value;
}

LatencySummary read_latency(const detail::JsonReader& r) {
  LatencySummary s;
  const std::int64_t count = r.integer("count");
  if (count < 1) r.fail(r.field("count"), "must be >= 1, got " + std::to_string(count));
  s.count = static_cast<std::size_t>(r.integer_in("count", 1, kMaxCount));
  s.mean = seconds_field(r, "mean_s");
  s.min = seconds_field(r, "min_s");
  s.p50 = seconds_field(r, "p50_s");
  s.p90 = seconds_field(r, "p90_s");
  s.p95 = seconds_field(r, "p95_s");
  s.p99 = seconds_field(r, "p99_s");
  s.max = seconds_field(r, "max_s");
  // Percentiles of one sample never decrease.
  const std::pair<const char*, double> order[] = {{"min_s", s.min}, {"p50_s", s.p50},
                                                  {"p90_s", s.p90}, {"p95_s", s.p95},
                                                  {"p99_s", s.p99}, {"max_s", s.max}};
  for (std::size_t i = 1; i < std::size(order); ++i) {
    if (order[i].second < order[i - 1].second) {
      r.fail(r.field(order[i].first), "is " + detail::JsonReader::num(order[i].second) +
                                          ", below " + order[i - 1].first + " " +
                                          detail::JsonReader::num(order[i - 1].second));
    }
  }
  if (detail::exceeds(s.min, s.mean) || detail::exceeds(s.mean, s.max)) {
    r.fail(r.field("mean_s"), "is " + detail::JsonReader::num(s.mean) +
                                  ", outside [min_s, max_s] = [" + detail::JsonReader::num(s.min) +
                                  ", " + detail::JsonReader::num(s.max) + "]");
  }
  return s;
}

// Whether the calls replayed a CUDA graph. Version 3 names the graph mode as run records and the
// CSV exports do ("graph_mode": "eager" or "cuda-graph"); versions 1 and 2, still read, wrote the
// boolean "cuda_graph". A file holding the other versions' field was edited by hand or written by
// a tool that mixed them: refused, rather than one of the two fields silently ignored.
bool read_cuda_graph(const detail::JsonReader& r, const std::string& schema) {
  if (schema != kInferenceSchema) {
    if (r.has("graph_mode")) {
      r.fail(r.field("graph_mode"),
             "is not part of " + schema + ", which writes the boolean cuda_graph");
    }
    return r.boolean("cuda_graph");
  }
  if (r.has("cuda_graph")) {
    r.fail(r.field("cuda_graph"), std::string("is not part of ") + kInferenceSchema +
                                      ", which writes graph_mode (eager or cuda-graph)");
  }
  const std::string mode = r.string("graph_mode");
  if (mode != "eager" && mode != "cuda-graph") {
    r.fail(r.field("graph_mode"), "is '" + mode + "', expected one of eager, cuda-graph");
  }
  return mode == "cuda-graph";
}

// The top-level fields: what was run, on what, and how it ended.
void read_run_fields(const detail::JsonReader& r, InferenceResult& out) {
  out.timestamp_utc = r.string("timestamp_utc");
  out.command = r.string("command");
  out.model = r.string("model");
  const std::string schema = r.string("schema");
  if (schema == kInferenceSchemaV1) {
    out.device = r.string("device");
    out.device_name = r.string("device_name");
    // Written since inference results joined compare/report/advise; older files name the device
    // only, which is enough to match it in the datasheet database by name.
    if (r.has("fingerprint")) {
      out.fingerprint = detail::read_device(r.child("fingerprint"));
    } else {
      out.fingerprint.name = out.device_name;
      out.fingerprint.kind = out.device.substr(0, out.device.find(':'));
    }
  } else {
    out.fingerprint = detail::read_device(r.child("device"));
    out.device_name = out.fingerprint.name;
    out.device = out.fingerprint.kind == "cpu"
                     ? out.fingerprint.kind
                     : out.fingerprint.kind + ":" + std::to_string(out.fingerprint.index);
  }
  if (r.has("input_shape")) out.input_shape = r.integers("input_shape");
  for (const std::int64_t extent : out.input_shape) {
    if (extent < 1 || extent > kMaxCount) {
      r.fail(r.field("input_shape"), "holds " + std::to_string(extent) + ", expected >= 1");
    }
  }
  if (r.has("cudnn_benchmark")) out.cudnn_benchmark = r.boolean("cudnn_benchmark");
  if (r.has("cudnn_benchmark_from_batch")) {
    out.cudnn_benchmark_from_batch = r.integer("cudnn_benchmark_from_batch");
    if (out.cudnn_benchmark_from_batch < 1) {
      r.fail(r.field("cudnn_benchmark_from_batch"),
             "is " + std::to_string(out.cudnn_benchmark_from_batch) + ", expected >= 1");
    }
  }
  if (r.has("seed")) out.seed = r.integer("seed");
  out.precision = r.string("precision");
  out.memory_format = r.string("memory_format");
  out.cuda_graph = read_cuda_graph(r, schema);
  out.graph_fallback_reason = r.string("graph_fallback_reason");
  // Added with kernel fusion: results before it fused nothing.
  out.kernel_fusion = r.has("kernel_fusion") ? r.string("kernel_fusion") : "none";
  out.timer = r.string("timer");
  out.warmup = static_cast<int>(r.integer_in("warmup", 0, kMaxCount));
  out.iterations = static_cast<int>(r.integer_in("iterations", 1, kMaxCount));
  out.stop_reason = r.string("stop_reason");
  out.out_of_memory = r.boolean("out_of_memory");
}

// One element of "batches"; a batch size already among `earlier` is an error.
BatchSizeResult read_batch(const detail::JsonReader& b,
                           const std::vector<BatchSizeResult>& earlier) {
  BatchSizeResult batch;
  batch.batch_size = b.integer("batch_size");
  if (batch.batch_size < 1) {
    b.fail(b.field("batch_size"), "must be >= 1, got " + std::to_string(batch.batch_size));
  }
  batch.batch_size = b.integer_in("batch_size", 1, kMaxCount);
  for (const auto& e : earlier) {
    if (e.batch_size == batch.batch_size) {
      b.fail(b.field("batch_size"), std::to_string(batch.batch_size) + " appears twice");
    }
  }
  batch.latency = read_latency(b.child("latency"));
  // The median is > 0 (batch / p50), as a run record's windows; the overall figure may be 0
  // where it was not measured (hand-made results).
  batch.throughput_median = b.positive("throughput_median", /*nullable=*/false);
  batch.throughput_overall = b.non_negative("throughput_overall", /*nullable=*/false);
  batch.iterations = b.integer_in("iterations", 1, kMaxCount);
  // One latency per timed call; the median throughput is batch / p50, so it lies between batch /
  // max_s and batch / min_s (a median of 9e14 against calls of a millisecond is no measurement).
  if (batch.latency.count != static_cast<std::size_t>(batch.iterations)) {
    b.fail(b.field("latency.count"), "is " + std::to_string(batch.latency.count) + ", but " +
                                         std::to_string(batch.iterations) +
                                         " iterations were timed");
  }
  const double size = static_cast<double>(batch.batch_size);
  const double fastest = size / batch.latency.min;  // inf where a call took 0 s
  const double slowest = size / batch.latency.max;
  if (detail::exceeds(slowest, batch.throughput_median) ||
      detail::exceeds(batch.throughput_median, fastest)) {
    b.fail(b.field("throughput_median"),
           "is " + detail::JsonReader::num(batch.throughput_median) +
               ", outside the calls' range [batch_size / max_s, batch_size / min_s] = [" +
               detail::JsonReader::num(slowest) + ", " + detail::JsonReader::num(fastest) + "]");
  }
  batch.total_seconds = b.non_negative("total_seconds", /*nullable=*/false);
  // Null where not measured (the CPU); absent in files written before it was stored.
  if (b.has("peak_memory_bytes")) batch.peak_memory_bytes = b.non_negative("peak_memory_bytes");
  if (b.has("latencies_s")) {
    batch.latencies = b.numbers("latencies_s");
    if (batch.latencies.size() > std::min(batch.latency.count, kMaxStoredLatencies)) {
      b.fail(b.field("latencies_s"), "holds " + std::to_string(batch.latencies.size()) +
                                         " values, more than latency.count (" +
                                         std::to_string(batch.latency.count) + ") or " +
                                         std::to_string(kMaxStoredLatencies));
    }
    for (double v : batch.latencies) {
      if (!(v >= 0) || !std::isfinite(v)) b.fail(b.field("latencies_s"), "holds a bad duration");
      // A subset of the calls that latency summarizes.
      if (detail::exceeds(batch.latency.min, v) || detail::exceeds(v, batch.latency.max)) {
        b.fail(b.field("latencies_s"),
               "holds " + detail::JsonReader::num(v) + ", outside [latency.min_s, latency.max_s]");
      }
    }
  }
  return batch;
}

void read_batches(const detail::JsonReader& r, InferenceResult& out) {
  const nlohmann::json& batches = r.at("batches");
  if (!batches.is_array()) r.fail(r.field("batches"), "is not an array");
  if (batches.empty()) r.fail(r.field("batches"), "is empty: no batch size was measured");
  for (std::size_t i = 0; i < batches.size(); ++i) {
    out.batches.push_back(read_batch(r.element("batches", i), out.batches));
  }
}

// One point of the serving sweep; the sweep's options fill what a point does not store.
ServingResult read_serving_point(const detail::JsonReader& p, const ServingOptions& options) {
  ServingResult point;
  // Rates in requests/s; null where the simulation had none (one request: no achieved rate).
  point.offered_rate = p.non_negative("offered_rate");
  point.arrival_rate = p.non_negative("arrival_rate");
  point.achieved_rate = p.non_negative("achieved_rate");
  point.capacity = p.non_negative("capacity");
  point.latency = read_latency(p.child("latency"));
  point.mean_wait = p.non_negative("mean_wait_s");
  point.mean_service = p.non_negative("mean_service_s");
  // A batch holds at most max_batch requests.
  point.mean_batch_size = p.number_in("mean_batch_size", 0, static_cast<double>(options.max_batch));
  point.batches = p.integer_in("batches", 0, kMaxCount);
  point.saturated = p.boolean("saturated");
  point.saturation_reason = p.string("saturation_reason");
  point.requests = p.has("requests") ? p.integer_in("requests", 0, kMaxCount) : options.requests;
  point.max_batch = options.max_batch;
  point.max_queue_delay = options.max_queue_delay;
  return point;
}

void read_serving(const detail::JsonReader& s, InferenceResult& out) {
  // Files before the measured mode hold only simulated sweeps.
  out.serving_measured = s.has("simulated") && !s.boolean("simulated");
  out.serving_options.max_batch = s.integer_in("max_batch", 1, kMaxCount);
  out.serving_options.max_queue_delay = s.non_negative("max_queue_delay_s", /*nullable=*/false);
  out.serving_options.requests = s.integer_in("requests", 1, kMaxCount);
  out.serving_options.seed = static_cast<std::uint64_t>(s.integer("seed"));
  out.serving.reached_saturation = s.boolean("reached_saturation");
  const nlohmann::json& points = s.at("points");
  if (!points.is_array()) s.fail(s.field("points"), "is not an array");
  for (std::size_t i = 0; i < points.size(); ++i) {
    out.serving.points.push_back(read_serving_point(s.element("points", i), out.serving_options));
  }
}

}  // namespace

std::vector<std::int64_t> sweep_batch_sizes(const std::vector<std::int64_t>& list,
                                            std::int64_t max_batch_size) {
  for (const auto b : list) {
    if (b <= 0)
      throw ConfigError("batch_sizes", "a batch size must be > 0, got " + std::to_string(b));
  }
  if (!list.empty()) return list;
  if (max_batch_size <= 0) {
    throw ConfigError("max_batch", "must be >= 1, got " + std::to_string(max_batch_size));
  }
  std::vector<std::int64_t> sizes;
  for (std::int64_t b = 1; b <= max_batch_size; b *= 2) sizes.push_back(b);
  // A maximum that is not a power of two is measured too: the user asked for it by name.
  if (sizes.back() != max_batch_size) sizes.push_back(max_batch_size);
  return sizes;
}

const char* graph_mode_name(const InferenceResult& result) {
  return result.cuda_graph ? "cuda-graph" : "eager";
}

InferenceHeadline inference_headline(const InferenceResult& result) {
  if (result.batches.empty()) throw ConfigError("inference result: no batch size was measured");
  InferenceHeadline h;
  for (const auto& b : result.batches) {
    if (b.batch_size == 1 && !h.has_batch1) {
      h.has_batch1 = true;
      h.batch1_p50 = b.latency.p50;
      h.batch1_tail_ratio = b.latency.tail_ratio();
    }
    if (b.throughput_median > h.best_throughput) {
      h.best_throughput = b.throughput_median;
      h.best_batch_size = b.batch_size;
    }
  }
  return h;
}

void write_text(std::ostream& out, const InferenceResult& r) {
  out << "Inference: " << printable(r.model) << " on " << printable(r.device_name) << " ("
      << printable(r.device) << "), " << r.precision << ", " << r.memory_format
      << (r.cuda_graph ? ", CUDA graph" : ", eager") << "; " << r.warmup << " warm-up + "
      << r.iterations << " timed calls per batch size (" << r.timer << " per call)\n";
  if (!r.graph_fallback_reason.empty()) out << "Note: " << r.graph_fallback_reason << "\n";
  out << "Kernel fusion: " << r.kernel_fusion << "\n";
  out << "| batch | p50 ms | p90 ms | p95 ms | p99 ms | max ms | p99/p50 | samples/s (batch/p50) "
         "| samples/s (total) | peak memory MiB |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& b : r.batches) {
    const auto& l = b.latency;
    out << "| " << b.batch_size << " | " << format_fixed_or(l.p50 * 1e3, 3) << " | "
        << format_fixed_or(l.p90 * 1e3, 3) << " | " << format_fixed_or(l.p95 * 1e3, 3) << " | "
        << format_fixed_or(l.p99 * 1e3, 3) << " | " << format_fixed_or(l.max * 1e3, 3) << " | "
        << format_fixed(l.tail_ratio(), 3) << " | " << format_fixed(b.throughput_median, 1) << " | "
        << format_fixed(b.throughput_overall, 1) << " | "
        << format_fixed_or(b.peak_memory_bytes / (1024.0 * 1024.0), 1) << " |\n";
  }
  out << "Sweep: " << r.stop_reason << "\n";
  const InferenceHeadline h = inference_headline(r);
  if (h.has_batch1) {
    out << "Batch-1 latency p50: " << format_fixed_or(h.batch1_p50 * 1e3, 3) << " ms (p99/p50 "
        << format_fixed(h.batch1_tail_ratio, 3) << ")\n";
  }
  out << "Best throughput: " << format_fixed(h.best_throughput, 1) << " samples/s at batch "
      << h.best_batch_size << "\n";
  if (r.serving.points.empty()) return;
  out << (r.serving_measured
              ? "\nServing (MEASURED: Poisson arrivals scheduled in real time, one FIFO server "
                "with dynamic batching running each batch on the device and timing it to "
                "completion). Max batch "
              : "\nServing (SIMULATED: a single-server FIFO model with dynamic batching, Poisson "
                "arrivals, driven by the measured median service time per batch size; not a real "
                "concurrent server). Max batch ")
      << r.serving_options.max_batch << ", max queue delay "
      << format_fixed_or(r.serving_options.max_queue_delay * 1e3, 3) << " ms, "
      << (r.serving_measured ? "up to " : "") << r.serving_options.requests
      << " requests per rate\n";
  out << "| offered req/s | achieved req/s | mean batch | p50 ms | p90 ms | p99 ms | max ms | "
         "sustained |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& p : r.serving.points) {
    out << "| " << format_fixed(p.offered_rate, 1) << " | " << format_fixed(p.achieved_rate, 1)
        << " | " << format_fixed(p.mean_batch_size, 2) << " | "
        << format_fixed_or(p.latency.p50 * 1e3, 3) << " | "
        << format_fixed_or(p.latency.p90 * 1e3, 3) << " | "
        << format_fixed_or(p.latency.p99 * 1e3, 3) << " | "
        << format_fixed_or(p.latency.max * 1e3, 3) << " | "
        << (p.saturated ? "no: " + p.saturation_reason : std::string("yes")) << " |\n";
  }
  if (!r.serving.reached_saturation) out << "Every offered rate was sustained.\n";
}

std::string to_json(const InferenceResult& r) {
  nlohmann::json batches = nlohmann::json::array();
  for (const auto& b : r.batches) {
    nlohmann::json batch = {{"batch_size", b.batch_size},
                            {"latency", latency_json(b.latency)},
                            {"throughput_median", b.throughput_median},
                            {"throughput_overall", b.throughput_overall},
                            {"iterations", b.iterations},
                            {"total_seconds", b.total_seconds},
                            {"peak_memory_bytes", detail::json_number(b.peak_memory_bytes)}};
    if (!b.latencies.empty())
      batch["latencies_s"] = evenly_spaced(b.latencies, kMaxStoredLatencies);
    batches.push_back(std::move(batch));
  }
  const InferenceHeadline h = inference_headline(r);
  nlohmann::json headline = {{"best_throughput", h.best_throughput},
                             {"best_batch_size", h.best_batch_size}};
  if (h.has_batch1) {
    headline["batch1_p50_s"] = h.batch1_p50;
    headline["batch1_p99_over_p50"] = h.batch1_tail_ratio;
  }
  nlohmann::json j = {{"schema", kInferenceSchema},
                      {"timestamp_utc", r.timestamp_utc},
                      {"command", r.command},
                      {"model", r.model},
                      {"device", detail::device_json(r.fingerprint)},
                      {"input_shape", r.input_shape},
                      {"cudnn_benchmark", r.cudnn_benchmark},
                      {"cudnn_benchmark_from_batch", r.cudnn_benchmark_from_batch},
                      {"seed", r.seed},
                      {"precision", r.precision},
                      {"memory_format", r.memory_format},
                      {"graph_mode", graph_mode_name(r)},
                      {"graph_fallback_reason", r.graph_fallback_reason},
                      {"kernel_fusion", r.kernel_fusion},
                      {"timer", r.timer},
                      {"warmup", r.warmup},
                      {"iterations", r.iterations},
                      {"batches", batches},
                      {"stop_reason", r.stop_reason},
                      {"out_of_memory", r.out_of_memory},
                      {"headline", headline}};
  if (!r.serving.points.empty()) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : r.serving.points) {
      points.push_back({{"offered_rate", p.offered_rate},
                        {"arrival_rate", p.arrival_rate},
                        {"achieved_rate", p.achieved_rate},
                        {"capacity", p.capacity},
                        {"latency", latency_json(p.latency)},
                        {"mean_wait_s", p.mean_wait},
                        {"mean_service_s", p.mean_service},
                        {"mean_batch_size", p.mean_batch_size},
                        {"batches", p.batches},
                        {"saturated", p.saturated},
                        {"saturation_reason", p.saturation_reason},
                        {"requests", p.requests}});
    }
    j["serving"] = {
        {"simulated", !r.serving_measured},
        {"model", r.serving_measured ? "single server, FIFO, dynamic batching, Poisson arrivals "
                                       "scheduled in real time; every batch executed and timed"
                                     : "single server, FIFO, dynamic batching, Poisson arrivals; "
                                       "service times are the measured per-batch-size medians"},
        {"max_batch", r.serving_options.max_batch},
        {"max_queue_delay_s", r.serving_options.max_queue_delay},
        {"requests", r.serving_options.requests},
        {"seed", r.serving_options.seed},
        {"reached_saturation", r.serving.reached_saturation},
        {"points", points}};
  }
  // Invalid UTF-8 (a file name on the command line) is replaced: the result is never lost
  // to a byte in it.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

template <>
InferenceResult from_json<InferenceResult>(const std::string& text) {
  const std::string what = "inference result";
  const nlohmann::json parsed = detail::parse_json(text, what);
  const detail::JsonReader r(parsed, what, "");
  InferenceResult out;
  const std::string schema = r.string("schema");
  if (schema != kInferenceSchema && schema != kInferenceSchemaV2 && schema != kInferenceSchemaV1) {
    r.fail(r.field("schema"), "is '" + schema + "', expected '" + kInferenceSchema + "'");
  }
  read_run_fields(r, out);
  read_batches(r, out);
  if (r.has("serving")) read_serving(r.child("serving"), out);
  return out;
}

std::vector<double> evenly_spaced(const std::vector<double>& values, std::size_t count) {
  if (values.size() <= count) return values;
  std::vector<double> out;
  out.reserve(count);
  // Index i * n / count: the first value, then strides of n / count, never past the end.
  for (std::size_t i = 0; i < count; ++i) out.push_back(values[i * values.size() / count]);
  return out;
}

}  // namespace gpuperf
