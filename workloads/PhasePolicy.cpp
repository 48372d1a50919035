#include "workloads/PhasePolicy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "hw/GridSchedule.h"

namespace scoville::workload {

const char* stepPhaseName(StepPhase phase) {
  return phase == StepPhase::kPrefill ? "prefill" : "decode";
}

CorePoints CorePoints::of(const hw::ChipConfig& chip) {
  CorePoints p;
  if (chip.power && !chip.power->dvfs.empty()) {
    for (std::size_t k = 0; k < chip.power->dvfs.size(); ++k) {
      p.frequencyScale.push_back(chip.power->frequencyScaleAt(k));
      p.voltageScale.push_back(chip.power->voltageScaleAt(k));
    }
  } else {
    p.frequencyScale = {1.0};
    p.voltageScale = {1.0};
  }
  return p;
}

double predictedCoreS(const hw::ChipConfig& chip, const CorePoints& points, const StepPlan& plan,
                      const PhaseSetting& setting) {
  hw::TensorCoreConfig tc = chip.tensorCore;
  tc.count = setting.arrays;
  double tensorCycles = 0.0;
  double vectorCycles = 0.0;
  double convertCycles = 0.0;
  for (const PlannedOp& op : plan.ops) {
    // A fused kernel's work is stretched by its blocks' schedule, as the modules time it.
    const double stretch = op.grid ? hw::gridStretch(*op.grid, tc.computeUnits()) : 1.0;
    for (const tlm::GemmShape& g : op.gemms) {
      tensorCycles += static_cast<double>(tc.gemmCycles(g, plan.computePrecision, op.warpMma)) * stretch;
    }
    vectorCycles += static_cast<double>(chip.vectorUnit.cycles(op.computeStreamVectorOps(), op.specialOps)) * stretch;
    if (op.convertOps > 0.0) convertCycles += static_cast<double>(chip.vectorUnit.cycles(op.convertOps));
  }
  // The weight conversions run beside the loads (the step driver's load stream), on the vector
  // unit the compute stream's element work shares: the core is busy for the compute stream's time
  // or the vector unit's, whichever is longer.
  const double vectorClock = chip.vectorUnit.clockHz;
  const double computeS = tensorCycles / tc.clockHz + vectorCycles / vectorClock;
  const double vectorS = (vectorCycles + convertCycles) / vectorClock;
  const double scale = points.frequencyScale.at(setting.point);
  return std::max(computeS, vectorS) / scale;
}

namespace {

/// Predicted core energy of a setting, up to a constant: dynamic energy at the point's voltage
/// plus the powered arrays' static power over the step's memory time (nominal-point units).
double predictedCoreJ(const hw::ChipConfig& chip, const CorePoints& points, const std::vector<const StepPlan*>& plans,
                      const PhaseSetting& s) {
  if (!chip.power) return 0.0;
  const power::ChipEnergyConfig& e = *chip.power;
  double dynamic = 0.0, memoryS = 0.0;
  for (const StepPlan* plan : plans) {
    dynamic += plan->flops * e.tensorCore.perFlop.of(plan->computePrecision) +
               (plan->vectorOps - plan->convertOps) * e.vectorUnit.perOpJ +
               plan->convertOps * e.vectorUnit.convertOpJ();
    memoryS = std::max(memoryS, plan->memoryBoundS(chip));
  }
  const double v = points.voltageScale.at(s.point);
  const double arraysOn = static_cast<double>(s.arrays) / chip.tensorCore.count;
  return dynamic * v * v + e.tensorCore.staticW * arraysOn * memoryS * static_cast<double>(plans.size());
}

}  // namespace

PhaseSetting choosePhaseSetting(const PhasePolicyConfig& policy, const hw::ChipConfig& chip,
                                const std::vector<const StepPlan*>& plans, const PhaseSetting* current) {
  const CorePoints points = CorePoints::of(chip);
  const int all = chip.tensorCore.count;
  if (policy.impl == PhasePolicyImpl::kComputeOpt) return PhaseSetting{0, all};
  if (policy.impl == PhasePolicyImpl::kUniform) {
    return PhaseSetting{static_cast<std::size_t>(std::max(0, policy.dvfsPoint)),
                        policy.activeArrays > 0 ? policy.activeArrays : all};
  }
  // bandwidth_opt
  const auto fits = [&](const PhaseSetting& s) {
    for (const StepPlan* plan : plans) {
      if (predictedCoreS(chip, points, *plan, s) > policy.computeHeadroom * plan->memoryBoundS(chip)) return false;
    }
    return true;
  };
  std::optional<PhaseSetting> best;
  double bestJ = std::numeric_limits<double>::infinity();
  const std::size_t first = policy.dvfsPoint >= 0 ? static_cast<std::size_t>(policy.dvfsPoint) : 0;
  const std::size_t last = policy.dvfsPoint >= 0 ? first : points.frequencyScale.size() - 1;
  // Energy of moving from the current setting: the chips' idle power over the stall, and the wake.
  const auto changeJ = [&](const PhaseSetting& s) {
    if (current == nullptr || s == *current || !chip.power) return 0.0;
    const power::PowerTransitions& t = chip.power->transitions;
    const int woken = std::max(0, s.arrays - current->arrays);
    const double stall = std::max(s.point != current->point ? t.clockSwitchS : 0.0, woken > 0 ? t.wakeS : 0.0);
    return static_cast<double>(plans.size()) * (stall * chip.power->idleW() + t.wakeJPerArray * woken);
  };
  const auto consider = [&](const PhaseSetting& s) {
    const double j = predictedCoreJ(chip, points, plans, s) + changeJ(s);
    // Ties (no energy model) go to the lower clock, which comes later.
    if (!best || j <= bestJ) {
      best = s;
      bestJ = j;
    }
  };
  for (std::size_t p = first; p <= last; ++p) {
    PhaseSetting s{p, policy.activeArrays > 0 ? policy.activeArrays : all};
    if (!fits(s)) continue;
    if (policy.activeArrays == 0) {
      // The fewest arrays that fit (core time falls as arrays are added).
      int lo = 1, hi = all;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (fits(PhaseSetting{p, mid})) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      s.arrays = lo;
    }
    consider(s);
  }
  if (!best) return PhaseSetting{0, all, true};
  // The current setting, if it fits and obeys the fixed keys, competes without a change cost: a
  // saving smaller than what switching costs keeps it.
  if (chip.power && current != nullptr && *current != *best && fits(*current) &&
      (policy.dvfsPoint < 0 || current->point == static_cast<std::size_t>(policy.dvfsPoint)) &&
      (policy.activeArrays == 0 || current->arrays == policy.activeArrays) &&
      predictedCoreJ(chip, points, plans, *current) <= bestJ) {
    return *current;
  }
  return *best;
}

PhaseTotals& PhaseTotals::operator+=(const PhaseTotals& o) {
  steps += o.steps;
  stepS += o.stepS;
  transitionS += o.transitionS;
  transitions += o.transitions;
  clockSwitches += o.clockSwitches;
  wakes += o.wakes;
  fallbacks += o.fallbacks;
  arrayS += o.arrayS;
  frequencyS += o.frequencyS;
  if (timeAtPoint.size() < o.timeAtPoint.size()) timeAtPoint.resize(o.timeAtPoint.size(), 0.0);
  for (std::size_t k = 0; k < o.timeAtPoint.size(); ++k) timeAtPoint[k] += o.timeAtPoint[k];
  chipS += o.chipS;
  flops += o.flops;
  bytes += o.bytes;
  tokens += o.tokens;
  peakFlopS += o.peakFlopS;
  peakBytesS += o.peakBytesS;
  return *this;
}

}  // namespace scoville::workload
