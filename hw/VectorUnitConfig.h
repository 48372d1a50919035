#pragma once

#include "config/Schema.h"

namespace scoville::hw {

/// SIMD unit for element-wise work: norms, softmax, activations, residual adds.
struct VectorUnitConfig {
  int lanes = 0;  ///< element operations per cycle
  double clockHz = 0.0;
  int pipelineLatencyCycles = 0;

  double peakOpsPerS() const { return static_cast<double>(lanes) * clockHz; }
  static const config::Schema<VectorUnitConfig>& schema();
};

}  // namespace scoville::hw
