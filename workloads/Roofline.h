#pragma once
// The roofline bound of a planned step or kernel: no simulated step may take less than its HBM
// bytes over the HBM bandwidth, nor less than its FLOPs over the tensor cores' peak at its
// precision. The serving run's roofline check and the kernel benchmarks both take it from here.

#include <algorithm>

#include "hw/chip/ChipConfig.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {

/// How far a step may beat its bound before it counts as a violation: rounding only (simulated
/// time is in picoseconds).
inline constexpr double kRooflineSlackS = 1e-9;

/// The roofline bound of `plan` on `chip` in seconds: the larger of StepPlan::memoryBoundS (bytes
/// moved / HBM bandwidth) and StepPlan::computeBoundS (FLOPs / peak at the plan's compute
/// precision); a plan without FLOPs is bound by its bytes alone.
inline double rooflineBoundS(const StepPlan& plan, const hw::ChipConfig& chip) {
  return std::max(plan.memoryBoundS(chip), plan.flops > 0 ? plan.computeBoundS(chip) : 0.0);
}

/// True when a step that took `stepS` beat the bound `boundS` (rooflineBoundS) by more than
/// kRooflineSlackS: a timing model that got faster than physics.
inline bool beatsRoofline(double stepS, double boundS) {
  return stepS + kRooflineSlackS < boundS;
}

}  // namespace scoville::workload
