#pragma once
// The spec database as the torch-free programs (compare, report, advise) take it: --specs and
// --specs-extra on top of the shipped file.
//
//   const auto specs = gpuperf::program::load_specs(specs_path, specs_extra, /*required=*/false);
//   gpuperf::compare_results(results, options, specs ? &*specs : nullptr);

#include <optional>
#include <string>
#include <vector>

#include "gpuperf/specs/specs.h"

namespace gpuperf::program {

/// Loads the spec database (`path`, else $GPUPERF_SPECS, the build or the install tree) plus the
/// `extra` user files. An explicit or extra file that fails is an error (IoError, ConfigError); a
/// missing default is one too when `required`, else a warning on stderr and nullopt, because
/// comparing or reporting still works without datasheet figures.
[[nodiscard]] std::optional<SpecDatabase> load_specs(const std::string& path,
                                                     const std::vector<std::string>& extra,
                                                     bool required);

}  // namespace gpuperf::program
