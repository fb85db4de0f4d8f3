// Cross-run comparison, result-file loading and the HTML report (rendered in headless Chromium
// where it is installed).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/error.h"
#include "gpuperf/report/compare.h"
#include "gpuperf/report/html_report.h"
#include "gpuperf/report/result_files.h"
#include "gpuperf/specs/specs.h"

namespace {

const std::string kData = GPUPERF_TEST_DATA_DIR;

gpuperf::RunRecord run(const std::string& gpu, const std::vector<double>& windows,
                       const std::string& precision = "bf16") {
  gpuperf::RunRecord r;
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
  return r;
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
  CHECK(csv.str().rfind("workload,GPU,software,file", 0) == 0);
  CHECK_THAT(csv.str(), Catch::Contains("\"LibTorch 2.11.0, CUDA 13.0\""));
  const std::string csv_text = csv.str();
  CHECK(std::count(csv_text.begin(), csv_text.end(), '\n') == 4);

  options.baseline = "h200.json";
  CHECK(gpuperf::compare_runs(runs, options, &db).rows[0].path == "h200.json");
  options.baseline = "RTX 4090";
  CHECK_THROWS_WITH(gpuperf::compare_runs(runs, options, &db),
                    Catch::Contains("--baseline") && Catch::Contains("RTX 4090"));
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

TEST_CASE("the HTML report is self-contained and draws its charts in Chromium", "[report][html]") {
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

  const std::string dir = temp_dir();
  const std::string file = dir + "/report.html";
  std::ofstream(file) << page;
  const char* chromium = nullptr;
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(candidate, X_OK) == 0) chromium = candidate;
  }
  if (chromium == nullptr) {
    WARN("chromium not installed (apt-get install chromium): skipping the render check");
    std::system(("rm -rf " + dir).c_str());
    return;
  }
  const std::string flags = std::string(chromium) +
                            " --headless --no-sandbox --disable-gpu --disable-background-networking"
                            " --disable-component-update --disable-sync --no-first-run"
                            " --user-data-dir=" +
                            dir + "/profile --window-size=1000,1400 ";
  REQUIRE(std::system((flags + "--dump-dom file://" + file + " > " + dir + "/dom.html 2>/dev/null")
                          .c_str()) == 0);
  const std::string dom = slurp(dir + "/dom.html");
  CHECK_THAT(dom, Catch::Contains("<svg") && Catch::Contains("<rect class=\"bar\""));
  REQUIRE(
      std::system((flags + "--screenshot=" + dir + "/shot.png file://" + file + " > /dev/null 2>&1")
                      .c_str()) == 0);
  const std::string png = slurp(dir + "/shot.png");
  REQUIRE(png.size() > 8);
  CHECK(png.substr(1, 3) == "PNG");
  // A blank page compresses to a few kB; charts and text make it far larger.
  CHECK(png.size() > 30000);
  std::system(("rm -rf " + dir).c_str());
}
