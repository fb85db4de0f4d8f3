#include "specs_option.h"

#include <cstdlib>
#include <iostream>

#include "gpuperf/base/error.h"

namespace gpuperf::program {

std::optional<SpecDatabase> load_specs(const std::string& path,
                                       const std::vector<std::string>& extra, bool required) {
  // Only a missing shipped file is forgiven; a file the user chose (--specs, GPUPERF_SPECS,
  // --specs-extra) that is missing or malformed is an error naming the option.
  const char* env = std::getenv("GPUPERF_SPECS");
  const bool chosen = !path.empty() || (env != nullptr && *env != '\0');
  const std::string option = path.empty() ? "" : "--specs: ";
  std::string found;
  try {
    found = default_specs_path(path);
  } catch (const IoError& e) {
    if (required || chosen) throw ConfigError(option + e.what());
    std::cerr << "warning: " << e.what() << "; continuing without datasheet figures\n";
    return std::nullopt;
  }
  std::optional<SpecDatabase> db;
  try {
    db = SpecDatabase::load_file(found);
  } catch (const Error& e) {
    throw ConfigError(option + e.what());
  }
  for (const auto& file : extra) {
    try {
      db->merge_file(file);
    } catch (const Error& e) {
      throw ConfigError(std::string("--specs-extra: ") + e.what());
    }
  }
  return db;
}

std::vector<PublishedResult> load_published(const std::string& path) {
  if (path.empty()) return load_published_results(find_data_file("published_results.json"));
  try {
    return load_published_results(path);
  } catch (const Error& e) {
    throw ConfigError(std::string("--published: ") + e.what());
  }
}

std::vector<RentalPrice> load_default_prices(const std::string& path, const SpecDatabase& db) {
  if (path.empty()) {
    try {
      return load_rental_prices(find_data_file("gpu_rental_prices.json"), db);
    } catch (const Error& e) {
      throw ConfigError(std::string("default rental prices: ") + e.what() +
                        " (give another table with --default-prices FILE, or none with "
                        "--no-default-prices)");
    }
  }
  try {
    return load_rental_prices(path, db);
  } catch (const Error& e) {
    throw ConfigError(std::string("--default-prices: ") + e.what());
  }
}

std::vector<std::string> specs_inputs(const std::string& path,
                                      const std::vector<std::string>& extra) {
  std::vector<std::string> inputs = extra;
  if (!path.empty()) inputs.push_back(path);
  return inputs;
}

}  // namespace gpuperf::program
