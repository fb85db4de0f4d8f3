// gpuperf_compare: one table of matching workloads across result files (different GPUs,
// versions, settings), with speedups against a baseline and a noise-aware verdict. Training runs
// and inference results (one row per batch size) each get their own table.
//
//   gpuperf_compare a100.json h100.json h200.json --baseline a100.json --format md
//   gpuperf_compare results/*.json --baseline "H100 SXM5 80GB" --format csv -o table.csv
//   gpuperf_compare h200-infer-eager.json h200-infer-graph.json
//   gpuperf_compare base.json new.json --fail-on slower   # exit 1 when a row is slower (CI)

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gpuperf/base/files.h"
#include "gpuperf/report/compare.h"
#include "program.h"
#include "specs_option.h"

int main(int argc, char** argv) try {
  CLI::App app{"Compare gpuperf result files: speedups against a baseline, Welch t-test verdicts",
               "gpuperf_compare"};
  std::vector<std::string> files;
  std::string baseline;
  std::string format = "md";
  std::string output;
  std::string specs_path;
  std::vector<std::string> specs_extra;
  std::string fail_on = "never";
  gpuperf::CompareOptions options;
  app.add_option("files", files, "result files (gpuperf.run/1 or gpuperf.inference/3 JSON)")
      ->required();
  app.add_option("--baseline", baseline,
                 "baseline: one of the files, or a GPU name/id (default: the first file)");
  app.add_option("--format", format, "md or csv")->capture_default_str();
  app.add_option("-o,--output", output,
                 "write the table to this file ('-' or none: standard output)");
  app.add_option("--alpha", options.alpha, "significance level of the Welch t-test")
      ->capture_default_str()
      ->check(
          gpuperf::program::number_rule([](double v) { return v > 0 && v < 1; }, "> 0 and < 1"));
  app.add_option("--min-change", options.min_change,
                 "smallest relative change reported as faster/slower")
      ->capture_default_str()
      ->check(
          gpuperf::program::number_rule([](double v) { return v >= 0 && v < 1; }, ">= 0 and < 1"));
  app.add_option("--fail-on", fail_on,
                 "exit 1 (after writing the table) when a row's verdict is 'slower' (slower), "
                 "'slower' or 'faster' (any), or never")
      ->capture_default_str()
      ->check(CLI::IsMember({"never", "slower", "any"}));
  app.add_option("--specs", specs_path, "spec database file (default: shipped one)");
  app.add_option("--specs-extra", specs_extra, "user spec files adding or overriding entries");

  return gpuperf::program::run_program(app, argc, argv, [&] {
    const auto table_format = gpuperf::parse_table_format(format, "--format");
    // A baseline file not among the inputs is added to them, so it can be named alone.
    if (!baseline.empty() && std::find(files.begin(), files.end(), baseline) == files.end() &&
        baseline.size() > 5 && baseline.substr(baseline.size() - 5) == ".json") {
      files.insert(files.begin(), baseline);
    }
    // The output is checked before anything is read: never one of the inputs, by any spelling.
    if (output.empty()) output = gpuperf::kStdoutPath;
    std::vector<std::string> inputs = gpuperf::program::specs_inputs(specs_path, specs_extra);
    inputs.insert(inputs.end(), files.begin(), files.end());
    gpuperf::check_not_an_input(output, inputs, "--output");
    gpuperf::check_writable(output, "output");
    const auto results = gpuperf::load_results(files);
    const auto specs = gpuperf::program::load_specs(specs_path, specs_extra, false);
    options.baseline = baseline;
    const auto comparison = gpuperf::compare_results(results, options, specs ? &*specs : nullptr);
    std::ostringstream text;
    gpuperf::write_comparison(text, comparison, table_format);
    gpuperf::write_text_file_atomically(text.str(), output);
    // The gate of a CI job: the verdicts the test found significant, against the baseline.
    std::vector<std::string> flagged;
    const auto judge = [&](const std::string& verdict, const std::string& what) {
      if (verdict == "slower" || (fail_on == "any" && verdict == "faster")) {
        flagged.push_back(what + " (" + verdict + ")");
      }
    };
    if (fail_on != "never") {
      for (const auto& row : comparison.training.rows) {
        judge(row.significance.verdict, row.key.label() + " in " + row.path);
      }
      for (const auto& row : comparison.inference.rows) {
        judge(row.significance.verdict, row.key.label() + " in " + row.path);
      }
    }
    if (!flagged.empty()) {
      std::cerr << "gpuperf_compare: --fail-on " << fail_on << ": " << flagged.size()
                << " row(s) differ from the baseline: " << flagged.front()
                << (flagged.size() > 1 ? " and " + std::to_string(flagged.size() - 1) + " more"
                                       : "")
                << "\n";
      return gpuperf::program::kExitFailure;
    }
    return gpuperf::program::kExitOk;
  });
} catch (...) {
  return gpuperf::program::setup_failed("gpuperf_compare");
}
