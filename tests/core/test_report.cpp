// Cross-run comparison, result-file loading and the HTML report (rendered in headless Chromium
// where it is installed).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/base/error.h"
#include "gpuperf/base/format.h"
#include "gpuperf/serving/serving.h"
#include "gpuperf/report/compare.h"
#include "gpuperf/report/console.h"
#include "gpuperf/report/html_report.h"
#include "gpuperf/report/result_files.h"
#include "gpuperf/results/csv.h"
#include "gpuperf/results/export.h"
#include "gpuperf/specs/specs.h"

namespace {

const std::string kData = GPUPERF_TEST_DATA_DIR;
const std::string kExamples = GPUPERF_TEST_EXAMPLES_DIR;
const std::string kSource = GPUPERF_TEST_SOURCE_DIR;

// An inference result of one batch size whose calls took `latencies` seconds.
gpuperf::InferenceResult inference(const std::string& gpu, std::int64_t batch,
                                   const std::vector<double>& latencies) {
  gpuperf::InferenceResult r;
  r.model = "resnet50";
  r.precision = "fp16";
  r.memory_format = "channels_last";
  r.cuda_graph = true;
  r.device_name = gpu;
  r.fingerprint.name = gpu;
  gpuperf::BatchSizeResult b;
  b.batch_size = batch;
  b.latencies = latencies;
  b.latency = gpuperf::summarize_latency(latencies);
  b.throughput_median = static_cast<double>(batch) / b.latency.p50;
  r.batches.push_back(b);
  return r;
}

// The Mann-Whitney U of `candidate` counted pair by pair (1 when the candidate's value is the
// larger, 1/2 for a tie): independent of the rank sums the library uses.
double u_by_pairs(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  double u = 0;
  for (double c : candidate) {
    for (double b : baseline) u += c > b ? 1 : (c == b ? 0.5 : 0);
  }
  return u;
}

gpuperf::RunRecord run(const std::string& gpu, const std::vector<double>& windows,
                       const std::string& precision = "bf16") {
  gpuperf::RunRecord r;
  r.timestamp_utc = "2026-12-01T00:00:00Z";
  r.device.kind = "cuda";
  r.device.name = gpu;
  r.device.libtorch_version = "2.11.0";
  r.device.cuda_runtime_version = "13.0";
  r.config.model = "resnet50";
  r.config.batch_size = 256;
  r.config.precision = precision;
  r.config.memory_format = "channels_last";
  r.config.optimizer = "sgd";
  r.window_throughput = windows;
  r.throughput = gpuperf::summarize(windows);
  r.overall_throughput = r.throughput.mean;
  // The rest of what gpuperf.run/1 requires, so that write_json_file() writes it.
  r.config.steps_per_window = 1;
  r.stop_reason = "fixed window count";
  r.timer = "cuda-event";
  r.telemetry.unavailable_reason = "not sampled";
  return r;
}

// A CSV line's cells split at every comma (for lines without quoted cells where it is read).
std::vector<std::string> comma_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream fields(line);
  for (std::string f; std::getline(fields, f, ',');) cells.push_back(f);
  return cells;
}

// The cell under `column` in the first row after the header of `csv` (no quoted cells up to it).
std::string first_row_cell(const std::string& csv, const std::string& column) {
  std::istringstream lines(csv);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  for (auto* line : {&header, &first}) {
    if (!line->empty() && line->back() == '\r') line->pop_back();  // CSV's CRLF
  }
  const std::vector<std::string> names = comma_cells(header);
  const auto it = std::find(names.begin(), names.end(), column);
  REQUIRE(it != names.end());
  return comma_cells(first).at(static_cast<std::size_t>(it - names.begin()));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_dir() {
  char pattern[] = "/tmp/gpuperf-test-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  REQUIRE(dir != nullptr);
  return dir;
}

}  // namespace

TEST_CASE("Welch's t-test separates real differences from noise", "[compare]") {
  gpuperf::CompareOptions options;
  const std::vector<double> base = {100, 101, 99, 100.5, 99.5};
  // Hand-computed: means 100 and 110, variances 0.625 each, t = 10 / sqrt(0.25) = 20, dof 8.
  const auto faster = gpuperf::welch_test(base, {110, 111, 109, 110.5, 109.5}, options);
  CHECK(faster.t == Approx(20));
  CHECK(faster.dof == Approx(8));
  CHECK(faster.p_value < 1e-6);
  CHECK(faster.verdict == "faster");
  CHECK(gpuperf::welch_test(base, {90, 91, 89, 90.5, 89.5}, options).verdict == "slower");
  // Within noise.
  const auto same = gpuperf::welch_test(base, {100.4, 98.8, 101.2, 99.9, 100.3}, options);
  CHECK(same.p_value > 0.05);
  CHECK(same.verdict == "same");
  // Significant but below the minimum change.
  options.min_change = 0.05;
  CHECK(gpuperf::welch_test(base, {102, 103, 101, 102.5, 101.5}, options).verdict == "same");
  CHECK_THAT(gpuperf::welch_test({1}, {2, 3}, options).verdict, Catch::Contains("unknown"));
}

TEST_CASE("compare groups workloads and judges against a GPU-name baseline", "[compare]") {
  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  std::vector<gpuperf::LoadedRun> runs = {
      {"h100.json", run("NVIDIA H100 80GB HBM3", {2600, 2610, 2590, 2605})},
      {"h200.json", run("NVIDIA H200", {3100, 3120, 3090, 3110})},
      {"h200-fp32.json", run("NVIDIA H200", {900, 905, 898, 902}, "fp32")},
  };
  runs[0].record.device.sm_count = 132;
  gpuperf::CompareOptions options;
  options.baseline = "H100 SXM5 80GB";
  const auto table = gpuperf::compare_runs(runs, options, &db);
  REQUIRE(table.rows.size() == 3);
  // bf16 group: the H100 baseline first, then the H200.
  const auto& base = table.rows[0];
  const auto& h200 = table.rows[1];
  CHECK(base.is_baseline);
  CHECK(base.path == "h100.json");
  CHECK(h200.speedup ==
        Approx(runs[1].record.throughput.median / runs[0].record.throughput.median));
  CHECK(h200.significance.verdict == "faster");
  // fp32 group has no H100 run.
  CHECK_FALSE(table.rows[2].has_baseline);
  CHECK(table.rows[2].significance.verdict == "no baseline run");

  std::ostringstream md;
  gpuperf::write_comparison(md, table, gpuperf::TableFormat::kMarkdown);
  CHECK_THAT(md.str(), Catch::Contains(
                           "| train resnet50 bs256 bf16 channels_last sgd eager | NVIDIA H200 |"));
  CHECK_THAT(md.str(), Catch::Contains("Welch"));
  std::ostringstream csv;
  gpuperf::write_comparison(csv, table, gpuperf::TableFormat::kCsv);
  CHECK(csv.str().rfind("kind,model,precision,memory_format,optimizer,graph_mode", 0) == 0);
  CHECK_THAT(csv.str(), Catch::Contains("\"LibTorch 2.11.0, CUDA 13.0\""));
  const std::string csv_text = csv.str();
  CHECK(std::count(csv_text.begin(), csv_text.end(), '\n') == 4);  // header + 3 rows
  // Raw numbers: the H200's speedup as a plain number, no "x", no display rounding.
  CHECK(csv_text.find("x,") == std::string::npos);
  CHECK(csv_text.find("n/a") == std::string::npos);
  CHECK_THAT(csv_text, Catch::Contains("h200.json,false,"));

  options.baseline = "h200.json";
  CHECK(gpuperf::compare_runs(runs, options, &db).rows[0].path == "h200.json");
  options.baseline = "RTX 4090";
  CHECK_THROWS_WITH(gpuperf::compare_runs(runs, options, &db),
                    Catch::Contains("CompareOptions::baseline: ") && Catch::Contains("RTX 4090"));
  CHECK_THROWS_AS(gpuperf::compare_runs({}, {}, &db), gpuperf::ConfigError);
  CHECK_THROWS_WITH(gpuperf::parse_table_format("xml", "--format"), Catch::Contains("'xml'"));
  CHECK(gpuperf::csv_field("a\"b") == "\"a\"\"b\"");
}

TEST_CASE("result files are read without being changed, errors name file and field", "[compare]") {
  const std::string dir = temp_dir();
  const std::string good = dir + "/good.json";
  gpuperf::write_json_file(run("NVIDIA H200", {1, 2, 3}), good);
  const std::string before = slurp(good);
  struct stat st_before {};
  ::stat(good.c_str(), &st_before);
  CHECK(gpuperf::load_result_file(good).record.device.name == "NVIDIA H200");
  struct stat st_after {};
  ::stat(good.c_str(), &st_after);
  CHECK(slurp(good) == before);
  CHECK(st_after.st_mtime == st_before.st_mtime);

  std::string text = before;
  text.replace(text.find("\"batch_size\": 256"), 17, "\"batch_size\": \"x\"");
  std::ofstream(dir + "/bad.json") << text;
  CHECK_THROWS_WITH(gpuperf::load_result_file(dir + "/bad.json"),
                    Catch::Contains(dir + "/bad.json: ") && Catch::Contains("config.batch_size"));
  // A second "name" in the device: nlohmann would keep the last and read another GPU.
  text = before;
  text.replace(text.find("\"name\": \"NVIDIA H200\""), 21,
               "\"name\": \"NVIDIA H200\", \"name\": \"Tesla V100-SXM2-16GB\"");
  std::ofstream(dir + "/twice.json") << text;
  CHECK_THROWS_WITH(gpuperf::load_result_file(dir + "/twice.json"),
                    Catch::Contains(dir + "/twice.json: run record: field 'device.name' appears "
                                          "twice"));
  CHECK_THROWS_WITH(gpuperf::load_results({dir + "/twice.json"}),
                    Catch::Contains(dir + "/twice.json: ") && Catch::Contains("'device.name'"));
  // A summary that is no summary of its windows ({1, 2, 3}), as one line naming file and field.
  text = before;
  text.replace(text.find("\"median\": 2.0"), 13, "\"median\": 9e14");
  std::ofstream(dir + "/median.json") << text;
  CHECK_THROWS_WITH(gpuperf::load_results({dir + "/median.json"}),
                    Catch::Contains(dir + "/median.json: run record: field 'throughput.median'"));
  std::ofstream(dir + "/empty.json") << "";
  CHECK_THROWS_WITH(gpuperf::load_result_file(dir + "/empty.json"), Catch::Contains("is empty"));
  CHECK_THROWS_WITH(gpuperf::load_result_file(kData + "/gpu_specs.json"),
                    Catch::Contains("gpu_specs.json") && Catch::Contains("schema"));
  CHECK_THROWS_AS(gpuperf::load_result_file(dir + "/missing.json"), gpuperf::IoError);
  // Found by the fuzzer: a number overflowing a double must be a clean error, not a terminate.
  std::ofstream(dir + "/huge.json") << R"({"schema": 6666666E666666666666666})";
  CHECK_THROWS_WITH(gpuperf::load_result_file(dir + "/huge.json"),
                    Catch::Contains("huge.json") && Catch::Contains("number overflow"));
  CHECK_THROWS_AS(gpuperf::load_result_files({}), gpuperf::ConfigError);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("Both readers refuse the shared bad records, naming file and field in one line",
          "[compare]") {
  // tests/fixtures/refused_records.json: the Python module's test loads the same cases.
  const auto fixtures =
      nlohmann::json::parse(slurp(kSource + "/tests/fixtures/refused_records.json"));
  const std::string dir = temp_dir();
  for (const auto& c : fixtures.at("cases")) {
    const std::string what = c.at("what").get<std::string>();
    INFO(what);
    std::string text = slurp(kSource + "/" + c.at("base").get<std::string>());
    REQUIRE_NOTHROW(gpuperf::load_results({kSource + "/" + c.at("base").get<std::string>()}));
    if (c.contains("set") || c.contains("remove")) {
      auto edited = nlohmann::json::parse(text);
      const auto set = c.value("set", nlohmann::json::object());
      for (const auto& [pointer, value] : set.items()) {
        edited[nlohmann::json::json_pointer(pointer)] = value;
      }
      const auto remove = c.value("remove", nlohmann::json::array());
      for (const auto& pointer : remove) {
        const nlohmann::json::json_pointer at(pointer.get<std::string>());
        edited[at.parent_pointer()].erase(at.back());
      }
      text = edited.dump(2);
    }
    if (c.contains("replace")) {
      const std::string from = c.at("replace").at(0).get<std::string>();
      const auto where = text.find(from);
      REQUIRE(where != std::string::npos);
      text.replace(where, from.size(), c.at("replace").at(1).get<std::string>());
    }
    const std::string path = dir + "/bad.json";
    std::ofstream(path, std::ios::trunc) << text;
    const std::string expected = c.contains("field")
                                     ? "field '" + c.at("field").get<std::string>() + "'"
                                     : c.at("error").get<std::string>();
    try {
      (void)gpuperf::load_results({path});
      FAIL_CHECK("accepted: " << what);
    } catch (const gpuperf::IoError& e) {
      const std::string message = e.what();
      CHECK_THAT(message, Catch::StartsWith(path + ": ") && Catch::Contains(expected));
      CHECK(message.find('\n') == std::string::npos);
    }
  }
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("the HTML report is self-contained: inline SVG charts, no scripts, nothing fetched",
          "[report][html]") {
  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  const auto published = gpuperf::load_published_results(kData + "/published_results.json");
  std::vector<gpuperf::LoadedRun> runs = {
      {"h200.json", run("NVIDIA H200", {5700, 5720, 5740}, "fp16")},
      {"odd <name>.json", run("Unknown GPU & Co", {100, 110, 105})},
  };
  runs[0].record.device.sm_count = 132;
  runs[0].record.device.memory_bytes = 150e9;
  std::ostringstream html;
  gpuperf::write_html_report(html, runs, &db, published, {});
  const std::string page = html.str();
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK_THAT(page, Catch::Contains("<svg") && Catch::Contains("class=\"bar\""));
  CHECK_THAT(page, Catch::Contains("published: A100 80GB SXM"));
  CHECK_THAT(page, Catch::Contains("odd &lt;name&gt;.json"));
  CHECK_THAT(page, Catch::Contains("no datasheet entry for &#39;Unknown GPU &amp; Co&#39;"));
  // Self-contained: nothing fetched, no scripts.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("href=") == std::string::npos);
  CHECK_THROWS_AS(gpuperf::write_html_report(html, {}, &db, {}, {}), gpuperf::ConfigError);
  // Bad efficiency assumptions are refused by name before anything is written.
  gpuperf::HtmlReportOptions bad;
  bad.efficiency.price_per_hour_usd = -1;
  std::ostringstream nothing;
  CHECK_THROWS_WITH(gpuperf::write_html_report(nothing, runs, &db, published, bad),
                    Catch::Contains("EfficiencyOptions::price_per_hour_usd"));
  CHECK(nothing.str().empty());

  // Rendering it in a browser is tests/apps/render_report.sh (SKIPPED without Chromium).
}

TEST_CASE("The Mann-Whitney test matches pair counting and the exact permutation distribution",
          "[compare][inference]") {
  gpuperf::CompareOptions options;
  // 12 against 12 with two tied groups: z from U counted pair by pair and the tie-corrected
  // variance written out here.
  const std::vector<double> base = {10, 11, 12, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  const std::vector<double> cand = {8, 9, 9.5, 10.5, 11, 11.5, 12, 12.5, 13, 13.5, 14, 15};
  const double u = u_by_pairs(base, cand);
  const double n1 = 12, n2 = 12, n = 24;
  // Tie groups in the pooled sample: 11 (x2), 12 (x3), 13 (x2), 14 (x2), 15 (x2).
  const double ties = (2 * 2 * 2 - 2) + (3 * 3 * 3 - 3) + 3 * (2 * 2 * 2 - 2);
  const double sd = std::sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))));
  const double z = (n1 * n2 / 2 - u - 0.5) / sd;
  const auto s = gpuperf::mann_whitney_test(base, cand, options);
  CHECK(s.t == Approx(z).epsilon(1e-12));
  CHECK(s.p_value == Approx(std::erfc(z / std::sqrt(2.0))).epsilon(1e-12));
  CHECK(s.p_value < 0.05);
  CHECK(s.verdict == "faster");  // p50 13.5 -> 11.75
  CHECK(gpuperf::mann_whitney_test(cand, base, options).verdict == "slower");
  CHECK_THAT(s.method, Catch::Contains("Mann-Whitney U, 12 vs 12"));

  // No ties, 10 vs 10: the normal approximation's p against the exact two-sided p from all
  // C(20,10) = 184,756 ways to split the pooled values.
  const std::vector<double> a = {1, 2, 3, 5, 8, 9, 11, 14, 15, 19};
  const std::vector<double> b = {4, 6, 7, 10, 12, 13, 16, 17, 18, 20};
  const double observed = u_by_pairs(a, b);
  std::vector<int> pick(20, 0);
  std::fill(pick.begin() + 10, pick.end(), 1);
  double extreme = 0, total = 0;
  do {
    double rank_sum = 0;
    for (int i = 0; i < 20; ++i) rank_sum += pick[static_cast<std::size_t>(i)] * (i + 1);
    const double u_perm = rank_sum - 10.0 * 11 / 2;
    total += 1;
    if (std::abs(u_perm - 50) >= std::abs(observed - 50)) extreme += 1;
  } while (std::next_permutation(pick.begin(), pick.end()));
  CHECK(total == 184756);
  const double exact = extreme / total;
  CHECK(gpuperf::mann_whitney_test(a, b, options).p_value == Approx(exact).margin(0.01));

  // Too few calls, and identical samples.
  CHECK_THAT(gpuperf::mann_whitney_test({1, 2, 3}, a, options).verdict, Catch::Contains("unknown"));
  const std::vector<double> flat(20, 1e-3);
  const auto same = gpuperf::mann_whitney_test(flat, flat, options);
  CHECK(same.p_value == 1);
  CHECK(same.verdict == "same");
}

TEST_CASE("A significant but tiny latency shift reads same; percentiles judge without samples",
          "[compare][inference]") {
  gpuperf::CompareOptions options;
  std::vector<double> base, cand;
  for (int i = 0; i < 200; ++i) {
    base.push_back(1e-3 + i * 1e-8);
    cand.push_back(0.99e-3 + i * 1e-8);  // 1% faster, every call
  }
  const auto s = gpuperf::mann_whitney_test(base, cand, options);
  CHECK(s.p_value < 0.05);
  CHECK(s.verdict == "same");  // below the 2% minimum change

  gpuperf::LatencySummary b, c;
  b.p50 = 10e-3;
  b.p90 = 12e-3;
  c.p50 = 8e-3;
  c.p90 = 9.9e-3;
  CHECK(gpuperf::percentile_verdict(b, c, options).verdict == "faster");
  CHECK(gpuperf::percentile_verdict(c, b, options).verdict == "slower");
  c.p90 = 10.5e-3;  // a tenth of the candidate's calls or more are slower than the typical one
  CHECK(gpuperf::percentile_verdict(b, c, options).verdict == "same");
  CHECK(std::isnan(gpuperf::percentile_verdict(b, c, options).p_value));
  CHECK_THAT(gpuperf::percentile_verdict(b, c, options).method,
             Catch::Contains("percentiles only"));
}

TEST_CASE("Inference results compare per batch size, old files included", "[compare][inference]") {
  // Real H200 results written before fingerprints and per-call latencies were stored.
  const auto results = gpuperf::load_results({kExamples + "/h200-resnet50-infer-fp16-cl-eager.json",
                                              kExamples + "/h200-resnet50-fp16-cl.json"});
  REQUIRE(results.inference.size() == 1);
  REQUIRE(results.runs.size() == 1);
  const auto& eager = results.inference[0].result;
  CHECK(eager.fingerprint.name == "NVIDIA H200");
  CHECK(eager.fingerprint.kind == "cuda");
  REQUIRE(eager.batches.size() == 4);
  CHECK(eager.batches[0].latency.p50 == Approx(0.0036487200260162354));
  CHECK(eager.batches[0].latencies.empty());

  // The same file twice plus a faster GPU at batch 1 with per-call latencies.
  gpuperf::LoadedResults mixed = results;
  mixed.inference.push_back(mixed.inference[0]);
  mixed.inference[1].path = "copy.json";
  std::vector<double> slow, fast;
  for (int i = 0; i < 50; ++i) {
    slow.push_back(2e-3 + i * 1e-6);
    fast.push_back(1e-3 + i * 1e-6);
  }
  auto a = inference("NVIDIA A100-SXM4-80GB", 1, slow);
  auto h = inference("NVIDIA H200", 1, fast);
  mixed.inference.push_back({"a100.json", a});
  mixed.inference.push_back({"h200.json", h});
  gpuperf::CompareOptions options;
  options.baseline = "a100.json";
  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  const auto table = gpuperf::compare_results(mixed, options, &db);
  CHECK(table.training.rows.size() == 1);
  CHECK(table.training.rows[0].significance.verdict == "no baseline run");
  // 4 batch sizes x 2 eager copies, plus a100 and h200 at batch 1 in a graph-mode group.
  REQUIRE(table.inference.rows.size() == 10);
  const auto graph_row =
      std::find_if(table.inference.rows.begin(), table.inference.rows.end(),
                   [](const gpuperf::InferenceComparisonRow& r) { return r.path == "h200.json"; });
  REQUIRE(graph_row != table.inference.rows.end());
  CHECK(graph_row->key.label() == "inference resnet50 bs1 fp16 channels_last cuda-graph");
  CHECK(graph_row->speedup == Approx(a.batches[0].latency.p50 / h.batches[0].latency.p50));
  CHECK(graph_row->significance.verdict == "faster");
  // Fused kernels make another workload: never compared with unfused runs.
  auto fused = h;
  fused.kernel_fusion = "conv+bias+relu";
  CHECK(gpuperf::inference_workload_key(fused, fused.batches[0]).label() ==
        "inference resnet50 bs1 fp16 channels_last cuda-graph fused conv+bias+relu");
  CHECK_FALSE(gpuperf::inference_workload_key(fused, fused.batches[0]) ==
              gpuperf::inference_workload_key(h, h.batches[0]));
  CHECK(eager.kernel_fusion == "none");  // files before kernel fusion existed
  CHECK_THAT(graph_row->significance.method, Catch::Contains("Mann-Whitney U, 50 vs 50"));

  // Baseline by GPU name: every H200 file; within a group the first one leads.
  options.baseline = "H200";
  const auto by_gpu = gpuperf::compare_results(mixed, options, &db);
  CHECK(by_gpu.training.rows[0].is_baseline);
  std::size_t same = 0;
  for (const auto& r : by_gpu.inference.rows) {
    if (r.path == "copy.json") {
      CHECK(r.speedup == Approx(1));
      CHECK(r.significance.verdict == "same");
      CHECK_THAT(r.significance.method, Catch::Contains("percentiles only"));
      ++same;
    }
    if (r.path == "a100.json") CHECK(r.significance.verdict == "slower");
  }
  CHECK(same == 4);
  std::ostringstream md;
  gpuperf::write_comparison(md, by_gpu, gpuperf::TableFormat::kMarkdown);
  CHECK_THAT(md.str(), Catch::Contains("p (Welch)") && Catch::Contains("| p50 ms | p99 ms |") &&
                           Catch::Contains("| 3.649 | 4.503 |") &&
                           Catch::Contains("Mann-Whitney U test"));
  std::ostringstream csv;
  gpuperf::write_comparison(csv, by_gpu, gpuperf::TableFormat::kCsv);
  // One table: one header, a row per training file and per inference batch size, nothing blank.
  const std::string csv_text = csv.str();
  CHECK(csv_text.find("\n\n") == std::string::npos);
  CHECK(csv_text.find("kind,model") == 0);
  CHECK(csv_text.find("kind,model", 1) == std::string::npos);
  CHECK(std::count(csv_text.begin(), csv_text.end(), '\n') ==
        static_cast<long>(1 + by_gpu.training.rows.size() + by_gpu.inference.rows.size()));
  CHECK_THAT(csv_text, Catch::Contains("\r\ninference,") && Catch::Contains("\r\ntrain,"));
  // Inference has no micro-batches: an empty accumulation_steps cell (the ninth).
  REQUIRE(comma_cells(csv_text).at(8).rfind("accumulation_steps", 0) == 0);
  CHECK(comma_cells(csv_text.substr(csv_text.find("\r\ninference,") + 2)).at(8).empty());

  options.baseline = "Voodoo 5";
  CHECK_THROWS_WITH(gpuperf::compare_results(mixed, options, &db),
                    Catch::Contains("baseline: 'Voodoo 5'"));
  CHECK_THROWS_AS(gpuperf::compare_results({}, {}, &db), gpuperf::ConfigError);
  CHECK_THROWS_WITH(gpuperf::load_results({kData + "/gpu_specs.json"}),
                    Catch::Contains("gpu_specs.json: field 'schema' is 'gpuperf.specs/1', "
                                    "expected 'gpuperf.run/1' (training) or"));
}

TEST_CASE("The report draws inference results: latency table, latency curve, simulated serving",
          "[report][html][inference]") {
  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  auto results = gpuperf::load_results({kExamples + "/h200-resnet50-infer-fp16-cl-graph.json",
                                        kExamples + "/h200-resnet50-fp16-cl.json"});
  auto& graph = results.inference[0].result;
  gpuperf::ServingOptions serving;
  serving.max_batch = 64;
  serving.requests = 1000;
  graph.serving_options = serving;
  graph.serving = gpuperf::sweep_serving(
      gpuperf::interpolated_service_time({{1, 0.918e-3}, {64, 4.355e-3}}), serving, {500, 5000});
  std::ostringstream html;
  gpuperf::write_results_report(html, results, &db, {}, {});
  const std::string page = html.str();
  CHECK_THAT(page, Catch::Contains("<h2>resnet50 (train)</h2>") &&
                       Catch::Contains("<h2>resnet50 (inference)</h2>"));
  // The graph run's batch-1 row, from the committed H200 file.
  CHECK_THAT(page, Catch::Contains("<td class=\"n\">1</td><td class=\"n\">0.918</td>"));
  // 512 / 29.299 ms = 17,475 samples/s; 8.18 GFLOP forward x 17,475 / 989.4 TFLOPS = 14.4%.
  CHECK_THAT(page, Catch::Contains("17,475</td>") && Catch::Contains(">14.4</td>"));
  CHECK_THAT(page, Catch::Contains("class=\"line\"") && Catch::Contains("bs 512"));
  CHECK_THAT(page,
             Catch::Contains("Serving: p99 end-to-end latency") && Catch::Contains("[simulated]"));
  CHECK_THAT(page, Catch::Contains("not recorded (file predates device fingerprints)"));
  CHECK(page.find("<script") == std::string::npos);
  CHECK_THROWS_AS(gpuperf::write_results_report(html, {}, &db, {}, {}), gpuperf::ConfigError);

  // Line charts leave out unusable points and say when nothing is left.
  const std::string chart =
      gpuperf::svg_line_chart("t", "x", "y", {{"a", {{1, 2, "p"}, {std::nan(""), 1, "q"}}}});
  CHECK_THAT(chart, Catch::Contains("<polyline") && Catch::Contains(">p</text>"));
  CHECK(chart.find(">q</text>") == std::string::npos);
  CHECK_THAT(gpuperf::svg_line_chart("t", "x", "y", {{"a", {{-1, 2, ""}}}}),
             Catch::Contains("no data"));
}

TEST_CASE("Device names with line breaks or terminal escapes print as visible escapes",
          "[compare]") {
  CHECK(gpuperf::printable("H200\n| x\x1b[31m\t\x7f") == "H200\\x0a| x\\x1b[31m\\x09\\x7f");
  CHECK(gpuperf::printable("NVIDIA H200 · 141 GB") == "NVIDIA H200 · 141 GB");  // UTF-8 kept
  // NUL, a right-to-left override (U+202E), an isolate (U+2066) and a C1 control (U+009B, CSI).
  const std::string hostile = std::string("a\0b", 3) + "\xe2\x80\xae" + "gpj.exe" + "\xe2\x81\xa6" +
                              "\xc2\x9b" + "\xe2\x80\x94";
  CHECK(gpuperf::printable(hostile) == "a\\x00b\\u202egpj.exe\\u2066\\u009b\xe2\x80\x94");
  CHECK(gpuperf::html_escape(hostile + "<\n>") ==
        "a\\x00b\\u202egpj.exe\\u2066\\u009b\xe2\x80\x94&lt;\n&gt;");  // the em dash stays
  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  std::vector<gpuperf::LoadedRun> runs = {{"a.json", run("Evil\nGPU\x1b]0;pwned\x07", {1, 2, 3})}};
  std::ostringstream md;
  gpuperf::write_comparison(md, gpuperf::compare_runs(runs, {}, &db),
                            gpuperf::TableFormat::kMarkdown);
  const std::string text = md.str();
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  CHECK_THAT(text, Catch::Contains("| Evil\\x0aGPU\\x1b]0;pwned\\x07 |"));
  std::ostringstream console;
  gpuperf::write_text(console, runs[0].record, "samples");
  CHECK(console.str().find('\x1b') == std::string::npos);
}

TEST_CASE("Charts tick at round numbers, put batch sizes on a log2 axis and never stack labels",
          "[report][html]") {
  // Four to six ticks from 0 at 1, 2, 2.5 or 5 x 10^k, the last covering the maximum.
  CHECK(gpuperf::nice_ticks(18873) == std::vector<double>{0, 5000, 10000, 15000, 20000});
  CHECK(gpuperf::nice_ticks(7.95) == std::vector<double>{0, 2, 4, 6, 8});
  CHECK(gpuperf::nice_ticks(31.8) == std::vector<double>{0, 10, 20, 30, 40});
  const auto unit = gpuperf::nice_ticks(1);
  REQUIRE(unit.size() == 6);  // 0, 0.2, ..., 1
  CHECK(unit[1] == Approx(0.2));
  CHECK(unit.back() == Approx(1));
  CHECK(gpuperf::nice_ticks(0).size() == 6);  // nothing to show: the unit axis

  // Batch sizes 1..512 on a log2 axis: one tick per power of two, evenly spaced, labelled as
  // plain numbers; "bs 256" and "bs 512" both readable, and labels that would overlap dropped.
  gpuperf::ChartSeries sweep{"sweep", {}};
  for (int b = 1; b <= 512; b *= 2) {
    sweep.points.push_back({static_cast<double>(b), 10.0 + b / 100.0, "bs " + std::to_string(b)});
  }
  const std::string log_chart =
      gpuperf::svg_line_chart("t", "batch size", "ms", {sweep}, gpuperf::AxisScale::kLog2);
  for (const char* tick : {">1</text>", ">2</text>", ">64</text>", ">512</text>"}) {
    CHECK_THAT(log_chart, Catch::Contains(tick));
  }
  CHECK(log_chart.find(">18,873</text>") == std::string::npos);
  CHECK_THAT(log_chart, Catch::Contains(">bs 256</text>") && Catch::Contains(">bs 512</text>"));
  // Ten points with the same y and close x on a linear axis: the labels of the crowded points
  // are left to their tooltips.
  gpuperf::ChartSeries crowded{"crowded", {}};
  for (int i = 1; i <= 10; ++i)
    crowded.points.push_back({1000.0 + i, 5, "point " + std::to_string(i)});
  const std::string linear = gpuperf::svg_line_chart("t", "x", "y", {crowded});
  CHECK_THAT(linear, Catch::Contains(">point 1</text>"));
  CHECK(linear.find(">point 2</text>") == std::string::npos);
  CHECK_THAT(linear, Catch::Contains("point 2, "));  // still in the tooltip

  // Two files whose bars would read the same get their file names; a repeat within one file is
  // numbered.
  std::vector<gpuperf::ChartBar> bars = {{"H200 · fp16", 1, "measured", ""},
                                         {"H200 · fp16", 2, "measured", ""},
                                         {"A100 · fp16", 3, "measured", ""}};
  gpuperf::distinguish_labels(bars, {"results/a.json", "b.json", "c.json"});
  CHECK(bars[0].label == "H200 · fp16 (a.json)");
  CHECK(bars[1].label == "H200 · fp16 (b.json)");
  CHECK(bars[2].label == "A100 · fp16");
  std::vector<gpuperf::ChartBar> same = {{"x", 1, "measured", ""}, {"x", 2, "measured", ""}};
  gpuperf::distinguish_labels(same, {"a.json", "a.json"});
  CHECK(same[0].label != same[1].label);
  CHECK_THROWS_AS(gpuperf::distinguish_labels(same, {"a.json"}), gpuperf::Error);
}

TEST_CASE("A bar's whisker spans its interval clamped to the axis, and its value reads past it",
          "[report][html]") {
  // A skewed record: median 50 with an interval from -15 to 192 (a mean's CI half-width of 103
  // around the median once drew from -15 to 192, across the origin and over the label).
  std::vector<gpuperf::ChartBar> bars = {{"skewed", 50, "measured", ""},
                                         {"slow", 0.334, "measured", ""}};
  bars[0].low = -15;
  bars[0].high = 192;
  const std::string svg = gpuperf::svg_bar_chart("t", "img/s", bars);
  // Labels of 6 characters: the label column is its minimum, 160 px, and the plot 470 px wide.
  const double plot_begin = 160, plot_end = 160 + 470;
  const auto number_after = [&](const std::string& key, std::size_t from) {
    const auto at = svg.find(key, from);
    REQUIRE(at != std::string::npos);
    return std::strtod(svg.c_str() + at + key.size(), nullptr);
  };
  const auto whisker = svg.find("class=\"whisker\"");
  REQUIRE(whisker != std::string::npos);
  const double x1 = number_after("x1=\"", whisker), x2 = number_after("x2=\"", whisker);
  CHECK(x1 == Approx(plot_begin));  // clamped at 0, not left of the axis
  CHECK(x2 <= plot_end);
  CHECK(x2 > x1);
  // The axis ends at or above the interval's end: 192 fits, so the whisker ends inside.
  CHECK(x2 < plot_end + 1e-9);
  // Its value label starts past the whisker's end.
  const auto label = svg.find(">50.0</text>");
  REQUIRE(label != std::string::npos);
  const auto text_x = svg.rfind("<text x=\"", label);
  CHECK(std::strtod(svg.c_str() + text_x + 9, nullptr) > x2);
  // Below 100, three significant digits: 0.334, never 0.
  CHECK_THAT(svg, Catch::Contains(">0.334</text>"));
  // Only the bar with an interval has a whisker.
  CHECK(svg.find("class=\"whisker\"", whisker + 1) == std::string::npos);
}

TEST_CASE("Records that share an x are drawn as points, never joined by a vertical line",
          "[report][html]") {
  // Two 2-rank records of one workload (1700 and 1900 samples/s) and its 1-GPU point: the line
  // has one vertex per GPU count, at 2 GPUs their median, and all three records are points.
  gpuperf::ChartSeries scaling{"dp", {{2, 1900, "a"}, {1, 1000, "1 GPU"}, {2, 1700, "b"}}};
  const std::string svg = gpuperf::svg_line_chart("t", "GPUs", "samples/s", {scaling});
  const auto from = svg.find("<polyline");
  REQUIRE(from != std::string::npos);
  const auto begin = svg.find("points=\"", from) + 8;
  std::istringstream vertices(svg.substr(begin, svg.find('"', begin) - begin));
  std::vector<std::pair<double, double>> xy;
  for (std::string vertex; vertices >> vertex;) {
    const auto comma = vertex.find(',');
    xy.emplace_back(std::stod(vertex.substr(0, comma)), std::stod(vertex.substr(comma + 1)));
  }
  REQUIRE(xy.size() == 2);
  CHECK(xy[0].first < xy[1].first);  // no two vertices on one vertical
  // The 2-GPU vertex lies halfway between the two records' circles.
  const auto circle_y = [&](const std::string& label) {
    const auto title = svg.find("<title>dp: " + label + ",");
    REQUIRE(title != std::string::npos);
    const auto cy = svg.rfind("cy=\"", title);
    return std::strtod(svg.c_str() + cy + 4, nullptr);
  };
  CHECK(xy[1].second == Approx((circle_y("a") + circle_y("b")) / 2).margin(0.1));
  CHECK(circle_y("a") != Approx(circle_y("b")));
}

TEST_CASE("A training CSV row carries the whole job's throughput beside its own window's",
          "[report][csv]") {
  gpuperf::RunRecord r = run("NVIDIA H200", {990, 1000, 1010});
  r.window_seconds = {1, 1, 1};
  const auto last_cells = [](const gpuperf::RunRecord& record) {
    std::ostringstream out;
    gpuperf::write_csv(out, record);
    std::istringstream lines(out.str());
    std::string header, first;
    std::getline(lines, header);
    std::getline(lines, first);
    for (auto* line : {&header, &first}) {
      if (!line->empty() && line->back() == '\r') line->pop_back();  // CSV's CRLF
    }
    return std::make_pair(header.substr(header.rfind(',') + 1), first.substr(first.rfind(',') + 1));
  };
  auto [column, single] = last_cells(r);
  CHECK(column == "job_throughput_samples_per_s");
  CHECK(std::stod(single) == Approx(r.throughput.median));
  r.distributed.world_size = 2;
  r.distributed.global_throughput = 1900;
  CHECK(std::stod(last_cells(r).second) == Approx(1900));
}

TEST_CASE("Both training CSVs name the micro-batches a step ran in", "[report][csv][compare]") {
  gpuperf::RunRecord r = run("NVIDIA H200", {990, 1000, 1010});
  r.config.accumulation_steps = 4;
  std::ostringstream own;
  gpuperf::write_csv(own, r);
  CHECK(own.str().find("batch_size,accumulation_steps,world_size,") != std::string::npos);
  CHECK(first_row_cell(own.str(), "accumulation_steps") == "4");
  CHECK(first_row_cell(own.str(), "batch_size") == "256");

  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  const auto table = gpuperf::compare_runs({{"h200.json", r}}, {}, &db);
  std::ostringstream compared;
  gpuperf::write_comparison(compared, table, gpuperf::TableFormat::kCsv);
  CHECK(first_row_cell(compared.str(), "accumulation_steps") == "4");
  r.config.accumulation_steps = 1;
  std::ostringstream whole;
  gpuperf::write_csv(whole, r);
  CHECK(first_row_cell(whole.str(), "accumulation_steps") == "1");
}

TEST_CASE("The Google Benchmark name of a training run names its micro-batches", "[report]") {
  gpuperf::RunRecord r = run("NVIDIA H200", {990, 1000, 1010});
  r.window_seconds = {1, 1, 1};
  r.config.steps_per_window = 4;
  const auto name = [&r] {
    std::ostringstream out;
    gpuperf::write_gbench_json(out, r);
    return nlohmann::json::parse(out.str())["benchmarks"].at(0)["run_name"].get<std::string>();
  };
  const std::string one = name();
  r.config.accumulation_steps = 4;
  CHECK(name() == one + "/acc4");
  r.distributed.world_size = 2;
  CHECK(name() == one + "/acc4/ranks2");
}

TEST_CASE("The report draws data-parallel scaling only when a record ran on several ranks",
          "[report][html][distributed]") {
  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  // One GPU at 1000 samples/s; two ranks over NVLink at 1900 together (95%, computed against
  // the 1-GPU record); four over PCIe at 3200 with the record's own efficiency (80%).
  std::vector<gpuperf::LoadedRun> runs = {{"1gpu.json", run("NVIDIA H200", {990, 1000, 1010})}};
  runs.push_back({"2gpu <nv>.json", run("NVIDIA H200", {940, 950, 960})});
  auto& two = runs.back().record.distributed;
  two.world_size = 2;
  two.backend = "nccl";
  two.interconnect = "NVLink <NV18> & co";
  two.global_throughput = 1900;
  two.allreduce_bus_gbps = 123.4;
  two.allreduce_share_of_step = 0.08;
  two.parameters_identical = true;
  runs.push_back({"4gpu.json", run("NVIDIA H200", {790, 800, 810})});
  auto& four = runs.back().record.distributed;
  four.world_size = 4;
  four.interconnect = "PCIe";
  four.global_throughput = 3200;
  four.baseline_throughput = 1000;
  four.scaling_efficiency = 0.8;
  // fp16 on two ranks has no single-process record of its workload: no efficiency.
  runs.push_back({"2gpu-fp16.json", run("NVIDIA H200", {1500, 1500, 1500}, "fp16")});
  runs.back().record.distributed.world_size = 2;
  runs.back().record.distributed.interconnect = "PCIe";
  runs.back().record.distributed.global_throughput = 2900;

  std::ostringstream html;
  gpuperf::write_html_report(html, runs, &db, {}, {});
  const std::string page = html.str();
  CHECK_THAT(page, Catch::Contains("<h2>Data-parallel scaling</h2>") &&
                       Catch::Contains("Global training throughput against the number of GPUs"));
  // The series of each (model, precision, GPU, interconnect), strings escaped, and a dashed
  // ideal line from its 1-GPU point.
  CHECK_THAT(page, Catch::Contains("resnet50 · bf16 · NVIDIA H200 · NVLink &lt;NV18&gt; &amp; co"));
  CHECK_THAT(page, Catch::Contains("stroke-dasharray=\"6 4\"") &&
                       Catch::Contains("ideal linear: resnet50 · bf16 · NVIDIA H200 · PCIe"));
  CHECK(page.find("NVLink <NV18>") == std::string::npos);
  // Table rows: GPUs, global, per GPU (rank 0), efficiency, interconnect, bus GB/s, identical.
  CHECK_THAT(page, Catch::Contains("<td class=\"n\">1</td><td class=\"n\">1,000</td><td "
                                   "class=\"n\">1,000</td><td>1-GPU baseline</td>"));
  CHECK_THAT(page, Catch::Contains(
                       "<td class=\"n\">2</td><td class=\"n\">1,900</td><td class=\"n\">950</td>"
                       "<td class=\"n\">95.0% (vs 1gpu.json)</td><td>NVLink &lt;NV18&gt; &amp; "
                       "co</td><td class=\"n\">123.4 (8% of a step)</td><td>yes</td><td>2gpu "
                       "&lt;nv&gt;.json</td>"));
  CHECK_THAT(page, Catch::Contains(
                       "<td class=\"n\">4</td><td class=\"n\">3,200</td><td class=\"n\">800</td>"
                       "<td class=\"n\">80.0% (recorded, vs 1,000 samples/s)</td><td>PCIe</td>"
                       "<td class=\"n\">n/a</td><td>no</td>"));
  CHECK_THAT(page, Catch::Contains("<td class=\"n\">2</td><td class=\"n\">2,900</td><td "
                                   "class=\"n\">1,500</td><td class=\"n\">n/a</td>"));
  // A data-parallel bar says whose per-GPU figure it is.
  CHECK_THAT(page, Catch::Contains("rank 0 of 2"));
  CHECK(page.find("<script") == std::string::npos);

  // Without a data-parallel record there is no such section, and no dashed line anywhere.
  runs.resize(1);
  std::ostringstream single;
  gpuperf::write_html_report(single, runs, &db, {}, {});
  CHECK(single.str().find("Data-parallel scaling") == std::string::npos);
  CHECK(single.str().find("stroke-dasharray") == std::string::npos);
  CHECK(single.str().find("rank 0 of") == std::string::npos);
}

TEST_CASE("The ImageNet projection is one rule: the console and the HTML report show the same",
          "[report][html][distributed]") {
  const auto db = gpuperf::SpecDatabase::load_file(kData + "/gpu_specs.json");
  const double images = 90 * 1281167.0;
  // A ResNet-101 at 1000 samples/s (not only ResNet-50 has a projection): 115,305 s.
  std::vector<gpuperf::LoadedRun> runs = {{"r101.json", run("NVIDIA H200", {990, 1000, 1010})}};
  runs[0].record.config.model = "resnet101";
  runs[0].record.config.input_shape = {3, 224, 224};
  // Two ranks at 950 samples/s each, 1900 together: the job's rate, not rank 0's.
  runs.push_back({"dp2.json", run("NVIDIA H200", {940, 950, 960})});
  runs[1].record.config.input_shape = {3, 224, 224};
  runs[1].record.distributed.world_size = 2;
  runs[1].record.distributed.global_throughput = 1900;
  CHECK(gpuperf::imagenet_projection_seconds(runs[0].record) == Approx(images / 1000));
  CHECK(gpuperf::imagenet_projection_seconds(runs[1].record) == Approx(images / 1900));

  std::ostringstream r101;
  std::ostringstream dp2;
  gpuperf::write_text(r101, runs[0].record);
  gpuperf::write_text(dp2, runs[1].record);
  CHECK_THAT(r101.str(), Catch::Contains("Projected 90 epochs of ImageNet-1k (1,281,167 images) "
                                         "at this rate: 32 h 02 min (compute only: no data "
                                         "loading, one device)"));
  CHECK_THAT(dp2.str(), Catch::Contains("Projected 90 epochs of ImageNet-1k (1,281,167 images) "
                                        "at this rate: 16 h 51 min (compute only: no data "
                                        "loading, 2 devices)"));
  // A run on JPEG files says where they were decoded: the CPU, nvJPEG, nvJPEG with the host
  // threads' share beside it, or the GPU path's threads taking every file.
  auto files = runs[0].record;
  files.config.data_source = "image folder /data/train (1300 JPEG files, 2 classes)";
  const auto loading = [&](std::map<std::string, double> metrics) {
    for (const auto& [name, value] : metrics) files.metrics[name] = value;
    std::ostringstream text;
    gpuperf::write_text(text, files);
    // The projection line's parenthesis: from after "32 h 02 min (" to the line's last ')'.
    const std::string s = text.str();
    const std::string lead = "at this rate: 32 h 02 min (";
    const auto at = s.find(lead);
    if (at == std::string::npos) return s;
    const auto begin = at + lead.size();
    const auto end = s.find(")\n", begin);
    return s.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  };
  CHECK(loading({}) == "decoding the JPEG files on the CPU, one device");
  CHECK(loading({{"loader_decodes_on_gpu", 0.0}}) ==
        "decoding the JPEG files on the CPU, one device");
  CHECK(loading({{"loader_decodes_on_gpu", 1.0}, {"loader_host_decode_share", 0.0}}) ==
        "decoding the JPEG files on the GPU (nvJPEG), one device");
  CHECK(loading({{"loader_decodes_on_gpu", 1.0}, {"loader_host_decode_share", 0.697}}) ==
        "decoding the JPEG files on the GPU (nvJPEG) and the CPU (70% of them), one device");
  CHECK(loading({{"loader_decodes_on_gpu", 1.0}, {"loader_host_decode_share", 1.0}}) ==
        "decoding the JPEG files on the CPU, the GPU normalising, one device");
  CHECK(loading({{"loader_decodes_on_gpu", 1.0}, {"loader_host_decode_share", 0.994}}) ==
        "decoding the JPEG files on the GPU (nvJPEG) and the CPU (99% of them), one device");

  std::ostringstream html;
  gpuperf::write_html_report(html, runs, &db, {}, {});
  // The runs table's column "90 epochs ImageNet", in hours: 32.03 h and 16.86 h.
  CHECK_THAT(html.str(), Catch::Contains("<td class=\"n\">32.0 h</td>") &&
                             Catch::Contains("<td class=\"n\">16.9 h</td>"));

  // Anything but a 3x224x224 training record has none, in either.
  for (auto& r : runs) r.record.config.input_shape = {3, 32, 32};
  std::ostringstream small;
  gpuperf::write_text(small, runs[0].record);
  CHECK(std::isnan(gpuperf::imagenet_projection_seconds(runs[0].record)));
  CHECK(small.str().find("Projected") == std::string::npos);
  std::ostringstream small_html;
  gpuperf::write_html_report(small_html, runs, &db, {}, {});
  CHECK(small_html.str().find(" h</td>") == std::string::npos);
  runs[0].record.config.input_shape = {3, 224, 224};
  runs[0].record.config.workload = "inference";
  CHECK(std::isnan(gpuperf::imagenet_projection_seconds(runs[0].record)));
}
