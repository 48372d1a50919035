#pragma once

#include <string>

#include "hw/ChipConfig.h"
#include "tlm/config/Schema.h"

namespace scoville::platform {

/// A platform description as read from platforms/*.yaml. Today: one chip; topology, chip count,
/// switches and placement arrive with the multi-chip platform builder.
struct PlatformConfig {
  std::string name;
  std::string description;
  hw::ChipConfig chip;

  static const config::Schema<PlatformConfig>& schema();
};

}  // namespace scoville::platform
