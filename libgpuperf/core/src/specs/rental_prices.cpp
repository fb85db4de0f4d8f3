// Reader for data/gpu_rental_prices.json.
#include "gpuperf/specs/rental_prices.h"

#include <cctype>
#include <set>

#include "gpuperf/base/error.h"
#include "gpuperf/base/files.h"
#include "base/json.h"

namespace gpuperf {
namespace {

// A calendar date as YYYY-MM-DD: a price without a date cannot be judged stale.
bool is_date(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i != 4 && i != 7 && !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  const int month = std::stoi(text.substr(5, 2));
  const int day = std::stoi(text.substr(8, 2));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

}  // namespace

std::vector<RentalPrice> rental_prices_from_json(const std::string& text, const std::string& origin,
                                                 const SpecDatabase& db) {
  const nlohmann::json doc = detail::parse_json(text, origin);
  const detail::JsonReader top(doc, origin, "");
  top.expect_schema(kRentalPricesSchema);
  const nlohmann::json& prices = top.non_empty_array("prices");
  std::vector<RentalPrice> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < prices.size(); ++i) {
    const std::string path = "prices[" + std::to_string(i) + "]";
    RentalPrice p;
    p.gpu_id = detail::JsonReader(prices[i], origin, path).string("gpu_id");
    const detail::JsonReader f(prices[i], origin, path + " (" + p.gpu_id + ")");
    if (db.find_id(p.gpu_id) == nullptr) {
      f.fail(f.field("gpu_id"), "'" + p.gpu_id + "' is not an id of the datasheet database");
    }
    if (!seen.insert(p.gpu_id).second) {
      f.fail(f.field("gpu_id"), "'" + p.gpu_id + "' is priced twice in this file");
    }
    p.usd_per_gpu_hour = f.number_in("usd_per_gpu_hour", 0, detail::kMaxFigure, /*nullable=*/false,
                                     /*exclusive_low=*/true);
    const auto required = [&f](const char* key, const char* why) {
      std::string value = f.string(key);
      if (value.empty()) f.fail(f.field(key), std::string("is empty: ") + why);
      return value;
    };
    p.provider = required("provider", "every price names whose it is");
    p.source = required("source", "every price needs the page it was published on");
    p.date = required("date", "every price needs the date it was read");
    if (!is_date(p.date)) f.fail(f.field("date"), "is '" + p.date + "', expected YYYY-MM-DD");
    p.via = f.optional_string("via");
    p.note = f.optional_string("note");
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<RentalPrice> load_rental_prices(const std::string& path, const SpecDatabase& db) {
  return rental_prices_from_json(read_text_file(path), path, db);
}

}  // namespace gpuperf
