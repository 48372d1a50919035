#include "workloads/PhasePolicy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "hw/TensorCore.h"
#include "hw/VectorUnit.h"
#include "tlm/Time.h"

namespace scoville::workload {

const char* stepPhaseName(StepPhase phase) {
  return phase == StepPhase::kPrefill ? "prefill" : "decode";
}

CorePoints CorePoints::of(const hw::ChipConfig& chip) {
  CorePoints p;
  if (chip.power && !chip.power->dvfs.empty()) {
    const power::DvfsPoint& nominal = chip.power->dvfs.front();
    for (const power::DvfsPoint& d : chip.power->dvfs) {
      p.frequencyScale.push_back(d.frequencyHz / nominal.frequencyHz);
      p.voltageScale.push_back(d.voltageV / nominal.voltageV);
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
  for (const PlannedOp& op : plan.ops) {
    for (const tlm::GemmShape& g : op.gemms) {
      tensorCycles += static_cast<double>(hw::TensorCore::gemmCycles(tc, g, plan.computePrecision));
    }
    vectorCycles += static_cast<double>(hw::VectorUnit::cycles(chip.vectorUnit, op.vectorOps));
  }
  const double scale = points.frequencyScale.at(setting.point);
  return (tensorCycles / tc.clockHz + vectorCycles / chip.vectorUnit.clockHz) / scale;
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
    dynamic += plan->flops * e.tensorCore.perFlop.of(plan->computePrecision) + plan->vectorOps * e.vectorUnit.perOpJ;
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

PhaseController::PhaseController(int replica, const ServingPolicyConfig& config, std::vector<hw::Chip*> chips)
    : m_replica(replica),
      m_config(config),
      m_chips(std::move(chips)),
      m_governed(m_chips.front()->powerManager().governed()),
      m_chip(m_chips.front()->config()),
      m_points(CorePoints::of(m_chip)) {
  m_setting = PhaseSetting{0, m_chip.tensorCore.count};
  for (PhaseTotals& t : m_totals) {
    if (!m_governed) t.timeAtPoint.assign(m_points.frequencyScale.size(), 0.0);
  }
}

void PhaseController::enterState(double timeS, power::ServingState state) {
  tlm::PowerStateEvent e;
  e.kind = tlm::PowerStateEvent::Kind::kServingState;
  e.time = tlm::durationCeil(timeS);
  e.state = static_cast<int>(state);
  for (hw::Chip* chip : m_chips) chip->activityBus().emit(e);
}

double PhaseController::prepare(StepPhase phase, const std::vector<const StepPlan*>& plans) {
  const PhasePolicyConfig& p = policy(phase);
  PhaseSetting next = choosePhaseSetting(p, m_chip, plans, &m_setting);
  if (m_governed) next.point = m_setting.point;  // the governor owns the clock
  PhaseTotals& t = m_totals[static_cast<std::size_t>(phase)];
  if (next.fallback) ++t.fallbacks;
  m_phase = phase;
  const double now = tlm::seconds(sc_core::sc_time_stamp());
  double stall = 0.0;
  if (next != m_setting) {
    const power::PowerTransitions costs = m_chip.power ? m_chip.power->transitions : power::PowerTransitions{};
    const bool clock = next.point != m_setting.point;
    const int woken = std::max(0, next.arrays - m_setting.arrays);
    stall = std::max(clock ? costs.clockSwitchS : 0.0, woken > 0 ? costs.wakeS : 0.0);
    ++t.transitions;
    t.clockSwitches += clock ? 1 : 0;
    t.wakes += woken > 0 ? 1 : 0;
    t.transitionS += stall;
    if (m_log.size() < kListedTransitions)
      m_log.push_back(PhaseTransition{now, stall, m_replica, phase, m_setting, next});
    const tlm::LlmPhase llm = phase == StepPhase::kPrefill ? tlm::LlmPhase::kPrefill : tlm::LlmPhase::kDecode;
    enterState(now, power::ServingState::kTransition);  // its wake energy too, even without a stall
    for (hw::Chip* chip : m_chips) {
      if (clock) chip->powerManager().setOperatingPoint(now, next.point);
      chip->powerManager().setPoweredArrays(now, next.arrays, now + std::max(stall, costs.wakeS), llm);
    }
    m_setting = next;
    m_setting.fallback = false;
  }
  return stall;
}

void PhaseController::started() {
  const double now = tlm::seconds(sc_core::sc_time_stamp());
  m_stepStart = now;
  enterState(now, m_phase == StepPhase::kPrefill ? power::ServingState::kPrefill : power::ServingState::kDecode);
}

void PhaseController::finished(double flops, double bytes, uint64_t tokens, tlm::Precision precision) {
  const double now = tlm::seconds(sc_core::sc_time_stamp());
  const double step = now - m_stepStart;
  PhaseTotals& t = m_totals[static_cast<std::size_t>(m_phase)];
  ++t.steps;
  t.stepS += step;
  t.arrayS += static_cast<double>(m_setting.arrays) * step;
  t.frequencyS += m_chip.tensorCore.clockHz * m_chips.front()->coreClock().scale() * step;  // a governor's too
  if (!m_governed) t.timeAtPoint.at(m_setting.point) += step;  // a governor's points are its own
  const auto chips = static_cast<double>(m_chips.size());
  t.chipS += step * chips;
  t.flops += flops;
  t.bytes += bytes;
  t.tokens += tokens;
  t.peakFlopS += m_chip.tensorCore.peakFlops(precision) * chips * step;
  t.peakBytesS += m_chip.hbm.bandwidthBytesPerS * chips * step;
  enterState(now, power::ServingState::kIdle);
}

}  // namespace scoville::workload
