#include "gpuperf/results/export.h"

#include <stdlib.h>  // NOLINT(modernize-deprecated-headers): getloadavg is not in <cstdlib>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuperf/base/not_available.h"
#include "gpuperf/results/csv.h"
#include "gpuperf/timing/statistics.h"

namespace gpuperf {
namespace {

// ---- Google Benchmark JSON ----

// The repetitions of one benchmark family, in `time_unit` per iteration, and its aggregates.
struct GbenchFamily {
  std::string name;
  std::int64_t iterations = 1;  ///< steps, calls or operations per repetition
  std::vector<double> times;    ///< per repetition, time_unit per iteration
  std::string time_unit = "ms";
  std::string rate_field;     ///< "items_per_second", "bytes_per_second" or ""
  std::vector<double> rates;  ///< per repetition, for rate_field
};

nlohmann::json gbench_run(const GbenchFamily& f, int family_index, std::size_t repetition,
                          double time) {
  nlohmann::json run = {{"name", f.name},
                        {"family_index", family_index},
                        {"per_family_instance_index", 0},
                        {"run_name", f.name},
                        {"run_type", "iteration"},
                        {"repetitions", f.times.size()},
                        {"repetition_index", repetition},
                        {"threads", 1},
                        {"iterations", f.iterations},
                        {"real_time", time},
                        {"cpu_time", time},
                        {"time_unit", f.time_unit}};
  if (!f.rate_field.empty()) run[f.rate_field] = f.rates[repetition];
  return run;
}

nlohmann::json gbench_aggregate(const GbenchFamily& f, int family_index, const std::string& what,
                                double value) {
  return {{"name", f.name + "_" + what},
          {"family_index", family_index},
          {"per_family_instance_index", 0},
          {"run_name", f.name},
          {"run_type", "aggregate"},
          {"repetitions", f.times.size()},
          {"threads", 1},
          {"aggregate_name", what},
          {"aggregate_unit", what == "cv" ? "percentage" : "time"},
          {"iterations", f.times.size()},
          {"real_time", value},
          {"cpu_time", value},
          {"time_unit", f.time_unit}};
}

// Google Benchmark's machine fields, read when the file is written (the programs write it right
// after their run): CPU count, the first CPU's clock in MHz from /proc/cpuinfo (0 where it has
// none), and the 1, 5 and 15-minute load averages (empty where getloadavg() fails), so that a
// reader can tell a busy host from a quiet one.
void add_host_context(nlohmann::json& context) {
  context["num_cpus"] = static_cast<std::int64_t>(::sysconf(_SC_NPROCESSORS_ONLN));
  double mhz = 0;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) mhz = std::strtod(line.c_str() + colon + 1, nullptr);
      break;
    }
  }
  context["mhz_per_cpu"] = static_cast<std::int64_t>(std::llround(mhz));
  double load[3];
  context["load_avg"] = ::getloadavg(load, 3) == 3
                            ? nlohmann::json::array({load[0], load[1], load[2]})
                            : nlohmann::json::array();
}

void write_gbench(std::ostream& out, const std::vector<GbenchFamily>& families,
                  const std::string& date, const std::string& command,
                  const DeviceFingerprint& device) {
  nlohmann::json benchmarks = nlohmann::json::array();
  int index = 0;
  for (const auto& f : families) {
    if (f.times.empty()) continue;
    for (std::size_t i = 0; i < f.times.size(); ++i) {
      benchmarks.push_back(gbench_run(f, index, i, f.times[i]));
    }
    const Summary s = summarize(f.times);
    benchmarks.push_back(gbench_aggregate(f, index, "mean", s.mean));
    benchmarks.push_back(gbench_aggregate(f, index, "median", s.median));
    benchmarks.push_back(gbench_aggregate(f, index, "stddev", s.stdev));
    benchmarks.push_back(gbench_aggregate(f, index, "cv", s.mean > 0 ? s.stdev / s.mean : 0));
    ++index;
  }
  nlohmann::json context = {{"date", date},
                            {"host_name", device.host},
                            {"executable", command.substr(0, command.find(' '))},
                            {"command", command},
                            {"device", device.name},
                            {"libtorch_version", device.libtorch_version},
                            {"gpuperf_version", device.gpuperf_version},
                            {"caches", nlohmann::json::array()},
                            {"library_build_type", "release"}};
  add_host_context(context);
  out << nlohmann::json{{"context", context}, {"benchmarks", benchmarks}}.dump(
             2, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
}

// A micro result's base unit and the factor from its display unit to it: "TFLOP/s" -> FLOP/s
// (1e12), "TOP/s" -> OP/s, "GB/s" -> B/s (1e9), "us" -> s (1e-6). A unit outside that list stays
// as it is, unscaled, so the row is still right about what it holds.
std::pair<std::string, double> micro_base_unit(const MicroResult& r) {
  static const std::map<std::string, std::string> kBase = {
      {"TFLOP/s", "FLOP/s"}, {"TOP/s", "OP/s"}, {"GB/s", "B/s"}, {"us", "s"}};
  const auto it = kBase.find(r.unit);
  if (it == kBase.end()) return {r.unit, 1.0};
  return {it->second, r.unit_scale};
}

}  // namespace

void write_csv(std::ostream& out, const RunRecord& record) {
  write_csv_header(out,
                   {"timestamp_utc", "model", "device", "precision", "memory_format", "optimizer",
                    "graph_mode", "kernel_fusion", "batch_size", "accumulation_steps", "world_size",
                    "window", "steps", "window_s", "throughput_samples_per_s", "peak_memory_bytes",
                    "job_throughput_samples_per_s"});
  const RunConfig& c = record.config;
  // The window rows are this process's (rank 0's in a data-parallel run); the last column is the
  // whole job's median: all ranks together where there are several.
  const double job = record.distributed.world_size > 1 ? record.distributed.global_throughput
                                                       : record.throughput.median;
  for (std::size_t i = 0; i < record.window_throughput.size(); ++i) {
    CsvRow row;
    row << record.timestamp_utc << c.model << record.device.name << c.precision << c.memory_format
        << c.optimizer << c.graph_mode << c.kernel_fusion << c.batch_size << c.accumulation_steps
        << record.distributed.world_size << static_cast<std::int64_t>(i + 1) << c.steps_per_window
        << (i < record.window_seconds.size() ? record.window_seconds[i] : kNotAvailable)
        << record.window_throughput[i] << record.peak_memory_bytes << job;
    row.end(out);
  }
}

void write_csv(std::ostream& out, const InferenceResult& result) {
  write_csv_header(out, {"timestamp_utc",
                         "model",
                         "device",
                         "precision",
                         "memory_format",
                         "graph_mode",
                         "kernel_fusion",
                         "kind",
                         "batch_size",
                         "offered_rate_per_s",
                         "calls",
                         "latency_mean_s",
                         "latency_min_s",
                         "latency_p50_s",
                         "latency_p90_s",
                         "latency_p95_s",
                         "latency_p99_s",
                         "latency_max_s",
                         "throughput_samples_per_s",
                         "mean_batch_size",
                         "saturated",
                         "peak_memory_bytes"});
  auto settings = [&](CsvRow& row) {
    row << result.timestamp_utc << result.model << result.fingerprint.name << result.precision
        << result.memory_format << graph_mode_name(result) << result.kernel_fusion;
  };
  auto latency = [](CsvRow& row, const LatencySummary& l) {
    row << l.mean << l.min << l.p50 << l.p90 << l.p95 << l.p99 << l.max;
  };
  for (const auto& b : result.batches) {
    CsvRow row;
    settings(row);
    row << "batch" << b.batch_size << kNotAvailable << b.iterations;
    latency(row, b.latency);
    row << b.throughput_median << static_cast<double>(b.batch_size) << false << b.peak_memory_bytes;
    row.end(out);
  }
  for (const auto& p : result.serving.points) {
    CsvRow row;
    settings(row);
    row << "serving" << result.serving_options.max_batch << p.offered_rate << p.requests;
    latency(row, p.latency);
    row << p.achieved_rate << p.mean_batch_size << p.saturated << kNotAvailable;
    row.end(out);
  }
}

void write_csv(std::ostream& out, const MicroReport& report) {
  write_csv_header(
      out, {"timestamp_utc", "device", "name", "category", "variant", "shape", "status", "unit",
            "windows", "median", "mean", "min", "max", "ci95_low", "ci95_high", "datasheet",
            "percent_of_datasheet", "work_per_call", "buffer_bytes"});
  for (const auto& r : report.results) {
    // The JSON keeps each result's display unit (TFLOP/s, GB/s, us); a table's column must not
    // hold TFLOP/s on one row and GB/s on the next at different scales, so every figure is in
    // its base unit (FLOP/s, OP/s, B/s, s), named on the row.
    const auto [unit, scale] = micro_base_unit(r);
    const double factor = scale;  // a structured binding cannot be captured in C++17
    const auto base = [factor](double v) { return std::isfinite(v) ? v * factor : v; };
    const bool measured = !r.windows.empty();
    CsvRow row;
    row << report.timestamp_utc << report.device.name << r.name << r.category << r.variant
        << r.shape << r.status << unit << static_cast<std::int64_t>(r.windows.size())
        << (measured ? base(r.summary.median) : kNotAvailable)
        << (measured ? base(r.summary.mean) : kNotAvailable)
        << (measured ? base(r.summary.min) : kNotAvailable)
        << (measured ? base(r.summary.max) : kNotAvailable)
        << (measured ? base(r.summary.ci95_low) : kNotAvailable)
        << (measured ? base(r.summary.ci95_high) : kNotAvailable) << base(r.datasheet)
        << r.percent_of_datasheet << r.work_per_call << r.buffer_bytes;
    row.end(out);
  }
}

// Sets f.times from per-iteration `seconds` in the unit Google Benchmark's readers show best:
// microseconds when the median is below 10 ms (a 0.33 ms inference call printed as 0 ms
// otherwise), else milliseconds.
void set_times(GbenchFamily& f, const std::vector<double>& seconds) {
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const bool micro = !sorted.empty() && sorted[sorted.size() / 2] < 10e-3;
  f.time_unit = micro ? "us" : "ms";
  f.times.clear();
  for (double s : seconds) f.times.push_back(s * (micro ? 1e6 : 1e3));
}

void write_gbench_json(std::ostream& out, const RunRecord& record) {
  const RunConfig& c = record.config;
  GbenchFamily f;
  f.name = "train/" + c.model + "/bs" + std::to_string(c.batch_size) + "/" + c.precision;
  // A step in micro-batches is another benchmark than one of the same batch in one pass.
  if (c.accumulation_steps > 1) f.name += "/acc" + std::to_string(c.accumulation_steps);
  if (record.distributed.world_size > 1) {
    f.name += "/ranks" + std::to_string(record.distributed.world_size);
  }
  f.iterations = c.steps_per_window;
  f.rate_field = "items_per_second";
  // Time per step needs the steps per window; a record without them (0) has no step times.
  const std::size_t n = c.steps_per_window > 0 ? std::min(record.window_seconds.size(),
                                                          record.window_throughput.size())
                                               : 0;
  std::vector<double> step_seconds;
  for (std::size_t i = 0; i < n; ++i) {
    step_seconds.push_back(record.window_seconds[i] / static_cast<double>(c.steps_per_window));
    f.rates.push_back(record.window_throughput[i]);
  }
  set_times(f, step_seconds);
  write_gbench(out, {f}, record.timestamp_utc, record.command, record.device);
}

void write_gbench_json(std::ostream& out, const InferenceResult& result) {
  std::vector<GbenchFamily> families;
  for (const auto& b : result.batches) {
    GbenchFamily f;
    f.name =
        "infer/" + result.model + "/bs" + std::to_string(b.batch_size) + "/" + result.precision;
    f.rate_field = "items_per_second";
    const std::vector<double> seconds =
        b.latencies.empty() ? std::vector<double>{b.latency.p50} : b.latencies;
    for (double s : seconds) f.rates.push_back(s > 0 ? static_cast<double>(b.batch_size) / s : 0);
    set_times(f, seconds);
    families.push_back(std::move(f));
  }
  write_gbench(out, families, result.timestamp_utc, result.command, result.fingerprint);
}

void write_gbench_json(std::ostream& out, const MicroReport& report) {
  std::vector<GbenchFamily> families;
  for (const auto& r : report.results) {
    if (r.windows.empty() || !(r.work_per_call > 0)) continue;
    GbenchFamily f;
    f.name = "micro/" + r.name + (r.shape.empty() ? "" : "/" + r.shape);
    f.time_unit = "us";
    f.iterations = r.calls_per_window;
    f.rate_field = r.unit == "GB/s" ? "bytes_per_second" : "items_per_second";
    for (double rate : r.windows) {
      const double per_second = rate * r.unit_scale;  // bytes, FLOPs or OPs per second
      f.times.push_back(per_second > 0 ? r.work_per_call / per_second * 1e6 : 0);
      f.rates.push_back(per_second);
    }
    families.push_back(std::move(f));
  }
  write_gbench(out, families, report.timestamp_utc, report.command, report.device);
}

}  // namespace gpuperf
