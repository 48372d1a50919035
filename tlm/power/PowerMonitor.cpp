#include "tlm/power/PowerMonitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "tlm/Time.h"

namespace scoville::power {

const char* componentName(Component component) {
  switch (component) {
    case Component::kTensorCore: return "tensor_core";
    case Component::kVectorUnit: return "vector_unit";
    case Component::kSram: return "sram";
    case Component::kHbm: return "hbm";
    case Component::kInterconnect: return "interconnect";
    case Component::kFabricPorts: return "fabric_ports";
  }
  return "?";
}

const char* phaseName(std::size_t phase) {
  static constexpr std::array<const char*, kPhases> kNames{"prefill", "decode", "communication"};
  return phase < kPhases ? kNames[phase] : "?";
}

namespace {

/// Adds `joules` spread evenly over [s, e] to the bins numbered [first, first + size) of width
/// `interval` (bins[0] is bin `first`), growing them as needed; the part before bin `first` is
/// dropped. Bin b covers [b x interval, (b + 1) x interval).
void spread(std::vector<double>& bins, std::size_t first, double interval, double perInterval, double joules, double s,
            double e) {
  const auto from = static_cast<std::size_t>(s * perInterval);
  const auto last = e > s ? static_cast<std::size_t>(e * perInterval) : from;
  if (last < first) return;
  if (bins.size() <= last - first) bins.resize(last - first + 1, 0.0);
  if (from == last) {
    bins[from - first] += joules;
    return;
  }
  const double rate = joules / (e - s);
  for (std::size_t b = std::max(from, first); b <= last; ++b) {
    const double lo = std::max(s, static_cast<double>(b) * interval);
    const double hi = std::min(e, static_cast<double>(b + 1) * interval);
    if (hi > lo) bins[b - first] += rate * (hi - lo);
  }
}

/// Energy in [from, to) of the bins numbered [first, first + size) of width `interval`.
double energyOf(const std::vector<double>& bins, std::size_t first, double interval, double from, double to) {
  double sum = 0.0;
  for (auto b = std::max(first, static_cast<std::size_t>(std::max(0.0, from) / interval));
       b - first < bins.size() && static_cast<double>(b) * interval < to; ++b) {
    const double lo = std::max(from, static_cast<double>(b) * interval);
    const double hi = std::min(to, static_cast<double>(b + 1) * interval);
    if (hi > lo) sum += bins[b - first] * (hi - lo) / interval;
  }
  return sum;
}

}  // namespace

EnergyBins::EnergyBins(double intervalS, std::size_t maxBins)
    : m_interval(intervalS), m_perInterval(1.0 / intervalS), m_maxBins(std::max<std::size_t>(2, maxBins)) {}

void EnergyBins::add(double joules, double startS, double endS) {
  if (joules == 0.0) return;
  const double end = std::max(startS, endS);
  while (static_cast<std::size_t>(end * m_perInterval) >= m_maxBins) mergePairs();
  const auto last = static_cast<std::size_t>(end * m_perInterval);
  // Grow geometrically, but never past the cap.
  if (last >= m_bins.capacity()) m_bins.reserve(std::min(m_maxBins, std::max(last + 1, 2 * m_bins.capacity())));
  spread(m_bins, 0, m_interval, m_perInterval, joules, startS, endS);
}

void EnergyBins::mergePairs() {
  const std::size_t half = (m_bins.size() + 1) / 2;
  for (std::size_t b = 0; b < half; ++b) {
    m_bins[b] = m_bins[2 * b] + (2 * b + 1 < m_bins.size() ? m_bins[2 * b + 1] : 0.0);
  }
  m_bins.resize(half);
  m_interval *= 2.0;
  m_perInterval = 1.0 / m_interval;
}

std::vector<double> EnergyBins::resampled(double intervalS) const {
  const auto factor = static_cast<std::size_t>(std::llround(intervalS / m_interval));
  if (factor <= 1) return m_bins;
  std::vector<double> out((m_bins.size() + factor - 1) / factor, 0.0);
  for (std::size_t b = 0; b < m_bins.size(); ++b) out[b / factor] += m_bins[b];
  return out;
}

double EnergyBins::energyIn(double from, double to) const {
  return energyOf(m_bins, 0, m_interval, from, to);
}

EnergyTimeline::EnergyTimeline(double intervalS, std::size_t maxBins)
    : EnergyTimeline(intervalS, EnergyBins(intervalS * std::max(1.0, std::round(1e-3 / intervalS)), maxBins), maxBins) {
}

EnergyTimeline::EnergyTimeline(double intervalS, const EnergyBins& coarse, std::size_t maxBins)
    : m_fine(intervalS, maxBins), m_coarse{coarse, coarse, coarse} {}

void EnergyTimeline::add(double joules, std::size_t phase, double startS, double endS) {
  if (joules == 0.0) return;
  m_fine.add(joules, startS, endS);
  m_coarse[std::min(phase, kPhases - 1)].add(joules, startS, endS);
}

double energyIn(const std::vector<double>& bins, double interval, double from, double to) {
  return energyOf(bins, 0, interval, from, to);
}

double EnergyTimeline::phaseEnergy(std::size_t phase, double startS, double endS) const {
  return m_coarse[phase].energyIn(startS, endS);
}

RecentEnergy::RecentEnergy(double intervalS) : m_interval(intervalS), m_perInterval(1.0 / intervalS) {}

void RecentEnergy::add(double joules, double startS, double endS) {
  spread(m_bins, m_first, m_interval, m_perInterval, joules, startS, endS);
}

double RecentEnergy::energyIn(double from, double to) const {
  return energyOf(m_bins, m_first, m_interval, from, to);
}

void RecentEnergy::dropBefore(double timeS) {
  const auto keepFrom = static_cast<std::size_t>(std::max(0.0, timeS) * m_perInterval);
  if (keepFrom <= m_first) return;
  const std::size_t drop = std::min(keepFrom - m_first, m_bins.size());
  // Erase in large steps only, so that dropping stays amortised O(1) per bin.
  if (drop < 4096 || 2 * drop < m_bins.size()) return;
  m_bins.erase(m_bins.begin(), m_bins.begin() + static_cast<std::ptrdiff_t>(drop));
  m_first += drop;
}

SustainedPower sustainedPower(const std::vector<double>& binPowerW, double intervalS, std::size_t windowBins,
                              double limitW) {
  SustainedPower s;
  windowBins = std::max<std::size_t>(1, windowBins);
  s.windowS = static_cast<double>(windowBins) * intervalS;
  if (binPowerW.size() < windowBins) return s;
  s.fits = true;
  const auto n = static_cast<double>(windowBins);
  double sum = std::accumulate(binPowerW.begin(), binPowerW.begin() + static_cast<std::ptrdiff_t>(windowBins), 0.0);
  bool inViolation = false;
  for (std::size_t i = 0;; ++i) {
    // Window [i, i + windowBins): a running sum, re-summed every 4096 slides against drift.
    const double power = sum / n;
    if (power > s.maxW || i == 0) {
      s.maxW = power;
      s.maxAtS = static_cast<double>(i) * intervalS;
    }
    if (power > limitW) {
      if (!inViolation) {
        ++s.violations;
        if (s.firstViolations.size() < SustainedPower::kListedViolations) {
          s.firstViolations.push_back({static_cast<double>(i) * intervalS, 0.0, power});
        }
      }
      inViolation = true;
      if (s.violations <= SustainedPower::kListedViolations) {
        SustainedPower::Violation& v = s.firstViolations.back();
        v.endS = static_cast<double>(i + windowBins) * intervalS;
        v.maxW = std::max(v.maxW, power);
      }
    } else {
      inViolation = false;
    }
    if (i + windowBins >= binPowerW.size()) break;
    if ((i + 1) % 4096 == 0) {
      sum = std::accumulate(binPowerW.begin() + static_cast<std::ptrdiff_t>(i + 1),
                            binPowerW.begin() + static_cast<std::ptrdiff_t>(i + 1 + windowBins), 0.0);
    } else {
      sum += binPowerW[i + windowBins] - binPowerW[i];
    }
  }
  return s;
}

ChipPower::ChipPower(std::string name, std::string type, const ChipEnergyConfig& energy, double hbmBurstBytes,
                     double ratedW, double intervalS, std::size_t maxBins)
    : m_name(std::move(name)),
      m_type(std::move(type)),
      m_energy(energy),
      m_burstBytes(hbmBurstBytes),
      m_ratedW(ratedW),
      m_timeline(intervalS, maxBins),
      m_gatedBins(intervalS, maxBins) {}

void ChipPower::govern(const GovernorConfig& governor, tlm::ClockDomain& clock) {
  if (governor.kind == GovernorKind::kNone || m_energy.dvfs.size() < 2) return;
  m_clock = &clock;
  m_capW = governor.kind == GovernorKind::kCapRated ? m_ratedW : governor.targetW;
  m_windowS = governor.windowS;
  m_responseS = governor.responseTimeS;
  m_hysteresis = governor.hysteresis;
  m_nextDecision = m_responseS;
  m_timeAtPoint.assign(m_energy.dvfs.size(), 0.0);
  // At the configured interval whatever the report's timeline does.
  m_recent.emplace(m_timeline.interval());
  m_recentCore.emplace(m_timeline.interval());
}

std::vector<double> ChipPower::timeAtPoints(double endS) const {
  std::vector<double> times = m_timeAtPoint;
  if (times.empty()) times.assign(std::max<std::size_t>(1, m_energy.dvfs.size()), 0.0);
  times[m_point] += std::max(0.0, endS - m_pointSince);
  return times;
}

void ChipPower::decideUntil(double time) {
  // Idle at the nominal point since before the window: nothing to decide until `time` (a long
  // idle gap would otherwise cost a decision per response time).
  if (m_point == 0 && m_nextDecision <= time && m_nextDecision - std::max(m_windowS, m_responseS) > m_lastEnd &&
      idleW() <= aimW()) {
    m_nextDecision += std::floor((time - m_nextDecision) / m_responseS) * m_responseS;
  }
  while (m_nextDecision <= time) {
    decide(m_nextDecision);
    m_nextDecision += m_responseS;
  }
  // No later decision reads energy from before its time less the window.
  const double window = std::max(m_windowS, m_responseS);
  m_recent->dropBefore(m_nextDecision - window);
  m_recentCore->dropBefore(m_nextDecision - window);
}

void ChipPower::decide(double time) {
  // The window that ends at the next decision is what this one answers for: its part before now
  // is known; the next response time is predicted from the last one, the core's dynamic power
  // scaled by C V^2 f to each point (the rest of the chip does not follow the core clock).
  const double r = std::min(m_responseS, time);
  if (r <= 0.0) return;
  const double recent = m_recent->energyIn(time - r, time);
  const double recentCore = m_recentCore->energyIn(time - r, time);
  const double window = std::max(m_windowS, m_responseS);
  const double known = m_recent->energyIn(time + m_responseS - window, time);
  const double knownSpan = std::min(time, window - m_responseS);
  const std::vector<DvfsPoint>& points = m_energy.dvfs;
  const DvfsPoint& now = points[m_point];
  const auto windowPower = [&](std::size_t k) {
    const DvfsPoint& p = points[k];
    const double ratio = (p.voltageV * p.voltageV * p.frequencyHz) / (now.voltageV * now.voltageV * now.frequencyHz);
    const double next = (recent - recentCore + recentCore * ratio) / r + idleW();
    return (known + idleW() * knownSpan + next * m_responseS) / (knownSpan + m_responseS);
  };
  const double aim = aimW();
  std::size_t next = m_point;
  if (windowPower(m_point) > aim) {
    next = points.size() - 1;  // the lowest point when none is predicted under the aim
    for (std::size_t k = m_point; k < points.size(); ++k) {
      if (windowPower(k) <= aim) {
        next = k;
        break;
      }
    }
  } else {
    for (std::size_t k = 0; k < m_point; ++k) {
      if (windowPower(k) <= m_capW * (1.0 - m_hysteresis)) {
        next = k;
        break;
      }
    }
  }
  if (next == m_point) return;
  moveToPoint(time, next);
  m_clock->setScale(points[next].frequencyHz / points.front().frequencyHz);
}

void ChipPower::moveToPoint(double timeS, std::size_t point) {
  if (m_timeAtPoint.empty()) m_timeAtPoint.assign(m_energy.dvfs.size(), 0.0);
  m_timeAtPoint[m_point] += timeS - m_pointSince;
  m_pointSince = timeS;
  m_point = point;
  ++m_changes;
  m_clockLog.push_back(ClockChange{timeS, point});
  const double v = m_energy.dvfs[point].voltageV / m_energy.dvfs.front().voltageV;
  m_coreEnergyScale = v * v;
}

void ChipPower::onActivity(const tlm::ActivityEvent& e) {
  if (m_clock != nullptr) {
    decideUntil(tlm::seconds(e.start));
    m_lastEnd = std::max(m_lastEnd, tlm::seconds(e.time));
  }
  Component component = Component::kTensorCore;
  double joules = 0.0;
  switch (e.activity) {
    case tlm::Activity::kMacs: joules = 2.0 * e.amount * m_energy.tensorCore.perFlop.of(e.precision); break;
    case tlm::Activity::kOperandBytes: joules = e.amount * m_energy.tensorCore.operandJPerByte; break;
    case tlm::Activity::kVectorOps:
      component = Component::kVectorUnit;
      joules = e.amount * m_energy.vectorUnit.perOpJ;
      break;
    case tlm::Activity::kSramReadBytes:
      component = Component::kSram;
      joules = e.amount * m_energy.sram.readJPerByte;
      break;
    case tlm::Activity::kSramWriteBytes:
      component = Component::kSram;
      joules = e.amount * m_energy.sram.writeJPerByte;
      break;
    case tlm::Activity::kDramActivates:
      component = Component::kHbm;
      joules = e.amount * m_energy.hbm.activateJ;
      break;
    case tlm::Activity::kDramPrecharges:
      component = Component::kHbm;
      joules = e.amount * m_energy.hbm.prechargeJ;
      break;
    case tlm::Activity::kDramReadBursts:
      component = Component::kHbm;
      joules = e.amount * m_burstBytes * (m_energy.hbm.readJPerByte + m_energy.hbm.ioJPerByte);
      break;
    case tlm::Activity::kDramWriteBursts:
      component = Component::kHbm;
      joules = e.amount * m_burstBytes * (m_energy.hbm.writeJPerByte + m_energy.hbm.ioJPerByte);
      break;
    case tlm::Activity::kDramRefreshes:
      component = Component::kHbm;
      joules = e.amount * m_energy.hbm.refreshJ;
      break;
    case tlm::Activity::kNocBytes:
      component = Component::kInterconnect;
      joules = e.amount * m_energy.interconnect.jPerByte;
      break;
    case tlm::Activity::kLinkBytes:
      component = Component::kFabricPorts;
      joules = e.amount * m_energy.fabricPorts.jPerByte;
      break;
    case tlm::Activity::kSwitchBytes:
    case tlm::Activity::kSwitchPackets: return;  // a switch's, not a chip's
  }
  if (joules == 0.0) return;
  const bool onCore = component == Component::kTensorCore || component == Component::kVectorUnit;
  if (onCore) joules *= m_coreEnergyScale;
  if (m_clock != nullptr) {
    m_recent->add(joules, tlm::seconds(e.start), tlm::seconds(e.time));
    if (onCore) m_recentCore->add(joules, tlm::seconds(e.start), tlm::seconds(e.time));
  }
  // Moving data between chips is communication, whatever the phase of the op that sent it.
  const auto phase = component == Component::kFabricPorts ? static_cast<std::size_t>(tlm::LlmPhase::kCommunication)
                                                          : static_cast<std::size_t>(e.phase);
  m_componentJ[static_cast<std::size_t>(component)] += joules;
  m_phaseJ[std::min(phase, kPhases - 1)] += joules;
  m_blockJ[std::min(static_cast<std::size_t>(e.block), tlm::kOpBlocks - 1)] += joules;
  m_stateJ[static_cast<std::size_t>(m_state)] += joules;
  m_timeline.add(joules, phase, tlm::seconds(e.start), tlm::seconds(e.time));
}

const char* servingStateName(ServingState state) {
  switch (state) {
    case ServingState::kIdle: return "idle";
    case ServingState::kPrefill: return "prefill";
    case ServingState::kDecode: return "decode";
    case ServingState::kTransition: return "transition";
  }
  return "?";
}

double ChipPower::gatedW() const {
  return m_arrays > 0 ? m_energy.tensorCore.staticW * static_cast<double>(m_gated) / m_arrays : 0.0;
}

void ChipPower::accrue(double timeS) {
  const double dt = timeS - m_stateSince;
  if (dt <= 0.0) return;
  const double saved = gatedW() * dt;
  m_stateJ[static_cast<std::size_t>(m_state)] += (idleW() - gatedW()) * dt;
  m_stateS[static_cast<std::size_t>(m_state)] += dt;
  if (saved > 0.0) {
    m_gatedBins.add(saved, m_stateSince, timeS);
    m_gatedJ += saved;
  }
  m_stateSince = timeS;
}

void ChipPower::enterState(double timeS, ServingState state) {
  accrue(timeS);
  m_state = state;
}

void ChipPower::setGatedArrays(double timeS, int gated, int arrays) {
  accrue(timeS);
  m_gated = gated;
  m_arrays = std::max(1, arrays);
}

void ChipPower::setPolicyPoint(double timeS, std::size_t point) {
  if (point >= m_energy.dvfs.size()) {
    if (point == 0) return;  // no DVFS points: the nominal clock only
    throw std::invalid_argument(
        fmt::format("{}: DVFS point {} of {} does not exist", m_name, point, m_energy.dvfs.size()));
  }
  if (m_clock != nullptr) throw std::logic_error(m_name + ": a phase policy cannot set the clock of a governed chip");
  if (point != m_point) moveToPoint(timeS, point);
}

void ChipPower::addWakeEnergy(double joules, double startS, double endS, tlm::LlmPhase phase) {
  if (joules <= 0.0) return;
  const auto p = static_cast<std::size_t>(phase);
  m_componentJ[static_cast<std::size_t>(Component::kTensorCore)] += joules;
  m_phaseJ[std::min(p, kPhases - 1)] += joules;
  m_blockJ[static_cast<std::size_t>(tlm::OpBlock::kOther)] += joules;
  m_stateJ[static_cast<std::size_t>(m_state)] += joules;
  m_timeline.add(joules, p, startS, endS);
}

std::array<double, kServingStates> ChipPower::stateEnergyJ(double endS) const {
  std::array<double, kServingStates> j = m_stateJ;
  const double dt = std::max(0.0, endS - m_stateSince);
  j[static_cast<std::size_t>(m_state)] += (idleW() - gatedW()) * dt;
  return j;
}

std::array<double, kServingStates> ChipPower::stateTimeS(double endS) const {
  std::array<double, kServingStates> t = m_stateS;
  t[static_cast<std::size_t>(m_state)] += std::max(0.0, endS - m_stateSince);
  return t;
}

EnergyBins ChipPower::gatedStaticBins(double endS) const {
  EnergyBins bins = m_gatedBins;
  if (endS > m_stateSince && gatedW() > 0.0) bins.add(gatedW() * (endS - m_stateSince), m_stateSince, endS);
  return bins;
}

double ChipPower::staticJ(double endS) const {
  return idleW() * endS - m_gatedJ - gatedW() * std::max(0.0, endS - m_stateSince);
}

double ChipPower::dynamicJ() const {
  return std::accumulate(m_componentJ.begin(), m_componentJ.end(), 0.0);
}

void SwitchPower::onActivity(const tlm::ActivityEvent& e) {
  double joules = 0.0;
  if (e.activity == tlm::Activity::kSwitchBytes) {
    joules = e.amount * m_energy.jPerByte;
    m_bytesJ += joules;
  } else if (e.activity == tlm::Activity::kSwitchPackets) {
    joules = e.amount * m_energy.jPerPacket;
    m_packetsJ += joules;
  }
  m_timeline.add(joules, static_cast<std::size_t>(tlm::LlmPhase::kCommunication), tlm::seconds(e.start),
                 tlm::seconds(e.time));
}

PowerMonitor::PowerMonitor(const PowerManagementConfig& config, const std::vector<ChipPowerSpec>& chips,
                           const SwitchEnergyConfig* switchEnergy, int switches)
    : m_config(config) {
  for (const ChipPowerSpec& spec : chips) {
    m_mirrorOf.push_back(-1);
    if (spec.energy == nullptr) {
      if (std::find(m_missing.begin(), m_missing.end(), spec.type) == m_missing.end()) m_missing.push_back(spec.type);
      m_chips.push_back(nullptr);
      continue;
    }
    m_chips.push_back(std::make_unique<ChipPower>(spec.name, spec.type, *spec.energy, spec.hbmBurstBytes, spec.ratedW,
                                                  config.intervalS, static_cast<std::size_t>(config.maxBins)));
    if (spec.coreClock != nullptr) m_chips.back()->govern(config.governor, *spec.coreClock);
  }
  if (switchEnergy != nullptr && switches > 0) {
    m_switches.emplace(*switchEnergy, switches, config.intervalS, static_cast<std::size_t>(config.maxBins));
  }
}

void PowerMonitor::setMirrors(std::vector<int> mirrorOf) {
  mirrorOf.resize(m_chips.size(), -1);
  m_mirrorOf = std::move(mirrorOf);
}

bool PowerMonitor::usesChip(int chip) const {
  const auto c = static_cast<std::size_t>(chip);
  return chip >= 0 && c < m_chips.size() && m_chips[c] != nullptr && m_mirrorOf[c] < 0;
}

void PowerMonitor::onActivity(const tlm::ActivityEvent& e) {
  if (e.activity == tlm::Activity::kLinkBytes) {
    if (usesChip(e.chip)) m_chips[static_cast<std::size_t>(e.chip)]->onActivity(e);
  } else if (m_switches) {
    m_switches->onActivity(e);
  }
}

}  // namespace scoville::power
