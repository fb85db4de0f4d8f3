// Reader for data/published_results.json.
#include "gpuperf/specs/published.h"

#include <cmath>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "gpuperf/specs/specs.h"
#include "base/json.h"

namespace gpuperf {

const char* stack_name(PublishedStack stack) {
  return stack == PublishedStack::kMlperf ? "mlperf" : "pytorch";
}

std::vector<PublishedResult> published_results_from_json(const std::string& text,
                                                         const std::string& origin) {
  const nlohmann::json doc = detail::parse_json(text, origin);
  const detail::JsonReader top(doc, origin, "");
  top.expect_schema(kPublishedSchema);
  const nlohmann::json& results = top.non_empty_array("results");
  std::vector<PublishedResult> out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const detail::JsonReader f(results[i], origin, "results[" + std::to_string(i) + "]");
    PublishedResult p;
    p.gpu = f.string("gpu");
    p.gpu_id = f.string("gpu_id");
    const double count = f.plain_number("gpu_count", true);
    if (!(count >= 1) || count != std::floor(count) || count > 1e6) {
      f.fail(f.field("gpu_count"), "must be a whole number >= 1");
    }
    p.gpu_count = static_cast<int>(count);
    p.model = f.string("model");
    p.precision = f.string("precision");
    p.batch_size = f.plain_number("batch_size", false);
    if (p.batch_size == 0) f.fail(f.field("batch_size"), "is 0, expected > 0 (or absent)");
    const nlohmann::json& ips = f.at("images_per_second");
    if (ips.is_array()) {
      if (ips.size() != 2 || !ips[0].is_number() || !ips[1].is_number()) {
        f.fail(f.field("images_per_second"), "is an array but not a [low, high] pair of numbers");
      }
      p.images_per_second_low = ips[0].get<double>();
      p.images_per_second_high = ips[1].get<double>();
    } else if (ips.is_number()) {
      p.images_per_second_low = p.images_per_second_high = ips.get<double>();
    } else {
      f.fail(f.field("images_per_second"), "is not a number or a [low, high] pair");
    }
    if (!(p.images_per_second_low > 0) || !(p.images_per_second_high >= p.images_per_second_low) ||
        !(p.images_per_second_high <= detail::kMaxQuantity)) {
      f.fail(f.field("images_per_second"), "must be positive, at most " +
                                               detail::JsonReader::num(detail::kMaxQuantity) +
                                               ", low <= high");
    }
    p.source = f.string("source");
    if (p.source.empty())
      f.fail(f.field("source"), "is empty: every published figure needs a source");
    p.setup = f.optional_string("setup");
    // Files written before the field held PyTorch figures and NVIDIA's MLPerf results only, the
    // latter naming MLPerf in their source or setup.
    const std::string stack = f.optional_string("stack");
    if (stack == "mlperf" || (stack.empty() && (p.source.find("MLPerf") != std::string::npos ||
                                                p.setup.find("MLPerf") != std::string::npos))) {
      p.stack = PublishedStack::kMlperf;
    } else if (!stack.empty() && stack != "pytorch") {
      f.fail(f.field("stack"), "is '" + stack + "', expected 'pytorch' or 'mlperf'");
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PublishedResult> load_published_results(const std::string& path) {
  return published_results_from_json(read_text_file(path), path);
}

}  // namespace gpuperf
