#include "specs_option.h"

#include <iostream>

#include "gpuperf/base/error.h"

namespace gpuperf::program {

std::optional<SpecDatabase> load_specs(const std::string& path,
                                       const std::vector<std::string>& extra, bool required) {
  std::optional<SpecDatabase> db;
  try {
    db = SpecDatabase::load_default(path);
  } catch (const IoError& e) {
    if (required || !path.empty()) throw;
    std::cerr << "warning: " << e.what() << "; continuing without datasheet figures\n";
    return std::nullopt;
  }
  for (const auto& file : extra) db->merge_file(file);
  return db;
}

}  // namespace gpuperf::program
