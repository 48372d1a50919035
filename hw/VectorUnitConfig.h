#pragma once

#include <cstdint>

#include "config/Schema.h"

namespace scoville::hw {

/// SIMD unit for element-wise work: norms, softmax, activations, residual adds.
struct VectorUnitConfig {
  int lanes = 0;  ///< element operations per cycle
  double clockHz = 0.0;
  int pipelineLatencyCycles = 0;

  double peakOpsPerS() const { return static_cast<double>(lanes) * clockHz; }
  /// Cycles for `elementOps` element operations (hw/VectorUnit.h's timing model).
  uint64_t cycles(double elementOps) const;
  static const config::Schema<VectorUnitConfig>& schema();
};

}  // namespace scoville::hw
