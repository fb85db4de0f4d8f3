// gpuperf_report: a self-contained HTML page (inline SVG, no scripts, no network) from result
// files: throughput per GPU and precision, % of datasheet peak, samples per joule, and measured
// figures beside published ones; for inference results, latency per batch size, the
// throughput-versus-latency curve and any simulated serving curve.
//
//   gpuperf_report results/*.json -o report.html
//   chromium --headless --screenshot=report.png report.html

#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/base/files.h"
#include "gpuperf/report/html_report.h"
#include "gpuperf/report/result_files.h"
#include "gpuperf/specs/published.h"
#include "program.h"
#include "specs_option.h"

int main(int argc, char** argv) try {
  CLI::App app{"Render gpuperf result files as a self-contained HTML report", "gpuperf_report"};
  std::vector<std::string> files;
  std::string output = "gpuperf_report.html";
  std::string specs_path;
  std::string published_path;
  std::vector<std::string> specs_extra;
  bool no_published = false;
  gpuperf::HtmlReportOptions options;
  app.add_option("files", files, "result files (gpuperf.run/1 or gpuperf.inference/3 JSON)")
      ->required();
  app.add_option("-o,--output", output, "HTML file to write ('-': standard output)")
      ->capture_default_str();
  app.add_option("--title", options.title, "page title")->capture_default_str();
  app.add_option("--subtitle", options.subtitle, "a line under the title");
  app.add_option("--specs", specs_path, "spec database file (default: shipped one)");
  app.add_option("--specs-extra", specs_extra, "user spec files adding or overriding entries");
  app.add_option("--published", published_path,
                 "published-results file (default: shipped published_results.json)");
  app.add_flag("--no-published", no_published, "leave published figures out");
  app.add_option("--price-per-hour", options.efficiency.price_per_hour_usd,
                 "rental price per GPU-hour (USD) for the cost column")
      ->check(gpuperf::program::number_rule([](double v) { return v >= 0; }, ">= 0"));

  return gpuperf::program::run_program(app, argc, argv, [&] {
    options.efficiency.validate();
    // The output is checked before anything is read: never one of the inputs, by any spelling.
    std::vector<std::string> inputs = gpuperf::program::specs_inputs(specs_path, specs_extra);
    inputs.insert(inputs.end(), files.begin(), files.end());
    if (!published_path.empty()) inputs.push_back(published_path);
    gpuperf::check_not_an_input(output, inputs, "--output");
    gpuperf::check_writable(output, "output");
    const auto results = gpuperf::load_results(files);
    const auto specs = gpuperf::program::load_specs(specs_path, specs_extra, false);
    std::vector<gpuperf::PublishedResult> published;
    if (!no_published) {
      published = gpuperf::program::load_published(published_path);
    }
    std::ostringstream html;
    gpuperf::write_results_report(html, results, specs ? &*specs : nullptr, published, options);
    gpuperf::write_text_file_atomically(html.str(), output);
    (gpuperf::is_stdout_path(output) ? std::cerr : std::cout)
        << "wrote " << output << " (" << results.runs.size() << " training run(s), "
        << results.inference.size() << " inference result(s), " << published.size()
        << " published figure(s))\n";
    return gpuperf::program::kExitOk;
  });
} catch (...) {
  return gpuperf::program::setup_failed("gpuperf_report");
}
