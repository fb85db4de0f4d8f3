#pragma once
// The spec database as the torch-free programs (compare, report, advise) take it: --specs and
// --specs-extra on top of the shipped file.
//
//   const auto specs = gpuperf::program::load_specs(specs_path, specs_extra, /*required=*/false);
//   gpuperf::compare_results(results, options, specs ? &*specs : nullptr);

#include <optional>
#include <string>
#include <vector>

#include "gpuperf/specs/published.h"
#include "gpuperf/specs/rental_prices.h"
#include "gpuperf/specs/specs.h"

namespace gpuperf::program {

/// Loads the spec database (`path`, else $GPUPERF_SPECS, the build or the install tree) plus the
/// `extra` user files. A file the user chose (`path`, GPUPERF_SPECS, `extra`) that is missing or
/// malformed is a ConfigError naming --specs or --specs-extra; a missing shipped file is one too
/// when `required`, else a warning on stderr and nullopt, because comparing or reporting still
/// works without datasheet figures.
[[nodiscard]] std::optional<SpecDatabase> load_specs(const std::string& path,
                                                     const std::vector<std::string>& extra,
                                                     bool required);

/// The published results: `path`, or the shipped file when it is empty. A file given that is
/// missing or malformed is a ConfigError naming --published.
[[nodiscard]] std::vector<PublishedResult> load_published(const std::string& path);

/// The default rental prices: `path`, or the shipped gpu_rental_prices.json when it is empty,
/// each entry checked against `db`. A file given that is missing or malformed is a ConfigError
/// naming --default-prices; a shipped one (which a --specs database may lack GPUs of) is one
/// saying how to give another table or none.
[[nodiscard]] std::vector<RentalPrice> load_default_prices(const std::string& path,
                                                           const SpecDatabase& db);

/// The spec files given on the command line, as inputs that no output may overwrite.
[[nodiscard]] std::vector<std::string> specs_inputs(const std::string& path,
                                                    const std::vector<std::string>& extra);

}  // namespace gpuperf::program
