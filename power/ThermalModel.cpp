#include "power/ThermalModel.h"

#include <cmath>

namespace scoville::power {

namespace {

ThermalNetwork networkOf(const ThermalConfig& c) {
  const CoolerConfig& cooler = c.cooler();
  return ThermalNetwork({
      {"die", c.die.resistanceKPerW, c.die.capacitanceJPerK, ThermalModel::kLid},
      {"hbm", c.hbm.resistanceKPerW, c.hbm.capacitanceJPerK, ThermalModel::kLid},
      {"lid", c.lid.resistanceKPerW, c.lid.capacitanceJPerK, ThermalModel::kCooler},
      {"cooler", cooler.resistanceKPerW, cooler.capacitanceJPerK, -1},
  });
}

}  // namespace

ThermalModel::ThermalModel(const ThermalConfig& config)
    : m_config(config),
      m_ambientC(config.cooler().ambientC),
      m_network(networkOf(config)),
      m_rise(kNodes, 0.0),
      m_power(kNodes, 0.0) {}

void ThermalModel::settleAt(double dieW, double hbmW) {
  m_power.assign(kNodes, 0.0);
  m_power[kDie] = dieW;
  m_power[kHbm] = hbmW;
  m_rise = m_network.steadyRise(m_power);
}

void ThermalModel::advance(double dtS, double dieW, double hbmW) {
  m_power[kDie] = dieW;
  m_power[kHbm] = hbmW;
  m_network.step(m_rise, m_power, dtS);
}

double ThermalModel::predictDieC(double dtS, double dieW, double hbmW) const {
  m_scratch = m_rise;
  m_power[kDie] = dieW;
  m_power[kHbm] = hbmW;
  m_network.step(m_scratch, m_power, dtS);
  return m_ambientC + m_scratch[kDie];
}

std::optional<ThermalModel::SteadyState> ThermalModel::steadyState(double dieFixedW, double leakageRefW,
                                                                   double hbmW) const {
  // The die's steady temperature T solves g(T) = T0 + Zdd L 2^((T - Tref) / D) - T = 0, with T0 the
  // temperature without the leakage. g is convex and g(T0) > 0: the smallest root, the stable one,
  // lies between T0 and the minimum of g, where Zdd L ln2 / D 2^((T - Tref) / D) = 1; if g is
  // positive there, no root exists.
  const double zdd = m_network.impedance(kDie, kDie);
  const double zdh = m_network.impedance(kDie, kHbm);
  const LeakageTemperatureConfig& leak = m_config.leakage;
  const double t0 = m_ambientC + zdd * dieFixedW + zdh * hbmW;
  const auto g = [&](double t) { return t0 + zdd * leakageRefW * leak.scale(t) - t; };
  double dieC = t0;
  if (leakageRefW > 0.0) {
    const double tMin =
        leak.referenceC + leak.doublingK * std::log2(leak.doublingK / (zdd * leakageRefW * std::log(2.0)));
    if (tMin <= t0 || g(tMin) > 0.0) return std::nullopt;
    double lo = t0;
    double hi = tMin;
    for (int i = 0; i < 200 && hi - lo > 1e-9; ++i) {
      const double mid = 0.5 * (lo + hi);
      (g(mid) > 0.0 ? lo : hi) = mid;
    }
    dieC = 0.5 * (lo + hi);
  }
  SteadyState s;
  s.dieC = dieC;
  s.dieW = dieFixedW + leakageRefW * leak.scale(dieC);
  s.hbmC = m_ambientC + m_network.impedance(kHbm, kDie) * s.dieW + m_network.impedance(kHbm, kHbm) * hbmW;
  s.totalW = s.dieW + hbmW;
  return s;
}

double ThermalModel::sustainableW(double hbmW) const {
  const double zdd = m_network.impedance(kDie, kDie);
  const double zdh = m_network.impedance(kDie, kHbm);
  return (m_config.junctionLimitC - m_ambientC - zdh * hbmW) / zdd + hbmW;
}

}  // namespace scoville::power
