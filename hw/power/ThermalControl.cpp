#include "hw/power/ThermalControl.h"

#include <algorithm>
#include <cmath>

namespace scoville::hw {

namespace {

/// The longest step of an idle stretch.
constexpr double kLongestIdleStepS = 1.0;

}  // namespace

ThermalControl::ThermalControl(const power::ThermalConfig& config, const power::ChipEnergyConfig& energy, double ratedW,
                               const power::PowerSensor& sensor, Announce announce, SetRefreshRate refresh)
    : m_config(config),
      m_energy(energy),
      m_ratedW(ratedW),
      m_sensor(sensor),
      m_announce(std::move(announce)),
      m_refresh(std::move(refresh)),
      m_model(config),
      m_idleStepS(config.stepS) {}

void ThermalControl::start() {
  const double hbmStatic = m_sensor.hbmStaticW();
  switch (m_config.startKind()) {
    case power::ThermalStart::kAmbient: break;
    case power::ThermalStart::kRated: m_model.settleAt(m_ratedW - hbmStatic, hbmStatic); break;
    case power::ThermalStart::kPower: m_model.settleAt(m_config.startPowerW() - hbmStatic, hbmStatic); break;
    case power::ThermalStart::kIdle: {
      const double leakage = m_sensor.coreLeakageRefW(1.0);
      const double dieFixed = m_energy.idleW() - hbmStatic - leakage;
      const auto steady = m_model.steadyState(dieFixed, leakage, hbmStatic);
      // Idle runs away with this cooling: start from the ambient and let the run show it.
      if (steady) m_model.settleAt(steady->dieW, hbmStatic);
      break;
    }
  }
  announce();
}

void ThermalControl::announce() {
  const double dieC = m_model.temperatureC(power::ThermalModel::kDie);
  const double hbmC = m_model.temperatureC(power::ThermalModel::kHbm);
  const double rate = hbmC > m_config.hbmRefreshLimitC                                    ? 2.0
                      : hbmC < m_config.hbmRefreshLimitC - m_config.hbmRefreshHysteresisK ? 1.0
                                                                                          : m_refreshRate;
  if (rate != m_refreshRate) {
    m_refreshRate = rate;
    if (m_refresh) m_refresh(m_timeS, rate);
  }
  m_announce(m_timeS, m_model, m_config.leakage.scale(std::min(dieC, power::kLeakageCapC)), m_refreshRate);
}

void ThermalControl::step(double dtS, double voltageScale) {
  const double to = m_timeS + dtS;
  const double dynamic = m_sensor.recentJ(m_timeS, to) / dtS;
  const double hbmDynamic = m_sensor.recentHbmJ(m_timeS, to) / dtS;
  const double total = dynamic + m_sensor.staticAtW(voltageScale);
  const double hbm = hbmDynamic + m_sensor.hbmStaticW();
  m_model.advance(dtS, total - hbm, hbm);
  m_timeS = to;
  announce();
}

void ThermalControl::advanceTo(double timeS, double lastActivityEndS, double voltageScale) {
  const double stepS = m_config.stepS;
  // A step ending within a millionth of a step of `timeS` is due (sums of steps drift).
  while (m_timeS + stepS <= timeS + 1e-6 * stepS) {
    if (m_timeS >= lastActivityEndS + stepS) {
      // Idle since a step ago: steps double while the stretch lasts.
      const double whole = std::max(1.0, std::floor((timeS - m_timeS) / stepS + 1e-6));
      const double dt = std::min(m_idleStepS, whole * stepS);
      step(dt, voltageScale);
      m_idleStepS = std::min(2.0 * m_idleStepS, kLongestIdleStepS);
    } else {
      step(stepS, voltageScale);
      m_idleStepS = stepS;
    }
  }
}

void ThermalControl::finish(double timeS, double lastActivityEndS, double voltageScale) {
  advanceTo(timeS, lastActivityEndS, voltageScale);
  if (timeS > m_timeS) step(timeS - m_timeS, voltageScale);
}

double ThermalControl::predictDieC(double untilS, double totalW, double hbmW) const {
  if (untilS <= m_timeS) return m_model.temperatureC(power::ThermalModel::kDie);
  return m_model.predictDieC(untilS - m_timeS, totalW - hbmW, hbmW);
}

double ThermalControl::hbmW(double fromS, double toS) const {
  const double span = toS - fromS;
  return m_sensor.hbmStaticW() + (span > 0.0 ? m_sensor.recentHbmJ(fromS, toS) / span : 0.0);
}

}  // namespace scoville::hw
