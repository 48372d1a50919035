#pragma once

#include <string>

#include "hw/MemoryControllerConfig.h"
#include "hw/TensorCoreConfig.h"
#include "tlm/config/Schema.h"

namespace scoville::hw {

/// The on-chip network joining a chip's units.
struct InterconnectConfig {
  double hopLatencyS = 0.0;  ///< added on the way to a unit and again on the way back

  static const config::Schema<InterconnectConfig>& schema();
};

/// One chip type: its units and its power rating.
struct ChipConfig {
  std::string name;
  double ratedPowerW = 0.0;
  TensorCoreConfig tensorCore;
  MemoryControllerConfig hbm;
  InterconnectConfig interconnect;

  static const config::Schema<ChipConfig>& schema();
};

}  // namespace scoville::hw
