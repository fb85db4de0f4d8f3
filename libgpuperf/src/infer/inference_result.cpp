// Printing and JSON of inference results. nlohmann-json lives in this torch-free file only.
#include "gpuperf/infer/inference_result.h"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <sstream>

#include "gpuperf/error.h"
#include "gpuperf/report/run_record.h"

namespace gpuperf {
namespace {

nlohmann::json latency_json(const LatencySummary& s) {
  return {{"count", s.count}, {"mean_s", s.mean}, {"min_s", s.min},
          {"p50_s", s.p50},   {"p90_s", s.p90},   {"p95_s", s.p95},
          {"p99_s", s.p99},   {"max_s", s.max},   {"p99_over_p50", s.tail_ratio()}};
}

std::string ms(double seconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << seconds * 1e3;
  return out.str();
}

}  // namespace

std::vector<std::int64_t> sweep_batch_sizes(const std::vector<std::int64_t>& list,
                                            std::int64_t max_batch_size) {
  for (const auto b : list) {
    if (b <= 0)
      throw ConfigError("--batch-sizes: a batch size must be > 0, got " + std::to_string(b));
  }
  if (!list.empty()) return list;
  if (max_batch_size <= 0) {
    throw ConfigError("--max-batch: must be >= 1, got " + std::to_string(max_batch_size));
  }
  std::vector<std::int64_t> sizes;
  for (std::int64_t b = 1; b <= max_batch_size; b *= 2) sizes.push_back(b);
  // A maximum that is not a power of two is measured too: the user asked for it by name.
  if (sizes.back() != max_batch_size) sizes.push_back(max_batch_size);
  return sizes;
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

void print_inference_result(const InferenceResult& r, std::ostream& out) {
  out << "Inference: " << r.model << " on " << r.device_name << " (" << r.device << "), "
      << r.precision << ", " << r.memory_format << (r.cuda_graph ? ", CUDA graph" : ", eager")
      << "; " << r.warmup << " warm-up + " << r.iterations << " timed calls per batch size ("
      << r.timer << " per call)\n";
  if (!r.graph_fallback_reason.empty()) out << "Note: " << r.graph_fallback_reason << "\n";
  out << "Kernel fusion: " << r.kernel_fusion << "\n";
  out << "| batch | p50 ms | p90 ms | p95 ms | p99 ms | max ms | p99/p50 | samples/s (batch/p50) "
         "| samples/s (total) |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& b : r.batches) {
    const auto& l = b.latency;
    out << "| " << b.batch_size << " | " << ms(l.p50) << " | " << ms(l.p90) << " | " << ms(l.p95)
        << " | " << ms(l.p99) << " | " << ms(l.max) << " | " << std::fixed << std::setprecision(3)
        << l.tail_ratio() << " | " << std::setprecision(1) << b.throughput_median << " | "
        << b.throughput_overall << " |\n";
  }
  out << "Sweep: " << r.stop_reason << "\n";
  const InferenceHeadline h = inference_headline(r);
  if (h.has_batch1) {
    out << "Batch-1 latency p50: " << ms(h.batch1_p50) << " ms (p99/p50 " << std::setprecision(3)
        << h.batch1_tail_ratio << ")\n";
  }
  out << "Best throughput: " << std::setprecision(1) << h.best_throughput << " samples/s at batch "
      << h.best_batch_size << "\n";
  if (r.serving.points.empty()) return;
  out << "\nServing (SIMULATED: a single-server FIFO model with dynamic batching, Poisson "
         "arrivals, driven by the measured median service time per batch size; not a real "
         "concurrent server). Max batch "
      << r.serving_options.max_batch << ", max queue delay "
      << ms(r.serving_options.max_queue_delay) << " ms, " << r.serving_options.requests
      << " requests per rate\n";
  out << "| offered req/s | achieved req/s | mean batch | p50 ms | p90 ms | p99 ms | max ms | "
         "sustained |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& p : r.serving.points) {
    out << "| " << std::setprecision(1) << p.offered_rate << " | " << p.achieved_rate << " | "
        << std::setprecision(2) << p.mean_batch_size << " | " << ms(p.latency.p50) << " | "
        << ms(p.latency.p90) << " | " << ms(p.latency.p99) << " | " << ms(p.latency.max) << " | "
        << (p.saturated ? "no: " + p.saturation_reason : std::string("yes")) << " |\n";
  }
  if (!r.serving.reached_saturation) out << "Every offered rate was sustained.\n";
}

std::string inference_result_json(const InferenceResult& r) {
  nlohmann::json batches = nlohmann::json::array();
  for (const auto& b : r.batches) {
    batches.push_back({{"batch_size", b.batch_size},
                       {"latency", latency_json(b.latency)},
                       {"throughput_median", b.throughput_median},
                       {"throughput_overall", b.throughput_overall},
                       {"iterations", b.iterations},
                       {"total_seconds", b.total_seconds}});
  }
  const InferenceHeadline h = inference_headline(r);
  nlohmann::json headline = {{"best_throughput", h.best_throughput},
                             {"best_batch_size", h.best_batch_size}};
  if (h.has_batch1) {
    headline["batch1_p50_s"] = h.batch1_p50;
    headline["batch1_p99_over_p50"] = h.batch1_tail_ratio;
  }
  nlohmann::json j = {{"schema", "gpuperf.inference/1"},
                      {"timestamp_utc", r.timestamp_utc},
                      {"command", r.command},
                      {"model", r.model},
                      {"device", r.device},
                      {"device_name", r.device_name},
                      {"precision", r.precision},
                      {"memory_format", r.memory_format},
                      {"cuda_graph", r.cuda_graph},
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
                        {"saturation_reason", p.saturation_reason}});
    }
    j["serving"] = {{"simulated", true},
                    {"model",
                     "single server, FIFO, dynamic batching, Poisson arrivals; service "
                     "times are the measured per-batch-size medians"},
                    {"max_batch", r.serving_options.max_batch},
                    {"max_queue_delay_s", r.serving_options.max_queue_delay},
                    {"requests", r.serving_options.requests},
                    {"seed", r.serving_options.seed},
                    {"reached_saturation", r.serving.reached_saturation},
                    {"points", points}};
  }
  return j.dump(2) + "\n";
}

void write_inference_json(const InferenceResult& result, const std::string& path) {
  write_text_file_atomically(inference_result_json(result), path);
}

}  // namespace gpuperf
