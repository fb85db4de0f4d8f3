#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "gpuperf/base/error.h"
#include "gpuperf/base/run_basics.h"
#include "gpuperf/timing/latency.h"
#include "gpuperf/timing/measure.h"
#include "gpuperf/timing/region_timer.h"
#include "gpuperf/timing/statistics.h"
#include "gpuperf/timing/timer.h"

namespace {

// A timer whose marks read a clock the test advances by hand.
class ManualTimer final : public gpuperf::Timer {
 public:
  double now = 0;
  std::size_t mark() override {
    marks_.push_back(now);
    return marks_.size() - 1;
  }
  double seconds(std::size_t from, std::size_t to) override {
    return marks_.at(to) - marks_.at(from);
  }
  void clear() override { marks_.clear(); }
  [[nodiscard]] std::size_t size() const override { return marks_.size(); }
  [[nodiscard]] std::string name() const override { return "manual"; }

 private:
  std::vector<double> marks_;
};

}  // namespace

TEST_CASE("Student t quantiles match the published table", "[timing]") {
  // Critical values to six decimals, as scipy.stats.t.ppf gives them (and printed tables, rounded).
  CHECK(gpuperf::student_t_quantile(0.975, 1) == Approx(12.706205).epsilon(1e-6));
  CHECK(gpuperf::student_t_quantile(0.975, 2) == Approx(4.302653).epsilon(1e-6));
  CHECK(gpuperf::student_t_quantile(0.975, 4) == Approx(2.776445).epsilon(1e-6));
  CHECK(gpuperf::student_t_quantile(0.975, 9) == Approx(2.262157).epsilon(1e-6));
  CHECK(gpuperf::student_t_quantile(0.975, 29) == Approx(2.045230).epsilon(1e-6));
  CHECK(gpuperf::student_t_quantile(0.975, 1e7) == Approx(1.959964).epsilon(1e-6));
  CHECK(gpuperf::student_t_quantile(0.995, 10) == Approx(3.169273).epsilon(1e-6));
  CHECK(gpuperf::student_t_quantile(0.025, 9) == Approx(-2.262157).epsilon(1e-6));
  CHECK(gpuperf::student_t_cdf(0, 5) == Approx(0.5));
  // df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/pi.
  CHECK(gpuperf::student_t_cdf(3.0, 1) == Approx(0.5 + std::atan(3.0) / M_PI).epsilon(1e-10));
}

TEST_CASE("summarize computes order statistics like numpy and a t interval", "[timing]") {
  const auto s = gpuperf::summarize({4, 1, 3, 2, 10});
  CHECK(s.count == 5);
  CHECK(s.min == 1);
  CHECK(s.max == 10);
  CHECK(s.median == 3);
  CHECK(s.q1 == 2);  // numpy.percentile([1,2,3,4,10], 25) == 2.0
  CHECK(s.q3 == 4);
  CHECK(s.iqr == 2);
  CHECK(s.mean == Approx(4));
  // sample stdev of {1,2,3,4,10}: sqrt(((9+4+1+0+36)/4)) = sqrt(12.5)
  CHECK(s.stdev == Approx(std::sqrt(12.5)));
  const double half = 2.776445105 * std::sqrt(12.5) / std::sqrt(5.0);
  CHECK(s.ci95_low == Approx(4 - half).epsilon(1e-6));
  CHECK(s.ci95_high == Approx(4 + half).epsilon(1e-6));
  CHECK(gpuperf::quantile_sorted({1, 2, 3, 4}, 0.5) == Approx(2.5));
  CHECK(gpuperf::quantile_sorted({1, 2, 3, 4}, 0.9) == Approx(3.7));
}

TEST_CASE("summarize of one value has a zero-width interval", "[timing]") {
  const auto s = gpuperf::summarize({7});
  CHECK(s.stdev == 0);
  CHECK(s.ci95_low == 7);
  CHECK(s.ci95_high == 7);
  CHECK(std::isinf(s.relative_ci95_half_width()));
}

TEST_CASE("summarize rejects empty and non-finite samples", "[timing]") {
  CHECK_THROWS_AS(gpuperf::summarize({}), gpuperf::ConfigError);
  CHECK_THROWS_AS(gpuperf::summarize({1.0, NAN}), gpuperf::ConfigError);
}

TEST_CASE("measure excludes warm-up and computes throughput as samples over time", "[timing]") {
  ManualTimer timer;
  int calls = 0;
  // Warm-up steps are slow (10 s); timed steps take 0.5 s, except that window 2 has one 1.5 s step.
  auto step = [&] {
    ++calls;
    if (calls <= 3) {
      timer.now += 10;
    } else if (calls == 3 + 4 + 1) {
      timer.now += 1.5;
    } else {
      timer.now += 0.5;
    }
  };
  gpuperf::MeasureOptions options;
  options.warmup = 3;
  options.steps_per_window = 4;
  options.windows = 3;
  const auto m = gpuperf::measure(step, 8, timer, options);
  CHECK(calls == 3 + 12);
  REQUIRE(m.window_seconds.size() == 3);
  CHECK(m.window_seconds[0] == Approx(2.0));
  CHECK(m.window_seconds[1] == Approx(3.0));
  CHECK(m.window_throughput[0] == Approx(32 / 2.0));
  CHECK(m.window_throughput[1] == Approx(32 / 3.0));
  CHECK(m.timed_steps == 12);
  CHECK(m.timed_seconds == Approx(7.0));
  // 96 samples in 7 s, not the mean of the per-window rates (which would be 14.22).
  CHECK(m.overall_throughput == Approx(96 / 7.0));
  CHECK(m.throughput.median == Approx(16));
  CHECK(m.stop_reason == "fixed window count");
}

TEST_CASE("adaptive measure stops once the interval is tight or at the time limit", "[timing]") {
  ManualTimer timer;
  gpuperf::MeasureOptions options;
  options.warmup = 0;
  options.steps_per_window = 1;
  options.adaptive = true;
  options.min_windows = 3;
  options.max_windows = 100;
  options.target_relative_ci = 0.01;
  options.max_seconds = 1000;

  SECTION("steady steps converge at the minimum window count") {
    const auto m = gpuperf::measure([&] { timer.now += 1; }, 1, timer, options);
    CHECK(m.stop_reason == "converged");
    CHECK(m.window_seconds.size() == 3);
  }
  SECTION("alternating steps hit the time limit") {
    options.max_seconds = 20;
    bool slow = false;
    const auto m =
        gpuperf::measure([&] { timer.now += (slow = !slow) ? 1 : 3; }, 1, timer, options);
    CHECK(m.stop_reason == "time limit");
    CHECK(m.timed_seconds >= 20);
    CHECK(m.timed_seconds < 24);
  }
  SECTION("slow windows past the time limit are said, with what to change") {
    options.max_seconds = 0.5;  // 3 windows of 10 s must still run: 60x the limit
    const auto m = gpuperf::measure([&] { timer.now += 10; }, 1, timer, options);
    CHECK(m.timed_seconds == Approx(30));
    const std::string warning = gpuperf::time_limit_overrun(m, options);
    CHECK(warning ==
          "timing took 30 s against MeasureOptions::max_seconds 0.5 (60x): 3 windows of 10 s "
          "each (at least MeasureOptions::min_windows 3 run); use fewer "
          "MeasureOptions::steps_per_window or a smaller MeasureOptions::min_windows");
    options.max_seconds = 25;  // within 1.5x: nothing to say
    CHECK(gpuperf::time_limit_overrun(m, options).empty());
    options.adaptive = false;  // a fixed run has no time limit
    options.max_seconds = 0.5;
    CHECK(gpuperf::time_limit_overrun(m, options).empty());
  }
  SECTION("progress is reported after every window") {
    int reports = 0;
    const auto m = gpuperf::measure([&] { timer.now += 1; }, 1, timer, options,
                                    [&](const gpuperf::WindowProgress& p) {
                                      ++reports;
                                      CHECK(p.window == reports);
                                      CHECK(p.planned_windows == 100);
                                    });
    CHECK(reports == static_cast<int>(m.window_seconds.size()));
  }
}

TEST_CASE("MeasureOptions names the bad field, in either mode", "[timing]") {
  gpuperf::MeasureOptions options;
  options.steps_per_window = 0;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("MeasureOptions::steps_per_window: must be >= 1, got 0"));
  options = {};
  options.adaptive = true;
  options.min_windows = 1;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("MeasureOptions::min_windows: must be >= 2, got 1"));
  options.adaptive = false;  // refused in fixed mode too, before --adaptive would use it
  CHECK_THROWS_WITH(options.validate(), Catch::Contains("MeasureOptions::min_windows"));
  options = {};
  options.max_windows = 3;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Equals("MeasureOptions::max_windows: must be >= min_windows, got 3"));
  options = {};
  options.max_seconds = 0;
  CHECK_THROWS_WITH(options.validate(),
                    Catch::Contains("MeasureOptions::max_seconds: must be > 0"));
}

TEST_CASE("a ConfigError names its field, and a program spells each setting its own way",
          "[timing]") {
  const gpuperf::ConfigError plain("a file's contents are wrong");
  CHECK(plain.field().empty());
  CHECK(std::string(plain.what()) == "a file's contents are wrong");
  const gpuperf::ConfigError field("TrainingRun::batch_size", "must be > 0, got 0");
  CHECK(field.field() == "TrainingRun::batch_size");
  CHECK(std::string(field.what()) == "TrainingRun::batch_size: must be > 0, got 0");
  const gpuperf::ConfigError valued("TrainingRun::cuda_graph", "on",
                                    "needs {fused_optimizer} (device cpu)");
  CHECK(valued.value() == "on");
  CHECK(std::string(valued.what()) ==
        "TrainingRun::cuda_graph on: needs fused_optimizer (device cpu)");
  // A program's spelling gets the field as named and each "{name}" of the problem.
  const auto flags = [](const std::string& name) {
    const std::string bare = gpuperf::ConfigError::bare(name);
    return bare == "cuda_graph" ? std::string("--graph") : "--" + bare;
  };
  CHECK(gpuperf::ConfigError::render(valued.field(), valued.value(), valued.problem(), flags) ==
        "--graph on: needs --fused_optimizer (device cpu)");
  // An unclosed brace is text, not a reference.
  CHECK(gpuperf::ConfigError::render("x", "", "a {b", flags) == "--x: a {b");
  CHECK(gpuperf::ConfigError::bare("A::B::c") == "c");
}

TEST_CASE("RunBasics checks the fields every run shares, naming each", "[timing]") {
  gpuperf::RunBasics basics;
  CHECK_NOTHROW(basics.validate());
  basics.threads = -1;
  CHECK_THROWS_WITH(basics.validate(), Catch::StartsWith("RunBasics::threads: must be >= 0"));
  basics.threads = 1 << 20;
  CHECK_THROWS_WITH(basics.validate(), Catch::StartsWith("RunBasics::threads: must be <= ") &&
                                           Catch::Contains("hardware threads), got 1048576"));
  basics = {};
  basics.seed = -3;
  CHECK_THROWS_WITH(basics.validate(), Catch::Equals("RunBasics::seed: must be >= 0, got -3"));
  basics = {};
  basics.device.clear();
  CHECK_THROWS_AS(basics.validate(), gpuperf::ConfigError);
}

TEST_CASE("RegionTimer sums regions per name and reports throughput", "[timing]") {
  ManualTimer timer;
  gpuperf::RegionTimer regions(timer);
  for (int step = 0; step < 4; ++step) {
    regions.begin("forward");
    timer.now += 1;
    regions.end("forward");
    {
      auto scope = regions.scope("backward");
      timer.now += 2;
    }
    timer.now += 1;  // untimed work
    regions.step_done(10);
  }
  const auto summary = regions.summary();
  REQUIRE(summary.regions.size() == 2);
  CHECK(summary.regions[0].name == "forward");
  CHECK(summary.regions[0].calls == 4);
  CHECK(summary.regions[0].total_seconds == Approx(4));
  CHECK(summary.regions[1].total_seconds == Approx(8));
  CHECK(summary.seconds == Approx(16));
  CHECK(summary.throughput == Approx(40 / 16.0));
  CHECK(summary.regions[1].share == Approx(0.5));
  CHECK_THROWS_AS(regions.end("forward"), gpuperf::ConfigError);
}

TEST_CASE("steady clock timer measures a sleep", "[timing]") {
  auto timer = gpuperf::make_steady_clock_timer();
  const auto a = timer->mark();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto b = timer->mark();
  CHECK(timer->seconds(a, b) >= 0.019);
  CHECK(timer->name() == "steady-clock");
}

TEST_CASE("Latency percentiles interpolate between closest ranks like numpy", "[infer]") {
  // 1..10 ms: position q*(n-1); p90 -> 8.1 -> 9.1 ms, p95 -> 8.55 -> 9.55 ms, p99 -> 8.91 -> 9.91
  // ms.
  std::vector<double> ms;
  for (int i = 10; i >= 1; --i) ms.push_back(i * 1e-3);
  const auto s = gpuperf::summarize_latency(ms);
  CHECK(s.count == 10);
  CHECK(s.min == Approx(1e-3));
  CHECK(s.p50 == Approx(5.5e-3));
  CHECK(s.p90 == Approx(9.1e-3));
  CHECK(s.p95 == Approx(9.55e-3));
  CHECK(s.p99 == Approx(9.91e-3));
  CHECK(s.max == Approx(10e-3));
  CHECK(s.mean == Approx(5.5e-3));
  CHECK(s.tail_ratio() == Approx(9.91 / 5.5));
}

TEST_CASE("A single latency is every percentile and its tail ratio is one", "[infer]") {
  gpuperf::LatencyRecorder recorder;
  recorder.add(0.25);
  const auto s = recorder.summary();
  CHECK(s.p50 == 0.25);
  CHECK(s.p99 == 0.25);
  CHECK(s.max == 0.25);
  CHECK(s.tail_ratio() == 1.0);
}

TEST_CASE("The latency recorder refuses negative and non-finite samples and empty summaries",
          "[infer]") {
  gpuperf::LatencyRecorder recorder;
  CHECK_THROWS_AS(recorder.summary(), gpuperf::ConfigError);
  CHECK_THROWS_WITH(recorder.add(-1), Catch::Contains("-1"));
  CHECK_THROWS_AS(recorder.add(std::numeric_limits<double>::quiet_NaN()), gpuperf::ConfigError);
  CHECK(recorder.size() == 0);
}
