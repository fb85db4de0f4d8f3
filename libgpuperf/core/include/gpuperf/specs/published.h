#pragma once
// Published training throughput from other people's benchmarks (data/published_results.json),
// shown beside measured figures and always labelled "published", each with its software stack:
// per-GPU PyTorch figures (gpuperf's own stack) or MLPerf submissions, never compared as equals.
//
//   auto published = gpuperf::load_published_results(gpuperf::find_data_file(
//       "published_results.json"));
//   for (const auto& p : published) std::cout << p.gpu << " " << p.per_gpu() << " img/s\n";

#include <string>
#include <vector>

namespace gpuperf {

/// Schema tag of a published-results file.
inline constexpr const char* kPublishedSchema = "gpuperf.published/1";

/// The software stack a published figure was measured with. Figures of one GPU vary ~1.6x
/// between stacks (docs/gpu-selection.md), so the advisor ranks and scales only within a stack.
enum class PublishedStack {
  kPyTorch,  ///< PyTorch, per-GPU throughput: the stack gpuperf itself measures (LibTorch)
  kMlperf,   ///< an MLPerf submission: its own framework, optimizer, data pipeline and tuning
};

/// "pytorch" or "mlperf", as the file spells it.
[[nodiscard]] const char* stack_name(PublishedStack stack);

/// One published figure.
struct PublishedResult {
  std::string gpu;     ///< as the source names it, e.g. "8x A100 80GB"
  std::string gpu_id;  ///< spec database id, e.g. "a100-sxm4-80gb"
  int gpu_count = 1;
  std::string model;                  ///< gpuperf model name, e.g. "resnet50"
  std::string precision;              ///< "amp", "fp32", "tf32", ...
  double batch_size = 0;              ///< per GPU; NaN when the source does not say
  double images_per_second_low = 0;   ///< total over gpu_count GPUs
  double images_per_second_high = 0;  ///< equals low unless the source gives a range
  /// "stack" in the file; a file without it: kMlperf when its source or setup names MLPerf.
  PublishedStack stack = PublishedStack::kPyTorch;
  std::string source;
  std::string setup;

  /// Midpoint throughput per GPU.
  [[nodiscard]] double per_gpu() const {
    return (images_per_second_low + images_per_second_high) / 2 / gpu_count;
  }
};

/// Parses published-results JSON; IoError naming `origin` and the field when it is malformed.
[[nodiscard]] std::vector<PublishedResult> published_results_from_json(const std::string& text,
                                                                       const std::string& origin);
/// Loads a published-results file; IoError when unreadable or malformed.
[[nodiscard]] std::vector<PublishedResult> load_published_results(const std::string& path);

}  // namespace gpuperf
