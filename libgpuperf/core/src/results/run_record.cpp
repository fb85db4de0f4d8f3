// RunRecord <-> JSON. NaN ("not available") is written as null and read back as NaN.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include <unistd.h>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/base/timestamp.h"
#include "gpuperf/base/version.h"
#include "gpuperf/results/run_record.h"
#include "base/json.h"
#include "gpuperf/telemetry/clock_events.h"

namespace gpuperf {
namespace {

using nlohmann::json;

json number(double value) { return detail::json_number(value); }

// Each value, null where not finite.
json numbers(const std::vector<double>& values) {
  json out = json::array();
  for (const double v : values) out.push_back(number(v));
  return out;
}

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
using detail::kMaxCount;
using detail::kMaxQuantity;
// Steps are counted in int64: a step count is bounded only by being >= 0.
constexpr std::int64_t kMaxSteps = std::numeric_limits<std::int64_t>::max();
// The largest derived figure in "metrics" (FLOP/s of a datasheet peak are ~1e15).
constexpr double kMaxMetric = 1e18;
// The largest global / (ranks x single-process) rate a reader accepts (read_distributed()).
constexpr double kMaxScalingEfficiency = 1.5;

// Order statistics of one set of windows: min <= q1 <= median <= q3 <= max, the mean between min
// and max, the interval's low bound below its high one (null fields are not compared). A record
// that breaks one (a median of 9e14 against a max of 1e5) is no summary of any windows.
void check_summary(const Reader& r, const Summary& s) {
  // `field` (`value`) must not be above `bound_name` (`bound`), or below it when `low`.
  const auto bounded = [&r](const char* field, double value, const char* bound_name, double bound,
                            bool low) {
    // NOLINTNEXTLINE(readability-suspicious-call-argument): below the bound, the bound exceeds it
    if (low ? detail::exceeds(bound, value) : detail::exceeds(value, bound)) {
      r.fail(r.field(field), "is " + Reader::num(value) + (low ? ", below " : ", above ") +
                                 bound_name + " " + Reader::num(bound));
    }
  };
  // No windows, no median: a writer leaves it 0 (or null).
  if (s.count == 0 && std::isfinite(s.median) && s.median != 0) {
    r.fail(r.field("median"), "is " + Reader::num(s.median) + ", but count is 0 (no windows)");
  }
  // Every window processed samples (window throughputs are > 0), so their median is > 0.
  if (s.count > 0 && !(s.median > 0)) {
    r.fail(r.field("median"), std::string("is ") + (std::isnan(s.median) ? "null" : "0") +
                                  " with " + std::to_string(s.count) +
                                  " windows, whose throughputs are > 0");
  }
  bounded("median", s.median, "min", s.min, /*low=*/true);
  bounded("median", s.median, "max", s.max, /*low=*/false);
  bounded("q1", s.q1, "q3", s.q3, /*low=*/false);
  bounded("q1", s.q1, "min", s.min, /*low=*/true);
  bounded("q1", s.q1, "median", s.median, /*low=*/false);
  bounded("q3", s.q3, "median", s.median, /*low=*/true);
  bounded("q3", s.q3, "max", s.max, /*low=*/false);
  if (detail::exceeds(s.min, s.mean) || detail::exceeds(s.mean, s.max)) {
    r.fail(r.field("mean"), "is " + Reader::num(s.mean) + ", outside [min, max] = [" +
                                Reader::num(s.min) + ", " + Reader::num(s.max) + "]");
  }
  if (detail::exceeds(s.ci95_low, s.ci95_high)) {
    r.fail(r.field("ci95_low"),
           "is " + Reader::num(s.ci95_low) + ", above ci95_high " + Reader::num(s.ci95_high));
  }
}

// The statistics of the window throughputs (samples/s). Only the bounds of the confidence interval
// may be negative: few windows far apart give a low bound below zero.
Summary read_summary(const Reader& r) {
  Summary s;
  s.count = static_cast<std::size_t>(r.integer_in("count", 0, kMaxCount));
  s.median = r.non_negative("median");
  s.mean = r.non_negative("mean");
  s.stdev = r.non_negative("stdev");
  s.min = r.non_negative("min");
  s.max = r.non_negative("max");
  s.q1 = r.non_negative("q1");
  s.q3 = r.non_negative("q3");
  s.iqr = r.non_negative("iqr");
  s.ci95_low = r.number_in("ci95_low", -kMaxQuantity, kMaxQuantity);
  s.ci95_high = r.number_in("ci95_high", -kMaxQuantity, kMaxQuantity);
  check_summary(r, s);
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
  t.sample_count = r.integer_in("sample_count", 0, kMaxCount);
  t.duration_seconds = r.non_negative("duration_seconds");
  t.processed_samples = r.non_negative("processed_samples");
  t.power_mean_watts = r.non_negative("power_mean_watts");
  t.power_max_watts = r.non_negative("power_max_watts");
  t.energy_joules = r.non_negative("energy_joules");
  t.energy_source = r.string("energy_source");
  t.energy_per_sample_joules = r.non_negative("energy_per_sample_joules");
  t.samples_per_joule = r.non_negative("samples_per_joule");
  t.sm_clock_mean_hz = r.non_negative("sm_clock_mean_hz");
  t.sm_clock_min_hz = r.non_negative("sm_clock_min_hz");
  t.sm_clock_max_hz = r.non_negative("sm_clock_max_hz");
  t.temperature_max_celsius = r.number_in("temperature_max_celsius", -273.15, 1000);
  t.gpu_utilization_mean_percent = r.number_in("gpu_utilization_mean_percent", 0, 100);
  t.memory_used_max_bytes = r.non_negative("memory_used_max_bytes");
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
  // Only data-parallel runs carry a "distributed" object: at least two ranks.
  d.world_size = static_cast<int>(r.integer_in("world_size", 2, kMaxCount));
  d.backend = r.string("backend");
  d.launcher = r.string("launcher");
  d.interconnect = r.string("interconnect");
  d.global_throughput = r.positive("global_throughput");
  // One per rank, each a measured throughput like the record's windows.
  d.rank_throughput = r.numbers_in("rank_throughput", 0, kMaxQuantity, /*exclusive_low=*/true);
  if (d.rank_throughput.size() != static_cast<std::size_t>(d.world_size)) {
    r.fail(r.field("rank_throughput"), "has " + std::to_string(d.rank_throughput.size()) +
                                           " values, world_size " + std::to_string(d.world_size));
  }
  // The median of the per-window sums over the ranks is not the sum of the ranks' medians: the
  // two differ by the ranks' window-to-window noise (+0.4% in the committed 8-rank CPU run,
  // docs/results/2026-12-01-cpu-gloo-ranks/dp8.json). A job 10% faster than its ranks together
  // measured something else.
  double rank_sum = 0;
  for (const double rate : d.rank_throughput) rank_sum += rate;
  if (detail::exceeds(d.global_throughput, 1.1 * rank_sum)) {
    r.fail(r.field("global_throughput"),
           "is " + Reader::num(d.global_throughput) + ", above the sum of rank_throughput (" +
               Reader::num(rank_sum) + ") by more than 10%: the job is its ranks together");
  }
  d.baseline_throughput = r.positive("baseline_throughput");
  d.scaling_efficiency = r.non_negative("scaling_efficiency");
  // Caches shared by fewer ranks can make scaling a little superlinear; 1.5 times linear is
  // beyond anything data-parallel training measures, and a ratio that large is a broken record.
  if (d.scaling_efficiency > kMaxScalingEfficiency) {
    r.fail(r.field("scaling_efficiency"),
           "is " + Reader::num(d.scaling_efficiency) + ", above " +
               Reader::num(kMaxScalingEfficiency) +
               ": ranks cannot each outrun a single process by half again");
  }
  d.gradient_bytes = r.non_negative("gradient_bytes");
  d.buckets = r.integer_in("buckets", 0, kMaxCount);
  d.allreduce_bus_gbps = r.non_negative("allreduce_bus_gbps");
  d.allreduce_share_of_step = r.non_negative("allreduce_share_of_step");
  d.parameters_identical = r.boolean("parameters_identical");
  return d;
}

// Window arrays must agree: a record that no measurement can have written is refused, naming the
// field (zero throughput against a real one was judged "the same").
void check_windows(const Reader& r, const RunRecord& record) {
  // Hand-made records may leave the window times out; when given, one per window.
  if (!record.window_seconds.empty() &&
      record.window_throughput.size() != record.window_seconds.size()) {
    r.fail("window_seconds", "has " + std::to_string(record.window_seconds.size()) +
                                 " windows, window_throughput " +
                                 std::to_string(record.window_throughput.size()));
  }
  // The summary is of the windows: as many, and its median, min and max among them (an empty
  // window_throughput with count 10, a median of 9e14 against windows near 1e5).
  const std::vector<double>& windows = record.window_throughput;
  const Summary& s = record.throughput;
  if (s.count != windows.size()) {
    r.fail("throughput.count", "is " + std::to_string(s.count) + ", but " +
                                   std::to_string(windows.size()) + " windows are given");
  }
  if (windows.empty()) return;
  const auto [low, high] = std::minmax_element(windows.begin(), windows.end());
  const std::pair<const char*, double> within[] = {
      {"throughput.median", s.median}, {"throughput.min", s.min}, {"throughput.max", s.max}};
  for (const auto& [field, value] : within) {
    if (detail::exceeds(*low, value) || detail::exceeds(value, *high)) {
      r.fail(field, "is " + Reader::num(value) + ", outside the windows' range [" +
                        Reader::num(*low) + ", " + Reader::num(*high) + "]");
    }
  }
}

namespace {

// One field's check as validate() words it: "run record: field 'config.precision' is 'fp8',
// expected one of fp32, tf32, fp16, bf16".
[[noreturn]] void refuse(const std::string& field, const std::string& problem) {
  throw ConfigError("run record: field '" + field + "' " + problem);
}

void require_one_of(const std::string& field, const std::string& value,
                    std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  refuse(field, "is '" + value + "', expected one of " + list);
}

void require_not_empty(const std::string& field, const std::string& value) {
  if (value.empty()) refuse(field, "is empty");
}

void require_finite(const std::string& field, double value) {
  if (!std::isfinite(value)) refuse(field, "is " + Reader::num(value) + ", expected a number");
}

// "YYYY-MM-DDTHH:MM:SSZ", the schema's pattern for timestamp_utc.
bool is_utc_timestamp(const std::string& t) {
  static const char kForm[] = "dddd-dd-ddTdd:dd:ddZ";
  if (t.size() != sizeof kForm - 1) return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const bool ok = kForm[i] == 'd' ? (t[i] >= '0' && t[i] <= '9') : t[i] == kForm[i];
    if (!ok) return false;
  }
  return true;
}

// "9.0" or "" (the schema's ^([0-9]+\.[0-9]+)?$).
bool is_compute_capability(const std::string& c) {
  if (c.empty()) return true;
  const auto dot = c.find('.');
  const auto digits = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  return dot != std::string::npos && digits(c.substr(0, dot)) && digits(c.substr(dot + 1));
}

}  // namespace

void set_measurement(RunRecord& record, const Measurement& measurement) {
  record.throughput = measurement.throughput;
  record.window_throughput = measurement.window_throughput;
  record.window_seconds = measurement.window_seconds;
  record.overall_throughput = measurement.overall_throughput;
  record.timed_steps = measurement.timed_steps;
  record.timed_seconds = measurement.timed_seconds;
  record.stop_reason = measurement.stop_reason;
}

RunRecord make_record(const std::string& model, const Measurement& measurement,
                      const Timer& timer) {
  if (model.empty()) throw ConfigError("make_record: the model name is empty");
  if (measurement.window_throughput.empty()) {
    throw ConfigError("make_record: the measurement has no timed window");
  }
  const double batch = measurement.samples_per_step;
  if (!(batch >= 1) || batch != std::floor(batch) || batch > static_cast<double>(kMaxCount)) {
    throw ConfigError(
        "make_record: samples per step (the batch size) must be a whole number "
        ">= 1, got " +
        Reader::num(batch));
  }
  RunRecord record;
  record.timestamp_utc = utc_timestamp();
  record.device.gpuperf_version = kBuildVersion;
  RunConfig& c = record.config;
  c.model = model;
  c.batch_size = static_cast<std::int64_t>(batch);
  c.warmup_steps = measurement.warmup_steps;
  c.steps_per_window = measurement.steps_per_window;
  // measure() stops a fixed run after its windows, an adaptive one for any other reason.
  c.adaptive = measurement.stop_reason != "fixed window count";
  set_measurement(record, measurement);
  record.timer = timer.name();
  record.total_steps =
      static_cast<std::int64_t>(measurement.warmup_steps) + measurement.timed_steps;
  record.telemetry.unavailable_reason = "not sampled";
  return record;
}

std::string micro_batches_text(std::int64_t accumulation_steps) {
  return accumulation_steps > 1 ? " in " + std::to_string(accumulation_steps) + " micro-batches"
                                : std::string();
}

void validate(const RunRecord& record) {
  // What the schema asks and the reader does not check (vocabularies, forms, non-empty names,
  // numbers that must not be null); the reader below checks ranges and agreement.
  if (record.schema != RunRecord::kSchema) {
    refuse("schema", "is '" + record.schema + "', expected '" + RunRecord::kSchema + "'");
  }
  if (!is_utc_timestamp(record.timestamp_utc)) {
    refuse("timestamp_utc",
           "is '" + record.timestamp_utc + "', expected YYYY-MM-DDTHH:MM:SSZ (utc_timestamp())");
  }
  const DeviceFingerprint& d = record.device;
  require_one_of("device.kind", d.kind, {"cuda", "cpu"});
  if (!is_compute_capability(d.compute_capability) ||
      (d.kind == "cpu" && !d.compute_capability.empty())) {
    refuse("device.compute_capability",
           "is '" + d.compute_capability + "', expected major.minor on a GPU, empty on the CPU");
  }
  const RunConfig& c = record.config;
  require_one_of("config.workload", c.workload, {"train"});
  require_not_empty("config.model", c.model);
  require_one_of("config.precision", c.precision, {"fp32", "tf32", "fp16", "bf16"});
  require_one_of("config.memory_format", c.memory_format, {"contiguous", "channels_last"});
  require_one_of("config.optimizer", c.optimizer, {"adam", "sgd", "adamw"});
  // torch.optim: the records of the Python peers, which a core user may read and write again.
  require_one_of("config.optimizer_impl", c.optimizer_impl,
                 {"torch::optim", "fused", "torch.optim"});
  require_finite("config.learning_rate", c.learning_rate);
  require_one_of("config.graph_mode", c.graph_mode, {"eager", "cuda-graph"});
  require_not_empty("config.kernel_fusion", c.kernel_fusion);
  require_not_empty("config.data_source", c.data_source);
  if (c.steps_per_window < 1) {
    refuse("config.steps_per_window",
           "is " + std::to_string(c.steps_per_window) + ", expected >= 1");
  }
  require_finite("overall_throughput", record.overall_throughput);
  require_finite("timed_seconds", record.timed_seconds);
  require_one_of("stop_reason", record.stop_reason,
                 {"fixed window count", "converged", "time limit", "max windows reached"});
  require_one_of("timer", record.timer, {"cuda-event", "steady-clock"});
  const TelemetrySummary& t = record.telemetry;
  if (!t.available && t.unavailable_reason.empty()) {
    refuse("telemetry.unavailable_reason", "is empty while telemetry is unavailable: say why");
  }
  require_one_of("telemetry.energy_source", t.energy_source,
                 {"", "energy counter", "integrated power"});
  const DistributedSummary& dp = record.distributed;
  if (dp.world_size > 1) {  // written only then
    require_one_of("distributed.backend", dp.backend, {"nccl", "gloo"});
    require_one_of("distributed.launcher", dp.launcher, {"torchrun", "mpi", "slurm", "gpuperf"});
    for (const double rate : dp.rank_throughput) {
      require_finite("distributed.rank_throughput", rate);
    }
  }
  for (const auto& [name, value] : record.metrics) {
    const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
    });
    if (!ok) refuse("metrics." + name, "has a name outside [a-z0-9_]");
  }
  // Everything gpuperf's reader checks: a record is valid only if it reads back.
  try {
    (void)from_json<RunRecord>(to_json(record));
  } catch (const IoError& e) {
    throw ConfigError(e.what());
  }
}

void write_json_file(const RunRecord& record, const std::string& path) {
  validate(record);
  write_text_file_atomically(to_json(record), path);
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
      {"first_loss", number(record.first_loss)},
      {"final_loss", number(record.final_loss)},
      {"final_loss_scale", number(record.final_loss_scale)},
      {"window_losses", numbers(record.window_losses)},
      {"telemetry", telemetry_json(record.telemetry)},
      {"metrics", metrics},
      {"warnings", record.warnings},
  };
  // One micro-batch a step (no accumulation) is what every record before this field meant.
  if (c.accumulation_steps != 1) out["config"]["accumulation_steps"] = c.accumulation_steps;
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
  config.batch_size = c.integer_in("batch_size", 1, kMaxCount);
  // Added later, written only above 1: absent means one micro-batch a step.
  config.accumulation_steps =
      c.has("accumulation_steps") ? c.integer_in("accumulation_steps", 1, config.batch_size) : 1;
  config.input_shape = c.integers("input_shape");
  for (const std::int64_t extent : config.input_shape) {
    if (extent < 1 || extent > kMaxCount) {
      c.fail(c.field("input_shape"), "holds " + std::to_string(extent) + ", expected >= 1");
    }
  }
  config.num_classes = c.integer_in("num_classes", 0, kMaxCount);
  config.precision = c.string("precision");
  config.memory_format = c.string("memory_format");
  config.optimizer = c.string("optimizer");
  // Added after the first records were written: absent means the only implementation then.
  config.optimizer_impl = c.has("optimizer_impl") ? c.string("optimizer_impl") : "torch::optim";
  config.learning_rate = c.non_negative("learning_rate");
  config.graph_mode = c.string("graph_mode");
  // Added later: records before it ran no fused kernels.
  config.kernel_fusion = c.has("kernel_fusion") ? c.string("kernel_fusion") : "none";
  config.data_source = c.string("data_source");
  config.cudnn_benchmark = c.boolean("cudnn_benchmark");
  config.grad_scaler = c.boolean("grad_scaler");
  config.warmup_steps = c.integer_in("warmup_steps", 0, kMaxSteps);
  // 0 in hand-made records: not recorded.
  config.steps_per_window = c.integer_in("steps_per_window", 0, kMaxSteps);
  config.adaptive = c.boolean("adaptive");
  config.seed = c.integer("seed");

  record.throughput = read_summary(r.child("throughput"));
  // Throughputs are > 0 (a window that processed nothing measured nothing) and never null.
  record.window_throughput =
      r.numbers_in("window_throughput", 0, kMaxQuantity, /*exclusive_low=*/true);
  record.window_seconds = r.numbers_in("window_seconds", 0, kMaxQuantity, /*exclusive_low=*/true);
  record.overall_throughput = r.non_negative("overall_throughput", /*nullable=*/false);
  record.timed_steps = r.integer_in("timed_steps", 0, kMaxSteps);
  record.timed_seconds = r.non_negative("timed_seconds");
  record.stop_reason = r.string("stop_reason");
  record.timer = r.string("timer");
  record.peak_memory_bytes = r.non_negative("peak_memory_bytes");
  record.skipped_steps = r.integer_in("skipped_steps", 0, kMaxSteps);
  record.total_steps = r.integer_in("total_steps", 0, kMaxSteps);
  // Timed steps are among all steps (warm-up + timed).
  if (record.timed_steps > record.total_steps) {
    r.fail(r.field("timed_steps"), "is " + std::to_string(record.timed_steps) +
                                       ", above total_steps " + std::to_string(record.total_steps));
  }
  // Records written before the first step's loss was kept have none: not available.
  if (r.has("first_loss"))
    record.first_loss = r.number_in("first_loss", -kMaxQuantity, kMaxQuantity);
  record.final_loss = r.number_in("final_loss", -kMaxQuantity, kMaxQuantity);
  // GradScaler's scale is a float.
  record.final_loss_scale = r.number_in("final_loss_scale", 0, std::numeric_limits<float>::max());
  // Records written before the windows' losses were kept have none.
  if (r.has("window_losses")) {
    record.window_losses = r.nullable_numbers_in("window_losses", -kMaxQuantity, kMaxQuantity);
  }

  // Records written before telemetry existed have no "telemetry" object: read as unavailable.
  if (parsed.contains("telemetry")) record.telemetry = read_telemetry(r.child("telemetry"));

  const json& metrics = r.at("metrics");
  if (!metrics.is_object()) r.fail(r.field("metrics"), "is not an object");
  const Reader m = r.child("metrics");
  for (const auto& item : metrics.items()) {
    // Derived figures: FLOP/s, FLOPs per sample, seconds, fractions; some may be negative.
    record.metrics[item.key()] = m.number_in(item.key().c_str(), -kMaxMetric, kMaxMetric);
  }
  record.warnings = r.strings("warnings");
  check_windows(r, record);
  // After the windows' own checks: each kept loss belongs to a window.
  if (!record.window_losses.empty() &&
      record.window_throughput.size() != record.window_losses.size()) {
    r.fail("window_losses", "has " + std::to_string(record.window_losses.size()) +
                                " windows, window_throughput " +
                                std::to_string(record.window_throughput.size()));
  }
  // Absent in single-process records and in every record before data-parallel runs existed.
  if (r.has("distributed")) record.distributed = read_distributed(r.child("distributed"));
  return record;
}

}  // namespace gpuperf
