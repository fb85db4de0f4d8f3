#include "specs_option.h"

#include <iostream>

#include "gpuperf/base/error.h"

namespace gpuperf::program {

std::optional<SpecDatabase> load_specs(const std::string& path,
                                       const std::vector<std::string>& extra, bool required) {
  // Only a missing default file is forgiven; a file that is there but malformed is an error.
  std::string found;
  try {
    found = default_specs_path(path);
  } catch (const IoError& e) {
    if (required || !path.empty()) throw;
    std::cerr << "warning: " << e.what() << "; continuing without datasheet figures\n";
    return std::nullopt;
  }
  std::optional<SpecDatabase> db = SpecDatabase::load_file(found);
  for (const auto& file : extra) db->merge_file(file);
  return db;
}

}  // namespace gpuperf::program
