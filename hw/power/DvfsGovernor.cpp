#include "hw/power/DvfsGovernor.h"

#include <algorithm>
#include <cmath>

#include "hw/power/ThermalControl.h"

namespace scoville::hw {

DvfsGovernor::DvfsGovernor(const power::GovernorConfig& config, double capW, std::vector<power::DvfsPoint> points,
                           const power::PowerSensor& sensor, Move move, const ThermalControl* thermal,
                           Throttle throttle)
    : m_capW(capW),
      m_windowS(config.windowS),
      m_responseS(config.responseTimeS),
      m_hysteresis(config.hysteresis),
      m_points(std::move(points)),
      m_sensor(sensor),
      m_move(std::move(move)),
      m_nextDecision(config.responseTimeS),
      m_thermal(thermal),
      m_throttle(std::move(throttle)) {}

double DvfsGovernor::decideUntil(double timeS, double lastActivityEndS) {
  // Idle at the nominal point since before the window: nothing to decide until `timeS` (a long
  // idle gap would otherwise cost a decision per response time). Not while throttled: the
  // decisions say when the clock may rise again.
  if (m_point == 0 && !m_throttled && m_nextDecision <= timeS &&
      m_nextDecision - std::max(m_windowS, m_responseS) > lastActivityEndS && m_sensor.staticAtW(1.0) <= aimW()) {
    m_nextDecision += std::floor((timeS - m_nextDecision) / m_responseS) * m_responseS;
  }
  while (m_nextDecision <= timeS) {
    decide(m_nextDecision);
    m_nextDecision += m_responseS;
  }
  // No later decision reads energy from before its time less the window.
  return m_nextDecision - std::max(m_windowS, m_responseS);
}

std::size_t DvfsGovernor::thermalPoint(double time, const std::function<double(std::size_t)>& power) const {
  const double until = time + m_responseS;
  const double hbm = m_thermal->hbmW(time - std::min(m_responseS, time), time);
  const auto below = [&](std::size_t k, double limit) { return m_thermal->predictDieC(until, power(k), hbm) <= limit; };
  const double limit = m_thermal->limitC();
  if (!below(m_point, limit)) {
    for (std::size_t k = m_point + 1; k < m_points.size(); ++k) {
      if (below(k, limit)) return k;
    }
    return m_points.size() - 1;
  }
  for (std::size_t k = 0; k < m_point; ++k) {
    if (below(k, limit - m_thermal->hysteresisK())) return k;
  }
  return m_point;
}

void DvfsGovernor::decide(double time) {
  const double r = std::min(m_responseS, time);
  if (r <= 0.0) return;
  const double recent = m_sensor.recentJ(time - r, time);
  const double recentCore = m_sensor.recentCoreJ(time - r, time);
  const double window = std::max(m_windowS, m_responseS);
  const double known = m_sensor.recentJ(time + m_responseS - window, time);
  const double knownSpan = std::min(time, window - m_responseS);
  const power::DvfsPoint& now = m_points[m_point];
  const double staticNow = m_sensor.staticAtW(now.voltageV / m_points.front().voltageV);
  // The chip's power over the next response time at point k.
  const auto nextPower = [&](std::size_t k) {
    const power::DvfsPoint& p = m_points[k];
    const double ratio = (p.voltageV * p.voltageV * p.frequencyHz) / (now.voltageV * now.voltageV * now.frequencyHz);
    const double staticAt = m_sensor.staticAtW(p.voltageV / m_points.front().voltageV);
    return (recent - recentCore + recentCore * ratio) / r + staticAt;
  };
  const auto windowPower = [&](std::size_t k) {
    return (known + staticNow * knownSpan + nextPower(k) * m_responseS) / (knownSpan + m_responseS);
  };
  const double aim = aimW();
  std::size_t next = m_point;
  if (windowPower(m_point) > aim) {
    next = m_points.size() - 1;  // the lowest point when none is predicted under the aim
    for (std::size_t k = m_point; k < m_points.size(); ++k) {
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
  if (m_thermal != nullptr) {
    // The junction limit's point, and whether it (not the cap) sets the clock.
    const std::size_t hot = thermalPoint(time, nextPower);
    const bool throttled = hot > next;
    next = std::max(next, hot);
    if (throttled != m_throttled) {
      m_throttled = throttled;
      if (m_throttle) m_throttle(time, throttled);
    }
  }
  if (next == m_point) return;
  m_point = next;
  m_move(time, next);
}

}  // namespace scoville::hw
