#pragma once
// The default rental prices (data/gpu_rental_prices.json): one dated, sourced on-demand price per
// GPU-hour for some datasheet GPUs, which the advisor uses for a GPU the user gave no price for.
// Prices move and differ by provider and term; each entry says whose price it is and when it was
// read, so that a reader can tell how stale it is.
//
//   const auto db = gpuperf::SpecDatabase::load_default();
//   const auto prices = gpuperf::load_rental_prices(
//       gpuperf::find_data_file("gpu_rental_prices.json"), db);
//   auto ranking = gpuperf::advise_with(request, db, results, published, prices);

#include <string>
#include <vector>

#include "gpuperf/specs/specs.h"

namespace gpuperf {

/// Schema tag of a rental-price file.
inline constexpr const char* kRentalPricesSchema = "gpuperf.rental_prices/1";

/// One GPU's on-demand rental price, as a provider published it.
struct RentalPrice {
  std::string gpu_id;           ///< datasheet id, e.g. "h100-sxm5-80gb"
  double usd_per_gpu_hour = 0;  ///< on-demand USD per GPU-hour, > 0
  std::string provider;         ///< whose price, e.g. "RunPod (Secure Cloud)"
  std::string source;           ///< URL of the provider's page the price was published on
  std::string date;             ///< YYYY-MM-DD: when the price was read there
  std::string via;              ///< URL of the dated public copy it was taken from, or ""
  std::string note;             ///< the offer, e.g. "single GPU, H100 SXM 80 GB"
};

/// Parses rental-price JSON. Every entry must name a GPU of `db` (once), give a finite price > 0
/// and a provider, source and YYYY-MM-DD date; otherwise IoError "<origin>: field
/// 'prices[<i>] (<gpu_id>).<field>' <problem>".
[[nodiscard]] std::vector<RentalPrice> rental_prices_from_json(const std::string& text,
                                                               const std::string& origin,
                                                               const SpecDatabase& db);
/// Loads a rental-price file; IoError, naming the file, when unreadable or malformed.
[[nodiscard]] std::vector<RentalPrice> load_rental_prices(const std::string& path,
                                                          const SpecDatabase& db);

}  // namespace gpuperf
