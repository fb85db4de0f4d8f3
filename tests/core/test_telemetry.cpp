#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_telemetry.h"
#include "gpuperf/base/error.h"
#include "gpuperf/telemetry/clock_events.h"
#include "gpuperf/telemetry/sampler.h"
#include "gpuperf/telemetry/snapshot.h"
#include "gpuperf/telemetry/telemetry.h"

using gpuperf::TelemetrySample;
using gpuperf::TelemetrySampler;
using gpuperf::TelemetrySamplerOptions;
using gpuperf::TelemetrySummary;
using gpuperf::testing::FakeDevice;
using gpuperf::testing::FakeFrame;
using gpuperf::testing::FakeSystem;
namespace ce = gpuperf::clock_event;

namespace {

TelemetrySample sample(double t, std::optional<double> watts,
                       std::optional<std::uint64_t> millijoules = std::nullopt,
                       std::optional<double> sm_mhz = std::nullopt,
                       std::optional<std::uint64_t> reasons = std::nullopt) {
  TelemetrySample s;
  s.time_seconds = t;
  s.power_watts = watts;
  s.total_energy_millijoules = millijoules;
  s.sm_clock_mhz = sm_mhz;
  s.clock_event_reasons = reasons;
  return s;
}

bool contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

FakeFrame busy_frame(double watts, std::uint64_t millijoules, std::uint64_t reasons = 0) {
  FakeFrame f;
  f.power_watts = watts;
  f.sm_clock_mhz = 1980;
  f.memory_clock_mhz = 3201;
  f.temperature_celsius = 55;
  f.utilization = gpuperf::Utilization{97, 40};
  f.memory = gpuperf::MemoryInfo{20.0 * 1024 * 1024 * 1024, 141.0 * 1024 * 1024 * 1024, {}};
  f.clock_event_reasons = reasons;
  f.total_energy_millijoules = millijoules;
  return f;
}

// A system with one fully populated GPU and one that answers nothing.
FakeSystem two_gpu_system() {
  FakeSystem system;
  system.devices.push_back(std::make_unique<FakeDevice>(
      std::vector<FakeFrame>{busy_frame(250.5, 123456789, ce::kSwPowerCap)}, 0));
  auto bare = std::make_unique<FakeDevice>(std::vector<FakeFrame>{FakeFrame{}}, 1);
  bare->name_ = bare->uuid_ = bare->pci_bus_id_ = bare->compute_capability_ = std::nullopt;
  bare->power_limit_watts_ = bare->sm_clock_max_mhz_ = bare->memory_clock_max_mhz_ = std::nullopt;
  bare->ecc_enabled_ = std::nullopt;
  bare->pcie_ = std::nullopt;
  bare->nvlink_links_up_ = std::nullopt;
  bare->processes_ = std::nullopt;
  system.devices.push_back(std::move(bare));
  return system;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Clock-event reasons

TEST_CASE("clock-event reason bits decode to NVML's names in bit order", "[telemetry]") {
  using V = std::vector<std::string>;
  CHECK(gpuperf::clock_event_reason_names(0).empty());
  CHECK(gpuperf::clock_event_reason_names(0x1 | 0x4 | 0x40) ==
        V{"gpu_idle", "sw_power_cap", "hw_thermal_slowdown"});
  CHECK(gpuperf::clock_event_reason_names(0x1FF) ==
        V{"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
          "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
          "display_clock_setting"});
  // A bit this table does not know (a newer driver) is shown, not dropped.
  CHECK(gpuperf::clock_event_reason_names(0x8 | 0x1000) == V{"hw_slowdown", "unknown_0x1000"});
  CHECK(gpuperf::describe_clock_event_reasons(0) == "none");
  CHECK(gpuperf::describe_clock_event_reasons(0x20 | 0x80, " + ") ==
        "sw_thermal_slowdown + hw_power_brake_slowdown");
}

TEST_CASE("thermal, power-cap and hardware slowdowns count as throttling, idle does not",
          "[telemetry]") {
  CHECK(gpuperf::is_throttling(ce::kSwPowerCap));
  CHECK(gpuperf::is_throttling(ce::kHwSlowdown));
  CHECK(gpuperf::is_throttling(ce::kSwThermalSlowdown));
  CHECK(gpuperf::is_throttling(ce::kHwThermalSlowdown));
  CHECK(gpuperf::is_throttling(ce::kHwPowerBrakeSlowdown));
  CHECK_FALSE(gpuperf::is_throttling(0));
  CHECK_FALSE(gpuperf::is_throttling(ce::kGpuIdle));
  CHECK_FALSE(gpuperf::is_throttling(ce::kApplicationsClocksSetting | ce::kSyncBoost |
                                     ce::kDisplayClockSetting));
  for (const auto& reason : gpuperf::clock_event_reasons()) {
    CHECK(reason.throttling == gpuperf::is_throttling(reason.bit));
  }
}

// ---------------------------------------------------------------------------------------------
// Summaries

TEST_CASE("a summary averages power, clock and utilization and keeps their extremes",
          "[telemetry]") {
  std::vector<TelemetrySample> samples = {sample(0.0, 200, {}, 1980), sample(0.1, 300, {}, 1900),
                                          sample(0.2, 250, {}, 1920)};
  samples[0].temperature_celsius = 60;
  samples[1].temperature_celsius = 66;
  samples[0].gpu_utilization_percent = 90;
  samples[2].gpu_utilization_percent = 100;
  samples[1].memory_used_bytes = 5e9;
  samples[2].memory_used_bytes = 7e9;
  const TelemetrySummary t = gpuperf::summarize_telemetry(samples, gpuperf::TelemetrySummary::kNaN);
  CHECK(t.available);
  CHECK(t.sample_count == 3);
  CHECK(t.duration_seconds == Approx(0.2));
  CHECK(t.power_mean_watts == Approx(250));
  CHECK(t.power_max_watts == 300);
  CHECK(t.sm_clock_mean_hz == Approx(1933.333333e6));
  CHECK(t.sm_clock_min_hz == Approx(1900e6));
  CHECK(t.sm_clock_max_hz == Approx(1980e6));
  CHECK(t.temperature_max_celsius == 66);
  CHECK(t.gpu_utilization_mean_percent == Approx(95));
  CHECK(t.memory_used_max_bytes == 7e9);
  CHECK(t.warnings.empty());
}

TEST_CASE("energy is the energy counter's difference over the window, per sample and per joule",
          "[telemetry]") {
  // Power readings that integrate to 60 J: the counter's 250 J must win.
  const std::vector<TelemetrySample> samples = {
      sample(0.0, 50, 5'000'000), sample(0.5, 70, 5'100'000), sample(1.0, 50, 5'250'000)};
  const TelemetrySummary t = gpuperf::summarize_telemetry(samples, 1000);
  CHECK(t.energy_source == "energy counter");
  CHECK(t.energy_joules == Approx(250));
  CHECK(t.processed_samples == 1000);
  CHECK(t.energy_per_sample_joules == Approx(0.25));
  CHECK(t.samples_per_joule == Approx(4));
}

TEST_CASE("a counter that goes backwards is a reset: energy falls back to integrated power",
          "[telemetry]") {
  const std::vector<TelemetrySample> samples = {sample(0.0, 100, 9'000'000),
                                                sample(1.0, 300, 50),  // driver reloaded
                                                sample(2.0, 100, 400'050)};
  const TelemetrySummary t = gpuperf::summarize_telemetry(samples, 400);
  CHECK(t.energy_source == "integrated power");
  // Trapezoid: (100 + 300) / 2 * 1 + (300 + 100) / 2 * 1 = 400 J.
  CHECK(t.energy_joules == Approx(400));
  CHECK(t.energy_per_sample_joules == Approx(1));
  CHECK(contains(t.warnings, "energy counter went backwards"));
}

TEST_CASE("without a counter at both ends, energy integrates power and bridges missing readings",
          "[telemetry]") {
  // The counter exists at the start only (a read failed at the end), and the middle sample has
  // no power: the integral bridges it, (100 + 300) / 2 * 2 s = 400 J.
  const std::vector<TelemetrySample> samples = {sample(0.0, 100, 1000), sample(1.0, std::nullopt),
                                                sample(2.0, 300)};
  const TelemetrySummary t = gpuperf::summarize_telemetry(samples, 800);
  CHECK(t.energy_source == "integrated power");
  CHECK(t.energy_joules == Approx(400));
  CHECK(t.samples_per_joule == Approx(2));
  CHECK(t.power_mean_watts == Approx(200));
}

TEST_CASE("readings that are missing leave NaN in the summary, never zero", "[telemetry]") {
  const std::vector<TelemetrySample> samples = {sample(0.0, std::nullopt),
                                                sample(1.0, std::nullopt)};
  const TelemetrySummary t = gpuperf::summarize_telemetry(samples, 100);
  CHECK(t.available);
  CHECK(t.sample_count == 2);
  CHECK(std::isnan(t.power_mean_watts));
  CHECK(std::isnan(t.power_max_watts));
  CHECK(std::isnan(t.energy_joules));
  CHECK(t.energy_source.empty());
  CHECK(std::isnan(t.energy_per_sample_joules));
  CHECK(std::isnan(t.samples_per_joule));
  CHECK(std::isnan(t.sm_clock_mean_hz));
  CHECK(std::isnan(t.temperature_max_celsius));
  CHECK(t.clock_event_reasons == 0);

  // One power reading is not enough to integrate.
  const TelemetrySummary one = gpuperf::summarize_telemetry({sample(0.0, 250)}, 100);
  CHECK(one.power_mean_watts == 250);
  CHECK(std::isnan(one.energy_joules));

  // Without the processed-sample count, energy stays but the per-sample figures do not exist.
  const TelemetrySummary unknown_work = gpuperf::summarize_telemetry(
      {sample(0.0, 100, 0), sample(1.0, 100, 100'000)}, TelemetrySummary::kNaN);
  CHECK(unknown_work.energy_joules == Approx(100));
  CHECK(std::isnan(unknown_work.energy_per_sample_joules));
  CHECK(std::isnan(unknown_work.samples_per_joule));
}

TEST_CASE("a summary of no samples says telemetry is unavailable", "[telemetry]") {
  const TelemetrySummary t = gpuperf::summarize_telemetry({}, 100);
  CHECK_FALSE(t.available);
  CHECK(t.unavailable_reason == "no telemetry samples were taken");
}

TEST_CASE("throttling and a moving SM clock produce warnings that name them", "[telemetry]") {
  const std::vector<TelemetrySample> samples = {
      sample(0.0, 690, {}, 1980, 0), sample(0.1, 700, {}, 1755, ce::kSwPowerCap),
      sample(0.2, 700, {}, 1500, ce::kSwPowerCap | ce::kSwThermalSlowdown),
      sample(0.3, 700, {}, 1600, ce::kHwSlowdown)};
  TelemetrySamplerOptions options;
  options.clock_change_warning_fraction = 0.1;
  const TelemetrySummary t = gpuperf::summarize_telemetry(samples, 100, options);
  CHECK(t.clock_event_reasons == (ce::kSwPowerCap | ce::kSwThermalSlowdown | ce::kHwSlowdown));
  CHECK(contains(t.warnings, "thermal throttling during measurement (1 of 4 samples"));
  CHECK(contains(t.warnings, "power-cap throttling during measurement (2 of 4 samples"));
  CHECK(contains(t.warnings, "hardware slowdown during measurement (1 of 4 samples"));
  // (1980 - 1500) / 1980 = 24%.
  CHECK(contains(t.warnings, "SM clock moved by more than 10% during measurement (1500 to 1980"));

  // A clock that stays within the fraction and no throttling bits: no warnings.
  const TelemetrySummary calm = gpuperf::summarize_telemetry(
      {sample(0.0, 500, {}, 1980, ce::kGpuIdle), sample(0.1, 500, {}, 1900, 0)}, 100, options);
  CHECK(calm.warnings.empty());
  CHECK(calm.clock_event_reasons == ce::kGpuIdle);
}

TEST_CASE("sampler options reject bad values, naming the field and the value", "[telemetry]") {
  TelemetrySamplerOptions options;
  CHECK_NOTHROW(options.validate());
  options.period_seconds = 0;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("period_seconds") && Catch::Contains("0.000000"));
  options.period_seconds = -1;
  CHECK_THROWS_AS(options.validate(), gpuperf::ConfigError);
  options.period_seconds = 0.1;
  options.clock_change_warning_fraction = 1.5;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("clock_change_warning_fraction") && Catch::Contains("1.5"));
  FakeDevice device({FakeFrame{}});
  CHECK_THROWS_AS(TelemetrySampler(device, options), gpuperf::ConfigError);
}

// ---------------------------------------------------------------------------------------------
// Reading samples and the sampler thread

TEST_CASE("a failing reading leaves its field empty and reports the error once", "[telemetry]") {
  FakeFrame frame = busy_frame(300, 1000);
  frame.power_fails = true;
  FakeDevice device({frame});
  std::vector<std::string> errors;
  const TelemetrySample first = gpuperf::read_telemetry_sample(device, 0.0, errors);
  const TelemetrySample second = gpuperf::read_telemetry_sample(device, 0.1, errors);
  CHECK_FALSE(first.power_watts);
  CHECK(first.sm_clock_mhz == 1980);
  CHECK(second.total_energy_millijoules == 1000u);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("nvmlDeviceGetPowerUsage") != std::string::npos);

  const TelemetrySummary t = gpuperf::summarize_telemetry({first, second}, 10, {}, errors);
  CHECK(contains(t.warnings, "telemetry reading failed: nvmlDeviceGetPowerUsage: GPU is lost"));
}

TEST_CASE("the sampler samples at start and at stop, so a window's energy is exact",
          "[telemetry]") {
  FakeDevice device({busy_frame(400, 1'000), busy_frame(420, 61'000)});
  TelemetrySamplerOptions options;
  options.period_seconds = 3600;  // the thread never gets to sample: only start and stop do
  TelemetrySampler sampler(device, options);
  CHECK_FALSE(sampler.running());
  sampler.start();
  CHECK(sampler.running());
  device.set_frame(1);
  const TelemetrySummary t = sampler.stop(600);
  CHECK_FALSE(sampler.running());
  CHECK(t.available);
  CHECK(t.sample_count == 2);
  CHECK(t.energy_source == "energy counter");
  CHECK(t.energy_joules == Approx(60));
  CHECK(t.energy_per_sample_joules == Approx(0.1));
  CHECK(t.samples_per_joule == Approx(10));
  CHECK(t.power_max_watts == 420);
  CHECK(sampler.samples().size() == 2);

  // The next window starts afresh.
  device.set_frame(0);
  sampler.start();
  const TelemetrySummary again = sampler.stop(0);
  CHECK(again.sample_count == 2);
  CHECK(again.energy_joules == Approx(0));
  CHECK(std::isnan(again.samples_per_joule));
}

TEST_CASE("starting a running sampler or stopping a stopped one is an error", "[telemetry]") {
  FakeDevice device({busy_frame(100, 0)});
  TelemetrySamplerOptions options;
  options.period_seconds = 3600;
  TelemetrySampler sampler(device, options);
  CHECK_THROWS_WITH(sampler.stop(1), Catch::Contains("not running"));
  sampler.start();
  CHECK_THROWS_WITH(sampler.start(), Catch::Contains("already running"));
  CHECK(sampler.stop(1).sample_count == 2);
  CHECK_THROWS_AS(sampler.stop(1), gpuperf::Error);
}

TEST_CASE("a sampler destroyed while running stops its thread", "[telemetry]") {
  FakeDevice device({busy_frame(100, 0)});
  TelemetrySamplerOptions options;
  options.period_seconds = 0.001;
  {
    TelemetrySampler sampler(device, options);
    sampler.start();
  }
  const std::size_t reads = device.energy_reads();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(device.energy_reads() == reads);  // no thread left reading the device
}

TEST_CASE("start and stop work from different threads while the sampler thread reads",
          "[telemetry]") {
  // Frame i has a counter of i joules: whatever number of samples the thread manages to take on
  // a loaded machine, the window's energy must equal its last counter minus its first.
  std::vector<FakeFrame> frames;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    frames.push_back(busy_frame(100.0 + static_cast<double>(i % 7), i * 1000));
  }
  FakeDevice device(std::move(frames));
  device.auto_advance = true;
  TelemetrySamplerOptions options;
  options.period_seconds = 0.001;
  TelemetrySampler sampler(device, options);

  std::thread starter([&] { sampler.start(); });
  starter.join();
  // Readers on other threads while the sampler thread appends (ThreadSanitizer watches this).
  std::thread reader([&] {
    for (int i = 0; i < 50; ++i) {
      (void)sampler.running();
      (void)sampler.samples();
    }
  });
  // Give the thread a chance to take a few samples; never assert on how many it took.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (sampler.samples().size() < 5 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  TelemetrySummary t;
  std::thread stopper([&] { t = sampler.stop(1000); });
  stopper.join();
  reader.join();

  const std::vector<TelemetrySample> samples = sampler.samples();
  REQUIRE(samples.size() >= 2);
  CHECK(t.sample_count == static_cast<std::int64_t>(samples.size()));
  CHECK(device.energy_reads() == samples.size());
  CHECK(t.energy_source == "energy counter");
  const double expected = static_cast<double>(*samples.back().total_energy_millijoules -
                                              *samples.front().total_energy_millijoules) /
                          1000.0;
  CHECK(t.energy_joules == Approx(expected));
  CHECK(t.energy_joules == Approx(static_cast<double>(samples.size() - 1)));
  for (std::size_t i = 1; i < samples.size(); ++i) {
    CHECK(samples[i].time_seconds >= samples[i - 1].time_seconds);
  }
}

// ---------------------------------------------------------------------------------------------
// Snapshots and printers

TEST_CASE("the table shows every reading of a GPU and n/a where one is absent", "[telemetry]") {
  FakeSystem system = two_gpu_system();
  gpuperf::SystemSnapshot snapshot = gpuperf::take_snapshot(system);
  snapshot.timestamp_utc = "2026-11-29T20:00:00Z";
  std::ostringstream out;
  gpuperf::write_snapshot_table(out, snapshot);
  const auto lines = split_lines(out.str());
  CHECK(lines.at(0) == "driver 580.95.05   CUDA 13.0   2 GPUs   2026-11-29T20:00:00Z");
  CHECK(contains(lines,
                 "GPU 0  NVIDIA H200  (GPU-0b6c5b0e-1111-2222-3333-444455556666, "
                 "00000000:18:00.0)"));
  CHECK(contains(lines, "  memory          20480 / 144384 MiB used"));
  CHECK(contains(lines, "  utilization     gpu 97 %, memory 40 %"));
  CHECK(contains(lines, "  temperature     55 C"));
  CHECK(contains(lines, "  power           250.5 W of 700.0 W limit"));
  CHECK(contains(lines, "  SM clock        1980 / 1980 MHz max"));
  CHECK(contains(lines, "  memory clock    3201 / 3201 MHz max"));
  CHECK(contains(lines, "  clock events    sw_power_cap  (throttling)"));
  CHECK(contains(lines, "  energy counter  123456.789 J since driver load"));
  CHECK(contains(lines, "  ECC             on"));
  CHECK(contains(lines, "  PCIe            gen 5 x16 (max gen 5 x16)"));
  CHECK(contains(lines, "  NVLink          18 links up"));
  CHECK(contains(lines, "  compute cap.    9.0"));
  CHECK(contains(lines, "  processes       pid 4242 python3 [compute] 1024 MiB"));
  // The second GPU answers nothing.
  CHECK(contains(lines, "GPU 1  (unknown)"));
  CHECK(contains(lines, "  power           n/a W of n/a W limit"));
  CHECK(contains(lines, "  PCIe            n/a"));
  CHECK(contains(lines, "  processes       n/a"));
}

TEST_CASE("snapshot JSON carries every field and null for absent readings", "[telemetry]") {
  FakeSystem system = two_gpu_system();
  const auto json =
      nlohmann::json::parse(gpuperf::snapshot_to_json(gpuperf::take_snapshot(system)));
  CHECK(json["driver_version"] == "580.95.05");
  CHECK(json["available"] == true);
  CHECK(json["cuda_driver_version"] == "13.0");
  REQUIRE(json["devices"].size() == 2);
  const auto& gpu = json["devices"][0];
  CHECK(gpu["name"] == "NVIDIA H200");
  CHECK(gpu["power_draw_watts"] == 250.5);
  CHECK(gpu["power_limit_watts"] == 700.0);
  CHECK(gpu["memory_total_bytes"] == 141.0 * 1024 * 1024 * 1024);
  CHECK(gpu["sm_clock_max_mhz"] == 1980.0);
  CHECK(gpu["clock_event_reasons"] == ce::kSwPowerCap);
  CHECK(gpu["clock_event_reason_names"] == std::vector<std::string>{"sw_power_cap"});
  CHECK(gpu["throttling"] == true);
  CHECK(gpu["total_energy_millijoules"] == 123456789);
  CHECK(gpu["pcie_link_generation"] == 5);
  CHECK(gpu["nvlink_links_up"] == 18);
  CHECK(gpu["processes"][0]["pid"] == 4242);
  CHECK(gpu["errors"].empty());
  const auto& bare = json["devices"][1];
  for (const char* key :
       {"name", "power_draw_watts", "memory_used_bytes", "sm_clock_mhz", "clock_event_reasons",
        "throttling", "ecc_enabled", "pcie_link_generation", "nvlink_links_up", "processes"}) {
    INFO(key);
    CHECK(bare[key].is_null());
  }
  // Watch mode writes one object per line.
  const std::string line = gpuperf::snapshot_to_json(gpuperf::take_snapshot(system), -1);
  CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("watch rows line up under their header and show a dash for absent readings",
          "[telemetry]") {
  FakeSystem system = two_gpu_system();
  std::ostringstream out;
  gpuperf::write_watch_header(out);
  gpuperf::write_watch_rows(out, gpuperf::take_snapshot(system, false), "12:00:01");
  const auto lines = split_lines(out.str());
  REQUIRE(lines.size() == 4);
  // nvidia-smi dmon's names and units: sm/mem are utilization %, pclk/mclk the clocks.
  CHECK(lines[0] ==
        "#    time  gpu     pwr   limit  gtemp    sm   mem   mclk   pclk       fb"
        "      energy  reasons");
  CHECK(lines[1] ==
        "#HH:MM:SS  Idx       W       W      C     %     %    MHz    MHz       MB"
        "           J");
  CHECK(lines[2] ==
        " 12:00:01    0   250.5   700.0     55    97    40   3201   1980    20480"
        "    123456.8  sw_power_cap");
  CHECK(lines[3] ==
        " 12:00:01    1       -       -      -     -     -      -      -        -"
        "           -  -");
  // Every value ends where its column name ends.
  for (const char* column :
       {"gpu", "pwr", "limit", "gtemp", "sm", "mem", "mclk", "pclk", "fb", "energy"}) {
    INFO(column);
    const auto end = lines[0].find(column) + std::string(column).size();
    CHECK(lines[2][end - 1] != ' ');
    CHECK(lines[2][end] == ' ');
  }
}

TEST_CASE("a telemetry summary prints one reading per line with its warnings", "[telemetry]") {
  const TelemetrySummary t = gpuperf::summarize_telemetry(
      {sample(0.0, 600, 0, 1980, ce::kSwPowerCap), sample(2.0, 700, 1'300'000, 1900, 0)}, 13000);
  std::ostringstream out;
  gpuperf::write_telemetry_summary(out, t);
  const auto lines = split_lines(out.str());
  CHECK(contains(lines, "  samples               2 over 2.00 s"));
  CHECK(contains(lines, "  power mean / max      650.0 / 700.0 W"));
  CHECK(contains(lines, "  energy                1300.000 J (energy counter)"));
  CHECK(contains(lines, "  samples per joule     10.000"));
  CHECK(contains(lines, "  SM clock mean / min   1940 / 1900 MHz"));
  CHECK(contains(lines, "  warning               power-cap throttling during measurement"));

  std::ostringstream none;
  gpuperf::write_telemetry_summary(none, gpuperf::summarize_telemetry({}, 1));
  CHECK(none.str() == "  telemetry unavailable: no telemetry samples were taken\n");
}

TEST_CASE("a snapshot records a failing reading as an error and keeps the others", "[telemetry]") {
  FakeFrame frame = busy_frame(300, 5);
  frame.power_fails = true;
  FakeDevice device({frame});
  const gpuperf::DeviceSnapshot s = gpuperf::take_device_snapshot(device);
  CHECK_FALSE(s.power_watts);
  CHECK(s.temperature_celsius == 55);
  REQUIRE(s.errors.size() == 1);
  CHECK(s.errors[0].find("GPU is lost") != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Finding devices and opening NVML

TEST_CASE("PCI bus ids parse with CUDA's short and NVML's long domain", "[telemetry]") {
  const auto nvml = gpuperf::parse_pci_bus_id("00000000:18:00.0");
  const auto cuda = gpuperf::parse_pci_bus_id("0000:18:00.0");
  REQUIRE(nvml);
  REQUIRE(cuda);
  CHECK(*nvml == *cuda);
  CHECK(nvml->bus == 0x18);
  const auto upper = gpuperf::parse_pci_bus_id("0001:AB:1F.3");
  REQUIRE(upper);
  CHECK(upper->domain == 1);
  CHECK(upper->bus == 0xab);
  CHECK(upper->device == 0x1f);
  CHECK(upper->function == 3);
  CHECK(gpuperf::parse_pci_bus_id("18:00.0")->domain == 0);
  CHECK_FALSE(gpuperf::parse_pci_bus_id("GPU-1234"));
  CHECK_FALSE(gpuperf::parse_pci_bus_id("0000:zz:00.0"));
  CHECK_FALSE(gpuperf::parse_pci_bus_id(""));
}

TEST_CASE("a CUDA device's PCI location or UUID finds its telemetry device", "[telemetry]") {
  FakeSystem system = two_gpu_system();
  system.devices[1]->pci_bus_id_ = "00000000:9A:00.0";
  CHECK(system.find_by_pci_location(0, 0x18, 0) == system.devices[0].get());
  CHECK(system.find_by_pci_location(0, 0x9a, 0) == system.devices[1].get());
  CHECK(system.find_by_pci_location(0, 0x42, 0) == nullptr);
  CHECK(system.find_by_pci_bus_id("0000:9a:00.0") == system.devices[1].get());
  CHECK(system.find_by_uuid("gpu-0B6C5B0E-1111-2222-3333-444455556666") == system.devices[0].get());
  CHECK(system.find_by_uuid("GPU-ffffffff") == nullptr);
  CHECK_THROWS_AS(system.device(7), gpuperf::ConfigError);
}

TEST_CASE("a link is NVLink when a link ends at the other GPU, else NVSwitch, else PCIe",
          "[telemetry]") {
  FakeSystem system = two_gpu_system();
  FakeDevice& a = *system.devices[0];
  FakeDevice& b = *system.devices[1];
  b.pci_bus_id_ = "00000000:9A:00.0";
  system.ancestor = gpuperf::PcieTopology::kSystem;

  // Nothing from NVML but the PCIe path.
  gpuperf::GpuLink link = gpuperf::describe_gpu_link(system, a, b);
  CHECK(link.type == "PCIe");
  CHECK(link.nvlinks == 0);
  CHECK(link.detail == "PCIe, across CPU sockets (SYS)");

  // Direct links, written with CUDA's short domain on one side: 2 of 3 end at b.
  a.nvlink_remote_ = std::vector<std::string>{"0000:9a:00.0", "0000:9a:00.0", "0000:c1:00.0"};
  link = gpuperf::describe_gpu_link(system, a, b);
  CHECK(link.type == "NVLink");
  CHECK(link.nvlinks == 2);
  CHECK(gpuperf::describe_gpu_link(system, b, a).nvlinks == 2);  // answered by a's end only

  // Every link ends at a switch: NVLink through NVSwitch when the driver reports NVLink P2P.
  a.nvlink_remote_ = std::vector<std::string>(18, "00000000:C1:00.0");
  link = gpuperf::describe_gpu_link(system, a, b);
  CHECK(link.type == "PCIe");
  system.nvlink_peer = true;
  link = gpuperf::describe_gpu_link(system, a, b);
  CHECK(link.type == "NVLink (NVSwitch)");
  CHECK(link.nvlinks == 0);
  CHECK(link.detail == "NVLink through NVSwitch, 18 links up");

  // No answer at all.
  system.nvlink_peer.reset();
  system.ancestor.reset();
  a.nvlink_remote_.reset();
  link = gpuperf::describe_gpu_link(system, a, b);
  CHECK(link.type == "unknown");
  CHECK_FALSE(link.pcie);
  CHECK(gpuperf::to_string(gpuperf::PcieTopology::kSingleSwitch) == "one PCIe switch (PIX)");
}

TEST_CASE("opening NVML from a missing library says why telemetry is unavailable", "[telemetry]") {
  const auto missing = gpuperf::open_nvml_telemetry("/nonexistent/libnvidia-ml.so.1");
  CHECK_FALSE(missing);
  CHECK(missing.unavailable_reason.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);

  // A library that loads but is not NVML.
  const auto not_nvml = gpuperf::open_nvml_telemetry("libm.so.6");
  CHECK_FALSE(not_nvml);
  CHECK(not_nvml.unavailable_reason == "NVML library has no nvmlInit_v2 (driver too old)");

  // The real one either opens (GPU machine) or explains itself (CI): never throws.
  const auto real = gpuperf::open_nvml_telemetry();
  CHECK((static_cast<bool>(real) || !real.unavailable_reason.empty()));
}

TEST_CASE("the NVML loader reads every field through a stand-in libnvidia-ml", "[telemetry]") {
  // The test holds its own reference to the stand-in to read its session count.
  void* fake = dlopen(GPUPERF_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(fake != nullptr);
  const auto sessions = reinterpret_cast<int (*)()>(dlsym(fake, "fake_nvml_sessions"));
  REQUIRE(sessions != nullptr);
  {
    auto opened = gpuperf::open_nvml_telemetry(GPUPERF_FAKE_NVML);
    REQUIRE(opened);
    CHECK(sessions() == 1);
    gpuperf::TelemetrySystem& system = *opened.system;
    CHECK(system.driver_version() == "999.12.34");
    CHECK(system.cuda_driver_version() == "13.1");
    REQUIRE(system.device_count() == 2);

    const gpuperf::DeviceSnapshot h200 = gpuperf::take_device_snapshot(system.device(0));
    CHECK(h200.errors.empty());
    CHECK(h200.name == "Fake H200");
    CHECK(h200.pci_bus_id == "00000000:18:00.0");
    REQUIRE(h200.memory);
    CHECK(h200.memory->total_bytes == static_cast<double>(150ULL << 30));
    CHECK(h200.memory->used_bytes == static_cast<double>(1ULL << 30));
    CHECK(h200.memory->reserved_bytes == static_cast<double>(512ULL << 20));
    CHECK(h200.utilization->gpu_percent == 50);
    CHECK(h200.temperature_celsius == 40);
    CHECK(h200.power_watts == Approx(123.456));
    CHECK(h200.power_limit_watts == 700);
    CHECK(h200.sm_clock_mhz == 1755);
    CHECK(h200.sm_clock_max_mhz == 1980);
    CHECK(h200.memory_clock_max_mhz == 3201);
    CHECK(h200.clock_event_reasons == ce::kSwPowerCap);  // through the pre-535 name
    CHECK(h200.total_energy_millijoules == 987654321u);
    CHECK(h200.ecc_enabled == true);
    REQUIRE(h200.pcie);
    CHECK(h200.pcie->generation == 5);
    CHECK(h200.pcie->max_width == 16);
    CHECK(h200.nvlink_links_up == 16);
    CHECK(h200.compute_capability == "9.0");
    REQUIRE(h200.processes);
    REQUIRE(h200.processes->size() == 40);  // more than the first guess: the retry worked
    const gpuperf::GpuProcess& both = h200.processes->at(0);
    CHECK(both.pid == 1000);
    CHECK(both.kind == "compute+graphics");
    CHECK(both.name == "proc1000");
    CHECK(both.used_memory_bytes == static_cast<double>(1ULL << 20));
    const gpuperf::GpuProcess& hidden = h200.processes->at(1);
    CHECK(hidden.name.empty());
    CHECK_FALSE(hidden.used_memory_bytes);

    // The older card: v1 memory, no NVLink, no energy counter, and a failing power reading.
    const gpuperf::DeviceSnapshot old = gpuperf::take_device_snapshot(system.device(1));
    REQUIRE(old.memory);
    CHECK(old.memory->used_bytes == static_cast<double>(2ULL << 30));
    CHECK_FALSE(old.memory->reserved_bytes);
    CHECK_FALSE(old.nvlink_links_up);
    CHECK_FALSE(old.total_energy_millijoules);
    CHECK_FALSE(old.power_watts);
    CHECK(old.errors ==
          std::vector<std::string>{"nvmlDeviceGetPowerUsage: GPU is lost (NVML error 15)"});
    CHECK_THROWS_AS(system.device(1).power_watts(), gpuperf::NvmlError);

    CHECK(system.find_by_pci_location(0, 0x9a, 0) == &system.device(1));
    CHECK(system.find_by_uuid("GPU-00000000-0000-0000-0000-000000000000") == &system.device(0));

    // Links: 12 of device 0's 16 active NVLinks end at device 1, the rest at a switch.
    const auto remote = system.device(0).nvlink_remote_pci_bus_ids();
    REQUIRE(remote);
    CHECK(remote->size() == 16);
    CHECK(remote->front() == "00000000:9A:00.0");
    CHECK_FALSE(system.device(1).nvlink_remote_pci_bus_ids());
    CHECK(system.common_ancestor(system.device(0), system.device(1)) ==
          gpuperf::PcieTopology::kNumaNode);
    CHECK(system.nvlink_p2p(system.device(0), system.device(1)) == true);
    for (const auto& [a, b] : {std::pair<int, int>{0, 1}, {1, 0}}) {
      const gpuperf::GpuLink link =
          gpuperf::describe_gpu_link(system, system.device(a), system.device(b));
      CHECK(link.type == "NVLink");
      CHECK(link.nvlinks == 12);
      CHECK(link.detail == "NVLink x12, direct");
      CHECK(link.pcie == gpuperf::PcieTopology::kNumaNode);
    }

    // The sampler on the loaded library, start to stop.
    TelemetrySamplerOptions options;
    options.period_seconds = 3600;
    TelemetrySampler sampler(system.device(0), options);
    sampler.start();
    const TelemetrySummary t = sampler.stop(100);
    CHECK(t.sample_count == 2);
    CHECK(t.energy_joules == 0);  // the stand-in's counter does not move
    CHECK(t.power_mean_watts == Approx(123.456));
    CHECK(contains(t.warnings, "power-cap throttling during measurement"));
  }
  CHECK(sessions() == 0);  // the session shut NVML down
  dlclose(fake);
}
