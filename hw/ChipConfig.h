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

/// On-chip SRAM used as the staging buffer between HBM and the tensor cores.
struct SramConfig {
  double capacityBytes = 0.0;
  int stagingBuffers = 0;  ///< operand tiles in flight: one is computed on while the others load

  /// Bytes of one staging buffer: the largest operand tile streamed from HBM in one piece.
  double bufferBytes() const { return capacityBytes / stagingBuffers; }
  static const config::Schema<SramConfig>& schema();
};

/// One chip type: its units and its power rating.
struct ChipConfig {
  std::string name;
  double ratedPowerW = 0.0;
  TensorCoreConfig tensorCore;
  MemoryControllerConfig hbm;
  SramConfig sram;
  InterconnectConfig interconnect;

  static const config::Schema<ChipConfig>& schema();
};

}  // namespace scoville::hw
