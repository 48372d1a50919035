#pragma once

#include "tlm/config/Schema.h"

namespace scoville::hw {

/// An HBM memory controller and its channels (see MemoryController.h for the timing model).
struct MemoryControllerConfig {
  double capacityBytes = 0.0;
  double bandwidthBytesPerS = 0.0;  ///< aggregate peak over all channels
  int channels = 0;
  double interleaveBytes = 0.0;  ///< consecutive bytes mapped to one channel
  double accessLatencyS = 0.0;   ///< request-to-first-data latency, pipelined across requests

  double channelBandwidth() const { return bandwidthBytesPerS / channels; }
  static const config::Schema<MemoryControllerConfig>& schema();
};

}  // namespace scoville::hw
