// RunRecord <-> JSON. NaN ("not available") is written as null and read back as NaN.
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <unistd.h>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/results/run_record.h"
#include "base/json.h"
#include "gpuperf/telemetry/clock_events.h"

namespace gpuperf {
namespace {

using nlohmann::json;

json number(double value) { return detail::json_number(value); }

json summary_json(const Summary& s) {
  return {{"count", s.count},
          {"median", s.median},
          {"mean", s.mean},
          {"stdev", s.stdev},
          {"min", s.min},
          {"max", s.max},
          {"q1", s.q1},
          {"q3", s.q3},
          {"iqr", s.iqr},
          {"ci95_low", s.ci95_low},
          {"ci95_high", s.ci95_high}};
}

using Reader = detail::JsonReader;

Summary read_summary(const Reader& r) {
  Summary s;
  s.count = static_cast<std::size_t>(r.integer("count"));
  s.median = r.number("median");
  s.mean = r.number("mean");
  s.stdev = r.number("stdev");
  s.min = r.number("min");
  s.max = r.number("max");
  s.q1 = r.number("q1");
  s.q3 = r.number("q3");
  s.iqr = r.number("iqr");
  s.ci95_low = r.number("ci95_low");
  s.ci95_high = r.number("ci95_high");
  return s;
}

json telemetry_json(const TelemetrySummary& t) {
  json reasons = json::array();
  for (const std::string& name : clock_event_reason_names(t.clock_event_reasons)) {
    reasons.push_back(name);
  }
  return {{"available", t.available},
          {"unavailable_reason", t.unavailable_reason},
          {"sample_count", t.sample_count},
          {"duration_seconds", number(t.duration_seconds)},
          {"processed_samples", number(t.processed_samples)},
          {"power_mean_watts", number(t.power_mean_watts)},
          {"power_max_watts", number(t.power_max_watts)},
          {"energy_joules", number(t.energy_joules)},
          {"energy_source", t.energy_source},
          {"energy_per_sample_joules", number(t.energy_per_sample_joules)},
          {"samples_per_joule", number(t.samples_per_joule)},
          {"sm_clock_mean_hz", number(t.sm_clock_mean_hz)},
          {"sm_clock_min_hz", number(t.sm_clock_min_hz)},
          {"sm_clock_max_hz", number(t.sm_clock_max_hz)},
          {"temperature_max_celsius", number(t.temperature_max_celsius)},
          {"gpu_utilization_mean_percent", number(t.gpu_utilization_mean_percent)},
          {"memory_used_max_bytes", number(t.memory_used_max_bytes)},
          {"clock_event_reasons", t.clock_event_reasons},
          {"clock_event_reason_names", reasons},  // derived from the bits; not read back
          {"warnings", t.warnings}};
}

TelemetrySummary read_telemetry(const Reader& r) {
  TelemetrySummary t;
  t.available = r.boolean("available");
  t.unavailable_reason = r.string("unavailable_reason");
  t.sample_count = r.integer("sample_count");
  t.duration_seconds = r.number("duration_seconds");
  t.processed_samples = r.number("processed_samples");
  t.power_mean_watts = r.number("power_mean_watts");
  t.power_max_watts = r.number("power_max_watts");
  t.energy_joules = r.number("energy_joules");
  t.energy_source = r.string("energy_source");
  t.energy_per_sample_joules = r.number("energy_per_sample_joules");
  t.samples_per_joule = r.number("samples_per_joule");
  t.sm_clock_mean_hz = r.number("sm_clock_mean_hz");
  t.sm_clock_min_hz = r.number("sm_clock_min_hz");
  t.sm_clock_max_hz = r.number("sm_clock_max_hz");
  t.temperature_max_celsius = r.number("temperature_max_celsius");
  t.gpu_utilization_mean_percent = r.number("gpu_utilization_mean_percent");
  t.memory_used_max_bytes = r.number("memory_used_max_bytes");
  const json& bits = r.at("clock_event_reasons");
  if (!bits.is_number_unsigned() && !bits.is_number_integer()) {
    r.fail(r.field("clock_event_reasons"), "is not an integer");
  }
  t.clock_event_reasons = bits.get<std::uint64_t>();
  t.warnings = r.strings("warnings");
  return t;
}

}  // namespace



json distributed_json(const DistributedSummary& d) {
  return {{"world_size", d.world_size},
          {"backend", d.backend},
          {"launcher", d.launcher},
          {"interconnect", d.interconnect},
          {"global_throughput", number(d.global_throughput)},
          {"rank_throughput", d.rank_throughput},
          {"baseline_throughput", number(d.baseline_throughput)},
          {"scaling_efficiency", number(d.scaling_efficiency)},
          {"gradient_bytes", number(d.gradient_bytes)},
          {"buckets", d.buckets},
          {"allreduce_bus_gbps", number(d.allreduce_bus_gbps)},
          {"allreduce_share_of_step", number(d.allreduce_share_of_step)},
          {"parameters_identical", d.parameters_identical}};
}

DistributedSummary read_distributed(const Reader& r) {
  DistributedSummary d;
  d.world_size = static_cast<int>(r.integer("world_size"));
  if (d.world_size < 2) r.fail(r.field("world_size"), "must be >= 2 in a \"distributed\" object");
  d.backend = r.string("backend");
  d.launcher = r.string("launcher");
  d.interconnect = r.string("interconnect");
  d.global_throughput = r.number("global_throughput");
  d.rank_throughput = r.numbers("rank_throughput");
  d.baseline_throughput = r.number("baseline_throughput");
  d.scaling_efficiency = r.number("scaling_efficiency");
  d.gradient_bytes = r.number("gradient_bytes");
  d.buckets = r.integer("buckets");
  d.allreduce_bus_gbps = r.number("allreduce_bus_gbps");
  d.allreduce_share_of_step = r.number("allreduce_share_of_step");
  d.parameters_identical = r.boolean("parameters_identical");
  return d;
}

// A record that no measurement can have written is refused, naming the field: a zero or
// negative throughput would be judged "the same" as a real one, and 1e308 breaks rankings.
void check_measured(const Reader& r, const RunRecord& record) {
  auto plausible = [](double v) { return std::isfinite(v) && v >= 0 && v < 1e15; };
  if (record.config.batch_size <= 0) r.fail("config.batch_size", "must be > 0");
  // Hand-made records may leave the window times out; when given, one per window.
  if (!record.window_seconds.empty() &&
      record.window_throughput.size() != record.window_seconds.size()) {
    r.fail("window_seconds", "has " + std::to_string(record.window_seconds.size()) +
                                 " windows, window_throughput " +
                                 std::to_string(record.window_throughput.size()));
  }
  for (double v : record.window_throughput) {
    if (!plausible(v) || v == 0) r.fail("window_throughput", "holds " + std::to_string(v));
  }
  if (!plausible(record.overall_throughput)) {
    r.fail("overall_throughput", "is " + std::to_string(record.overall_throughput));
  }
  if (!(plausible(record.throughput.median) || std::isnan(record.throughput.median))) {
    r.fail("throughput.median", "is " + std::to_string(record.throughput.median));
  }
}

std::string to_json(const RunRecord& record) {
  const RunConfig& c = record.config;
  json metrics = json::object();
  for (const auto& [name, value] : record.metrics) metrics[name] = number(value);
  json out = {
      {"schema", record.schema},
      {"timestamp_utc", record.timestamp_utc},
      {"command", record.command},
      {"device", detail::device_json(record.device)},
      {"config",
       {{"workload", c.workload},
        {"model", c.model},
        {"batch_size", c.batch_size},
        {"input_shape", c.input_shape},
        {"num_classes", c.num_classes},
        {"precision", c.precision},
        {"memory_format", c.memory_format},
        {"optimizer", c.optimizer},
        {"optimizer_impl", c.optimizer_impl},
        {"learning_rate", c.learning_rate},
        {"graph_mode", c.graph_mode},
        {"kernel_fusion", c.kernel_fusion},
        {"data_source", c.data_source},
        {"cudnn_benchmark", c.cudnn_benchmark},
        {"grad_scaler", c.grad_scaler},
        {"warmup_steps", c.warmup_steps},
        {"steps_per_window", c.steps_per_window},
        {"adaptive", c.adaptive},
        {"seed", c.seed}}},
      {"throughput", summary_json(record.throughput)},
      {"window_throughput", record.window_throughput},
      {"window_seconds", record.window_seconds},
      {"overall_throughput", record.overall_throughput},
      {"timed_steps", record.timed_steps},
      {"timed_seconds", record.timed_seconds},
      {"stop_reason", record.stop_reason},
      {"timer", record.timer},
      {"peak_memory_bytes", number(record.peak_memory_bytes)},
      {"skipped_steps", record.skipped_steps},
      {"total_steps", record.total_steps},
      {"final_loss", number(record.final_loss)},
      {"final_loss_scale", number(record.final_loss_scale)},
      {"telemetry", telemetry_json(record.telemetry)},
      {"metrics", metrics},
      {"warnings", record.warnings},
  };
  // Only data-parallel runs carry it: single-process records stay as they were.
  if (record.distributed.world_size > 1) out["distributed"] = distributed_json(record.distributed);
  // Invalid UTF-8 (a file name on the command line) is replaced: the result is never lost
  // to a byte in it.
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

template <>
RunRecord from_json<RunRecord>(const std::string& text) {
  const json parsed = detail::parse_json(text, "run record");
  const Reader r(parsed, "run record", "");
  RunRecord record;
  record.schema = r.string("schema");
  if (record.schema != RunRecord::kSchema) {
    r.fail(r.field("schema"), "is '" + record.schema + "', expected '" + RunRecord::kSchema + "'");
  }
  record.timestamp_utc = r.string("timestamp_utc");
  record.command = r.string("command");
  record.device = detail::read_device(r.child("device"));

  const Reader c = r.child("config");
  RunConfig& config = record.config;
  config.workload = c.string("workload");
  config.model = c.string("model");
  config.batch_size = c.integer("batch_size");
  config.input_shape = c.integers("input_shape");
  config.num_classes = c.integer("num_classes");
  config.precision = c.string("precision");
  config.memory_format = c.string("memory_format");
  config.optimizer = c.string("optimizer");
  // Added after the first records were written: absent means the only implementation then.
  config.optimizer_impl = c.has("optimizer_impl") ? c.string("optimizer_impl") : "torch::optim";
  config.learning_rate = c.number("learning_rate");
  config.graph_mode = c.string("graph_mode");
  // Added later: records before it ran no fused kernels.
  config.kernel_fusion = c.has("kernel_fusion") ? c.string("kernel_fusion") : "none";
  config.data_source = c.string("data_source");
  config.cudnn_benchmark = c.boolean("cudnn_benchmark");
  config.grad_scaler = c.boolean("grad_scaler");
  config.warmup_steps = c.integer("warmup_steps");
  config.steps_per_window = c.integer("steps_per_window");
  config.adaptive = c.boolean("adaptive");
  config.seed = c.integer("seed");

  record.throughput = read_summary(r.child("throughput"));
  record.window_throughput = r.numbers("window_throughput");
  record.window_seconds = r.numbers("window_seconds");
  record.overall_throughput = r.number("overall_throughput");
  record.timed_steps = r.integer("timed_steps");
  record.timed_seconds = r.number("timed_seconds");
  record.stop_reason = r.string("stop_reason");
  record.timer = r.string("timer");
  record.peak_memory_bytes = r.number("peak_memory_bytes");
  record.skipped_steps = r.integer("skipped_steps");
  record.total_steps = r.integer("total_steps");
  record.final_loss = r.number("final_loss");
  record.final_loss_scale = r.number("final_loss_scale");

  // Records written before telemetry existed have no "telemetry" object: read as unavailable.
  if (parsed.contains("telemetry")) record.telemetry = read_telemetry(r.child("telemetry"));

  const json& metrics = r.at("metrics");
  if (!metrics.is_object()) r.fail(r.field("metrics"), "is not an object");
  for (const auto& [name, value] : metrics.items()) {
    if (!value.is_null() && !value.is_number()) {
      r.fail(r.field("metrics." + name), "is not a number");
    }
    record.metrics[name] = value.is_null() ? kNotAvailable : value.get<double>();
  }
  record.warnings = r.strings("warnings");
  check_measured(r, record);
  // Absent in single-process records and in every record before data-parallel runs existed.
  if (r.has("distributed")) record.distributed = read_distributed(r.child("distributed"));
  return record;
}

}  // namespace gpuperf
