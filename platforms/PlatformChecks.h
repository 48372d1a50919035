#pragma once
// The cross-section checks of a platform file, run by PlatformConfig::schema() after parsing:
// references between sections, port budgets of chips and switches per topology, and the
// placement against the chip count. Each throws config::ConfigError located at the offending key.

#include <string>

#include "platforms/PlatformConfig.h"
#include "config/Node.h"

namespace scoville::platform::detail {

/// Chip groups name defined chip types; no chip type is defined twice.
void checkPlatformChipTypes(const PlatformConfig& config, const config::Node& node);
/// The network's ports, switches and links are consistent with the chips; keys of another
/// topology are errors.
void checkPlatformNetwork(const PlatformConfig& config, const config::Node& node);
/// tp x pp x dp against the (decode) chip count, ep, the expert map, disaggregation sets.
void checkPlatformPlacement(const PlatformConfig& config, const config::Node& node);
/// Swap preemption has host memory to swap to.
void checkPlatformHost(const PlatformConfig& config, const config::Node& node);
/// Index of the chip type named `name` in config.chipTypes, or -1.
int chipTypeIndex(const PlatformConfig& config, const std::string& name);

}  // namespace scoville::platform::detail
