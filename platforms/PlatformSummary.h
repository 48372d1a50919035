#pragma once
// Derived totals of a platform, for `scoville platform show` and reports.

#include <nlohmann/json.hpp>
#include <ostream>

#include "platforms/PlatformConfig.h"

namespace scoville::platform {

/// {"name", "chips", "peak_flops": {precision: FLOP/s}, "hbm_bandwidth", "hbm_capacity", ...}
nlohmann::ordered_json summarize(const PlatformConfig& config);

/// Human-readable tree of the platform with its totals.
void printTree(std::ostream& out, const PlatformConfig& config);

}  // namespace scoville::platform
