#include "hw/power/PowerManager.h"

#include <fmt/format.h>

#include <stdexcept>

#include "tlm/Time.h"

namespace scoville::hw {

namespace {

/// Clocked-active time is announced in stretches of at least this much simulated time (or when the
/// clocks stop): a governor's telemetry sees the floor at most that late, so a governed chip
/// announces in stretches a tenth of its response time; an ungoverned one in longer stretches,
/// fewer events (the floor's energy lands where it was drawn either way).
constexpr double kClockActiveStretchS = 100e-6;

/// The activities that mean a compute unit or the memory stream is working (and the clocks run):
/// what an ungoverned manager listens to (a governed one hears every activity, each of which may
/// carry a decision's time).
constexpr tlm::ActivityMask kClockActivities =
    tlm::activityBit(tlm::Activity::kMacs) | tlm::activityBit(tlm::Activity::kVectorOps) |
    tlm::activityBit(tlm::Activity::kSramReadBytes) | tlm::activityBit(tlm::Activity::kSramWriteBytes) |
    tlm::activityBit(tlm::Activity::kDramReadBursts) | tlm::activityBit(tlm::Activity::kDramWriteBursts);

bool keepsClocksOn(tlm::Activity activity) {
  return (kClockActivities & tlm::activityBit(activity)) != 0;
}

}  // namespace

PowerManager::PowerManager(const sc_core::sc_module_name& name, const power::ChipEnergyConfig* energy, int arrays,
                           ArrayGate gate)
    : sc_core::sc_module(name),
      m_energy(energy),
      m_arrays(arrays),
      m_gate(std::move(gate)),
      m_gating(energy != nullptr ? energy->clockHoldS : 0.0, kClockActiveStretchS),
      m_stats("power_manager", "clocks, power gating and DVFS"),
      m_clockActive(m_stats.counter("clock_active_time", "s", "time the clocks ran for work (the floor was drawn)")),
      m_pointChanges(m_stats.counter("operating_point_changes", "", "changes of the core's DVFS point")),
      m_wakes(m_stats.counter("array_wakes", "", "tensor arrays powered back on")) {
  m_clockOp.block = tlm::OpBlock::kOther;
}

void PowerManager::attach(tlm::ActivityBus& bus) {
  m_bus = &bus;
  bus.subscribe(*this, kClockActivities);
  m_source.attach(bus, name());
}

void PowerManager::moveTo(double timeS, std::size_t point) {
  m_point = point;
  ++m_pointChangeCount;
  m_pointChanges.add();
  const double frequencyScale = m_energy->frequencyScaleAt(point);
  m_coreClock.setScale(frequencyScale);
  if (m_bus == nullptr) return;
  tlm::PowerStateEvent e;
  e.kind = tlm::PowerStateEvent::Kind::kOperatingPoint;
  e.time = tlm::durationCeil(timeS);
  e.point = point;
  e.frequencyScale = frequencyScale;
  e.voltageScale = m_energy->voltageScaleAt(point);
  m_bus->emit(e);
}

void PowerManager::setOperatingPoint(double timeS, std::size_t point) {
  const std::size_t points = m_energy != nullptr ? m_energy->dvfs.size() : 0;
  if (point >= points) {
    if (point == 0) return;  // no DVFS points: the nominal clock only
    throw std::invalid_argument(fmt::format("{}: DVFS point {} of {} does not exist", name(), point, points));
  }
  if (m_governor)
    throw std::logic_error(name() + std::string(": a phase policy cannot set the clock of a governed chip"));
  if (point != m_point) moveTo(timeS, point);
}

void PowerManager::setPoweredArrays(double timeS, int arrays, double wakeEndS, tlm::LlmPhase phase) {
  const int gated = m_arrays - arrays;
  if (gated == m_gated) return;
  const int woken = std::max(0, m_gated - gated);
  m_gate(arrays);
  m_gated = gated;
  if (woken > 0) m_wakes.add(woken);
  if (m_bus == nullptr) return;
  tlm::PowerStateEvent e;
  e.kind = tlm::PowerStateEvent::Kind::kGating;
  e.time = tlm::durationCeil(timeS);
  e.gatedArrays = gated;
  e.arrays = m_arrays;
  m_bus->emit(e);
  if (woken > 0) {
    tlm::OpExtension op;
    op.phase = phase;
    op.block = tlm::OpBlock::kOther;
    m_source.emit(tlm::Activity::kWakeArrays, woken, op, tlm::durationCeil(timeS),
                  tlm::durationCeil(std::max(timeS, wakeEndS)));
  }
}

void PowerManager::thermal(const power::ThermalConfig& config, double ratedW, const power::PowerSensor& sensor) {
  if (m_energy == nullptr) return;
  m_sensor = &sensor;
  m_thermal = std::make_unique<ThermalControl>(
      config, *m_energy, ratedW, sensor,
      [this](double t, const power::ThermalModel& model, double leakageScale, double refreshRate) {
        if (m_bus == nullptr) return;
        tlm::PowerStateEvent e;
        e.kind = tlm::PowerStateEvent::Kind::kThermal;
        e.time = tlm::durationCeil(t);
        e.dieC = model.temperatureC(power::ThermalModel::kDie);
        e.hbmC = model.temperatureC(power::ThermalModel::kHbm);
        e.leakageScale = leakageScale;
        e.refreshRate = refreshRate;
        m_bus->emit(e);
      },
      [this](double t, double rate) {
        if (m_refreshRate) m_refreshRate(t, rate);
      });
  m_thermal->start();
}

double PowerManager::voltageScale() const {
  if (m_energy == nullptr || m_energy->dvfs.empty()) return 1.0;
  return m_energy->voltageScaleAt(m_point);
}

void PowerManager::catchUp(double timeS) {
  if (m_thermal) m_thermal->advanceTo(timeS, m_lastEnd, voltageScale());
  double keepFrom = m_governor ? m_governor->decideUntil(timeS, m_lastEnd) : timeS;
  if (m_thermal) keepFrom = std::min(keepFrom, m_thermal->timeS());
  // No later reading starts before keepFrom.
  if (m_sensor != nullptr) m_sensor->forgetBefore(keepFrom);
}

void PowerManager::govern(const power::GovernorConfig& config, double capW, const power::PowerSensor& sensor) {
  if (m_energy == nullptr || !config.drives(*m_energy, m_thermal != nullptr)) return;
  m_sensor = &sensor;
  m_governor = std::make_unique<DvfsGovernor>(
      config, capW, m_energy->dvfs, sensor, [this](double t, std::size_t point) { moveTo(t, point); }, m_thermal.get(),
      [this](double t, bool throttled) {
        if (m_bus == nullptr) return;
        tlm::PowerStateEvent e;
        e.kind = tlm::PowerStateEvent::Kind::kThrottle;
        e.time = tlm::durationCeil(t);
        e.throttled = throttled;
        m_bus->emit(e);
      });
  m_gating.setStretch(std::min(kClockActiveStretchS, 0.1 * config.responseTimeS));
  if (m_bus != nullptr) m_bus->resubscribe(*this, tlm::kAllActivities);
}

void PowerManager::announce(const std::vector<ClockGating::Stretch>& stretches) {
  for (const ClockGating::Stretch& s : stretches) {
    m_clockActive.add(s.endS - s.startS);
    m_source.emit(tlm::Activity::kClockActive, s.endS - s.startS, m_clockOp, tlm::durationCeil(s.startS),
                  tlm::durationCeil(s.endS));
  }
}

void PowerManager::settle(double endS, bool thermal) {
  m_stretches.clear();
  m_gating.flush(m_stretches);
  announce(m_stretches);
  if (m_thermal && thermal) m_thermal->finish(std::max(endS, m_thermal->timeS()), m_lastEnd, voltageScale());
}

void PowerManager::onActivity(const tlm::ActivityEvent& e) {
  if (e.activity == tlm::Activity::kClockActive || e.activity == tlm::Activity::kWakeArrays) return;  // its own
  const double start = tlm::seconds(e.start);
  const double end = tlm::seconds(e.time);
  if (m_governor || m_thermal) catchUp(start);
  m_lastEnd = std::max(m_lastEnd, end);
  if (!keepsClocksOn(e.activity)) return;
  m_clockOp.phase = e.phase;
  m_stretches.clear();
  m_gating.busy(start, end, m_stretches);
  announce(m_stretches);
}

}  // namespace scoville::hw
