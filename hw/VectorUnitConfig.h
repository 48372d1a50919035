#pragma once

#include <cstdint>

#include "config/Schema.h"

namespace scoville::hw {

/// SIMD unit for element-wise work: norms, softmax, activations, residual adds.
struct VectorUnitConfig {
  int lanes = 0;  ///< element operations per cycle
  /// Transcendental functions (exp, reciprocal, ...) per cycle on special-function units beside
  /// the lanes; 0: the lanes evaluate them, one element operation each.
  int specialFunctionLanes = 0;
  double clockHz = 0.0;
  int pipelineLatencyCycles = 0;

  double peakOpsPerS() const { return static_cast<double>(lanes) * clockHz; }
  /// Cycles for `elementOps` element operations of which `specialOps` are transcendental
  /// functions (hw/VectorUnit.h's timing model). With special-function lanes the two kinds issue
  /// to their own pipes side by side, so the slower one sets the time; without, they all take the
  /// lanes.
  uint64_t cycles(double elementOps, double specialOps = 0.0) const;
  static const config::Schema<VectorUnitConfig>& schema();
};

}  // namespace scoville::hw
