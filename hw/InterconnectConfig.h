#pragma once
// The configuration of a chip's on-chip network (ChipInterconnect).

#include "config/Schema.h"

namespace scoville::hw {

/// The on-chip network joining a chip's units.
struct InterconnectConfig {
  double hopLatencyS = 0.0;         ///< added on the way to a unit and again on the way back
  double bandwidthBytesPerS = 0.0;  ///< per unit port: data to or from one unit

  static const config::Schema<InterconnectConfig>& schema();
};

}  // namespace scoville::hw
