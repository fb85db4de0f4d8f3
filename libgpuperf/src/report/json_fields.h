#pragma once
// JSON pieces shared by the writers of run records and microbenchmark reports (torch-free).

#include <nlohmann/json.hpp>

#include "gpuperf/report/run_record.h"

namespace gpuperf::detail {

/// A number, or null for NaN ("not available").
[[nodiscard]] nlohmann::json json_number(double value);
/// The "device" object of a record.
[[nodiscard]] nlohmann::json device_json(const DeviceFingerprint& device);

}  // namespace gpuperf::detail
