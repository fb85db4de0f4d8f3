#pragma once
// Timestamps of results.

#include <string>

namespace gpuperf {

/// Current UTC time as ISO 8601 ("2026-11-29T20:35:51Z").
[[nodiscard]] std::string utc_timestamp();

}  // namespace gpuperf
