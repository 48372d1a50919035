#include "runtime/PhaseController.h"

#include <algorithm>

#include "tlm/Time.h"

namespace scoville::runtime {

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

}  // namespace scoville::runtime
