#include "power/ChipPower.h"

#include <algorithm>
#include <numeric>

#include "tlm/Time.h"

namespace scoville::power {

const char* servingStateName(ServingState state) {
  switch (state) {
    case ServingState::kIdle: return "idle";
    case ServingState::kPrefill: return "prefill";
    case ServingState::kDecode: return "decode";
    case ServingState::kTransition: return "transition";
  }
  return "?";
}

ChipPower::ChipPower(std::string name, std::string type, const ChipEnergyConfig& energy, double hbmBurstBytes,
                     double ratedW, double intervalS, std::size_t maxBins, const ThermalConfig* thermal)
    : m_name(std::move(name)),
      m_type(std::move(type)),
      m_energy(energy),
      m_thermalConfig(thermal),
      m_burstBytes(hbmBurstBytes),
      m_ratedW(ratedW),
      m_timeline(intervalS, maxBins, kLevels),
      m_savedBins(intervalS, maxBins) {}

void ChipPower::keepRecent(bool hbm) {
  // At the configured interval whatever the report's timeline does.
  if (!m_recent) m_recent.emplace(m_timeline.interval());
  if (!m_recentCore) m_recentCore.emplace(m_timeline.interval());
  if (hbm && !m_recentHbm) m_recentHbm.emplace(m_timeline.interval());
}

double ChipPower::recentJ(double from, double to) const {
  return m_recent ? m_recent->energyIn(from, to) : 0.0;
}

double ChipPower::recentCoreJ(double from, double to) const {
  return m_recentCore ? m_recentCore->energyIn(from, to) : 0.0;
}

double ChipPower::recentHbmJ(double from, double to) const {
  return m_recentHbm ? m_recentHbm->energyIn(from, to) : 0.0;
}

void ChipPower::forgetBefore(double timeS) const {
  if (m_recent) m_recent->dropBefore(timeS);
  if (m_recentCore) m_recentCore->dropBefore(timeS);
  if (m_recentHbm) m_recentHbm->dropBefore(timeS);
}

double ChipPower::gatedW() const {
  return m_arrays > 0 ? m_energy.tensorCore.staticW * static_cast<double>(m_gated) / m_arrays : 0.0;
}

double ChipPower::staticAtW(double voltageScale) const {
  return m_energy.staticAtW(voltageScale, gatedW(), m_thermal.leakageScale);
}

double ChipPower::coreLeakageRefW(double voltageScale) const {
  return (m_energy.coreStaticW() - gatedW()) * m_energy.leakageScale(voltageScale * m_energy.nominalVoltage());
}

double ChipPower::savedW() const {
  return m_energy.idleW() - staticAtW(m_voltageScale);
}

void ChipPower::onActivity(const tlm::ActivityEvent& e) {
  if (m_mirror) return;
  const CountedEvent counted = countEvent(m_energy, e, m_burstBytes, m_voltageScale, m_frequencyScale);
  if (counted.size == 0) return;
  const double start = tlm::seconds(e.start);
  const double end = tlm::seconds(e.time);
  double* levelsNow = m_timeline.groupsAt(0.5 * (start + end));
  for (std::size_t i = 0; i < counted.size; ++i) {
    const CountedEvent::Part& part = counted.parts[i];
    const auto level = static_cast<std::size_t>(part.level);
    m_counts[static_cast<std::size_t>(part.counter)] += part.count;
    m_levelJ[level] += part.joules;
    levelsNow[level] += part.joules;
  }
  const double joules = counted.joules;
  if (joules == 0.0) return;
  if (m_recent) {
    m_recent->add(joules, start, end);
    if (counted.coreJ > 0.0) m_recentCore->add(counted.coreJ, start, end);
    if (m_recentHbm) {
      for (std::size_t i = 0; i < counted.size; ++i) {
        if (counted.parts[i].level == Level::kHbm) m_recentHbm->add(counted.parts[i].joules, start, end);
      }
    }
  }
  // Moving data between chips is communication, whatever the phase of the op that sent it.
  const auto phase = e.activity == tlm::Activity::kLinkBytes ? static_cast<std::size_t>(tlm::LlmPhase::kCommunication)
                                                             : std::min(static_cast<std::size_t>(e.phase), kPhases - 1);
  const bool ofTheChip = e.activity == tlm::Activity::kClockActive || e.activity == tlm::Activity::kWakeArrays;
  m_phaseJ[phase] += joules;
  m_blockJ[ofTheChip ? static_cast<std::size_t>(tlm::OpBlock::kOther)
                     : std::min(static_cast<std::size_t>(e.block), tlm::kOpBlocks - 1)] += joules;
  m_stateJ[static_cast<std::size_t>(m_state)] += joules;
  m_timeline.add(joules, phase, start, end);
}

void ChipPower::onPowerState(const tlm::PowerStateEvent& e) {
  if (m_mirror) return;
  const double t = tlm::seconds(e.time);
  accrue(t);
  switch (e.kind) {
    case tlm::PowerStateEvent::Kind::kOperatingPoint:
      if (e.point == m_point) return;
      if (m_timeAtPoint.empty()) m_timeAtPoint.assign(std::max<std::size_t>(1, m_energy.dvfs.size()), 0.0);
      m_timeAtPoint.at(m_point) += t - m_pointSince;
      m_pointSince = t;
      m_point = e.point;
      m_voltageScale = e.voltageScale;
      m_frequencyScale = e.frequencyScale;
      m_clockLog.push_back(ClockChange{t, e.point});
      break;
    case tlm::PowerStateEvent::Kind::kGating:
      m_gated = e.gatedArrays;
      m_arrays = std::max(1, e.arrays);
      break;
    case tlm::PowerStateEvent::Kind::kServingState:
      m_state = static_cast<ServingState>(std::clamp(e.state, 0, static_cast<int>(kServingStates) - 1));
      break;
    case tlm::PowerStateEvent::Kind::kThermal: {
      ThermalTrace& tr = m_thermal;
      if (!tr.announced) {
        tr.announced = true;
        tr.sinceS = t;
        tr.peakDieC = e.dieC;
        tr.peakHbmC = e.hbmC;
      } else {
        carry(tr, t);
      }
      tr.dieC = e.dieC;
      tr.hbmC = e.hbmC;
      tr.leakageScale = e.leakageScale;
      tr.refreshRate = e.refreshRate;
      tr.peakDieC = std::max(tr.peakDieC, e.dieC);
      tr.peakHbmC = std::max(tr.peakHbmC, e.hbmC);
      // At most kThermalSamples samples: once full, keep every other one and sample half as often.
      constexpr std::size_t kThermalSamples = 1 << 14;
      if (tr.skipped + 1 >= tr.stride || tr.samples.empty()) {
        tr.samples.push_back({t, e.dieC, e.hbmC});
        tr.skipped = 0;
        if (tr.samples.size() >= kThermalSamples) {
          for (std::size_t i = 0; 2 * i < tr.samples.size(); ++i) tr.samples[i] = tr.samples[2 * i];
          tr.samples.resize((tr.samples.size() + 1) / 2);
          tr.stride *= 2;
        }
      } else {
        ++tr.skipped;
      }
      break;
    }
    case tlm::PowerStateEvent::Kind::kThrottle:
      if (m_thermal.announced) carry(m_thermal, t);
      m_thermal.throttled = e.throttled;
      break;
  }
}

void ChipPower::carry(ThermalTrace& tr, double timeS) {
  const double dt = timeS - tr.sinceS;
  if (dt <= 0.0) return;
  tr.dieCSeconds += tr.dieC * dt;
  tr.hbmCSeconds += tr.hbmC * dt;
  if (tr.refreshRate > 1.0) tr.refreshDoubledS += dt;
  if (tr.throttled) tr.throttledS += dt;
  tr.sinceS = timeS;
}

ChipPower::ThermalTrace ChipPower::thermalUntil(double endS) const {
  ThermalTrace tr = m_thermal;
  carry(tr, endS);
  return tr;
}

std::vector<double> ChipPower::timeAtPoints(double endS) const {
  std::vector<double> times = m_timeAtPoint;
  if (times.empty()) times.assign(std::max<std::size_t>(1, m_energy.dvfs.size()), 0.0);
  times[m_point] += std::max(0.0, endS - m_pointSince);
  return times;
}

void ChipPower::accrue(double timeS) {
  const double dt = timeS - m_since;
  if (dt <= 0.0) return;
  const double savedNowW = savedW();
  const double saved = savedNowW * dt;
  m_stateJ[static_cast<std::size_t>(m_state)] += (m_energy.idleW() - savedNowW) * dt;
  m_stateS[static_cast<std::size_t>(m_state)] += dt;
  if (saved != 0.0) {
    m_savedBins.add(saved, m_since, timeS);
    m_savedJ += saved;
  }
  m_since = timeS;
}

std::array<double, kServingStates> ChipPower::stateEnergyJ(double endS) const {
  std::array<double, kServingStates> j = m_stateJ;
  j[static_cast<std::size_t>(m_state)] += (m_energy.idleW() - savedW()) * std::max(0.0, endS - m_since);
  return j;
}

std::array<double, kServingStates> ChipPower::stateTimeS(double endS) const {
  std::array<double, kServingStates> t = m_stateS;
  t[static_cast<std::size_t>(m_state)] += std::max(0.0, endS - m_since);
  return t;
}

EnergyBins ChipPower::savedStaticBins(double endS) const {
  EnergyBins bins = m_savedBins;
  if (endS > m_since && savedW() != 0.0) bins.add(savedW() * (endS - m_since), m_since, endS);
  return bins;
}

double ChipPower::staticJ(double endS) const {
  return m_energy.idleW() * endS - m_savedJ - savedW() * std::max(0.0, endS - m_since);
}

double ChipPower::dynamicJ() const {
  return std::accumulate(m_levelJ.begin(), m_levelJ.end(), 0.0);
}

}  // namespace scoville::power
