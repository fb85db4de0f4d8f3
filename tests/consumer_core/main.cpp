// Uses an installed gpuperf::core alone (no LibTorch): statistics, the installed spec database,
// a run record written as JSON and read back, and the console and Markdown printers.
// Usage: consumer_core <installed data dir> <scratch dir>; exits 1 on a wrong result.
#include <gpuperf/core.h>

#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "consumer_core: FAILED: " << what << "\n";
    ++failures;
  }
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

// What measure() returns, with made-up windows (1 s each, 10 steps of 256 samples) so that the
// comparison below has a known answer.
gpuperf::Measurement made_up_measurement(const std::vector<double>& windows) {
  gpuperf::Measurement m;
  m.window_throughput = windows;
  m.window_seconds.assign(windows.size(), 1.0);
  m.throughput = gpuperf::summarize(windows);
  m.samples_per_step = 256;
  m.warmup_steps = 5;
  m.steps_per_window = 10;
  m.timed_steps = static_cast<int>(windows.size()) * 10;
  m.timed_seconds = static_cast<double>(windows.size());
  m.overall_throughput = m.throughput.mean;
  m.stop_reason = "fixed window count";
  return m;
}

// A record as a core user writes one: make_record() fills what the measurement knows; the rest
// is what ran it and the settings that differ from the defaults.
gpuperf::RunRecord make_run(const std::string& model, const std::vector<double>& windows) {
  const auto timer = gpuperf::make_steady_clock_timer();
  gpuperf::RunRecord record = gpuperf::make_record(model, made_up_measurement(windows), *timer);
  record.command = "consumer_core";
  record.device.kind = "cuda";
  record.device.name = "NVIDIA H200";
  record.device.sm_count = 132;
  record.device.memory_bytes = 150e9;
  record.config.input_shape = {3, 224, 224};
  record.config.num_classes = 1000;
  record.config.precision = "bf16";
  record.config.memory_format = "channels_last";
  record.config.optimizer = "sgd";
  record.config.learning_rate = 0.1;
  record.final_loss = 2.5;
  record.warnings = {"written by the consumer_core test"};
  return record;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: consumer_core <installed data dir> <scratch dir>\n";
    return 2;
  }
  const std::string data_dir = argv[1];
  const std::string scratch = argv[2];
  try {
    // Statistics: numpy's linear quantiles over {1, 2, 3, 4, 5, 100}.
    const gpuperf::Summary s = gpuperf::summarize({5, 1, 4, 2, 3, 100});
    check(s.count == 6, "summarize count");
    check(near(s.median, 3.5), "summarize median 3.5, got " + std::to_string(s.median));
    check(near(s.q1, 2.25) && near(s.q3, 4.75), "summarize quartiles 2.25 / 4.75");
    check(near(s.min, 1) && near(s.max, 100), "summarize min / max");
    check(s.ci95_low < s.mean && s.mean < s.ci95_high, "summarize confidence interval");

    // The spec database installed with the library.
    const auto db = gpuperf::SpecDatabase::load_file(data_dir + "/gpu_specs.json");
    const gpuperf::GpuSpec* h200 = db.find_id("h200-sxm-141gb");
    check(h200 != nullptr, "h200-sxm-141gb in the installed gpu_specs.json");
    const gpuperf::SpecMatch match = db.match_device("NVIDIA H200", 132, 150e9);
    check(match.spec == h200, "NVIDIA H200 matches h200-sxm-141gb: " + match.reason);
    if (h200 != nullptr) check(h200->peak("bf16") > 5e14, "H200 bf16 peak above 500 TFLOP/s");

    // A record written as JSON, read back, and read again from files by the report side.
    const gpuperf::RunRecord baseline = make_run("resnet50", {1000, 1010, 990, 1005, 995});
    const gpuperf::RunRecord candidate = make_run("resnet50", {1500, 1510, 1490, 1505, 1495});
    const gpuperf::RunRecord back =
        gpuperf::from_json<gpuperf::RunRecord>(gpuperf::to_json(baseline));
    check(back.schema == gpuperf::RunRecord::kSchema, "schema survives JSON");
    check(back.config.model == "resnet50" && back.config.batch_size == 256, "config survives");
    check(back.window_throughput == baseline.window_throughput, "windows survive JSON");
    check(near(back.throughput.median, 1000), "median survives JSON");
    check(std::isnan(back.peak_memory_bytes), "not-available memory reads back as NaN");
    const std::string base_path = scratch + "/baseline.json";
    const std::string cand_path = scratch + "/candidate.json";
    gpuperf::write_json_file(baseline, base_path);
    gpuperf::write_json_file(candidate, cand_path);
    // The writer refuses a record that gpuperf.run/1 would refuse, naming the field.
    gpuperf::RunRecord bad = baseline;
    bad.config.precision = "fp8";
    bool refused = false;
    try {
      gpuperf::write_json_file(bad, scratch + "/bad.json");
    } catch (const gpuperf::ConfigError& e) {
      refused = std::string(e.what()).find("config.precision") != std::string::npos;
    }
    check(refused, "write_json_file refuses precision fp8, naming config.precision");
    const auto runs = gpuperf::load_result_files({base_path, cand_path});
    check(runs.size() == 2 && near(runs[1].record.throughput.median, 1500), "result files");

    // Printers: console text and a Markdown comparison.
    std::ostringstream text;
    gpuperf::write_text(text, back);
    check(text.str().find("Throughput:") != std::string::npos, "console text has Throughput:");
    const gpuperf::Comparison comparison = gpuperf::compare_runs(runs, {}, &db);
    check(comparison.rows.size() == 2, "two comparison rows");
    bool faster = false;
    for (const auto& row : comparison.rows) {
      if (!row.is_baseline) faster = row.significance.verdict == "faster" && near(row.speedup, 1.5);
    }
    check(faster, "candidate 1.5x faster than the baseline");
    std::ostringstream markdown;
    gpuperf::write_comparison(markdown, comparison, gpuperf::TableFormat::kMarkdown);
    check(markdown.str().find("| ") != std::string::npos, "Markdown table");

    std::cout << "gpuperf " << gpuperf::kVersion << " (core only): median " << s.median << ", "
              << (h200 ? h200->name : std::string("no H200")) << "\n"
              << text.str() << markdown.str();
  } catch (const gpuperf::Error& e) {
    std::cerr << "consumer_core: " << e.what() << "\n";
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
