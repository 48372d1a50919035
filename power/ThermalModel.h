#pragma once
// One chip's thermal state in its cooling (ThermalConfig.h): the die, HBM, lid and cooler nodes of
// a ThermalNetwork, their temperatures now, and the closed forms a report needs: the steady state
// at a power (with leakage rising with the die temperature: a fixed point that exists, or a thermal
// runaway), and the highest power the chip holds at its junction limit.
//
// It is arithmetic only: what drives it through a run is the chip's power manager
// (hw/power/ThermalControl.h), which reads the chip's power telemetry every step.

#include <array>
#include <optional>

#include "power/ThermalConfig.h"
#include "power/ThermalNetwork.h"

namespace scoville::power {

class ThermalModel {
 public:
  enum NodeIndex : std::size_t { kDie = 0, kHbm = 1, kLid = 2, kCooler = 3 };
  static constexpr std::size_t kNodes = 4;

  explicit ThermalModel(const ThermalConfig& config);

  const ThermalConfig& config() const { return m_config; }
  const ThermalNetwork& network() const { return m_network; }
  double ambientC() const { return m_ambientC; }

  /// Every node at the steady state of `dieW` on the die and `hbmW` in the HBM.
  void settleAt(double dieW, double hbmW);
  /// Advances the state by `dtS` under constant `dieW` and `hbmW` (exact for constant power).
  void advance(double dtS, double dieW, double hbmW);
  /// Node temperatures now, in C.
  double temperatureC(NodeIndex node) const { return m_ambientC + m_rise[node]; }
  /// The die's temperature `dtS` from now under constant `dieW` and `hbmW` (the state unchanged).
  double predictDieC(double dtS, double dieW, double hbmW) const;

  /// The steady state of a chip whose die draws `dieFixedW` plus core leakage `leakageRefW` (its
  /// value at the leakage reference temperature, which the die temperature scales), and whose HBM
  /// draws `hbmW`. nullopt: no steady state exists (the leakage outgrows the cooling: thermal runaway).
  struct SteadyState {
    double dieC = 0.0;
    double hbmC = 0.0;
    double dieW = 0.0;  ///< with the leakage at dieC
    double totalW = 0.0;
  };
  std::optional<SteadyState> steadyState(double dieFixedW, double leakageRefW, double hbmW) const;
  /// The highest total power the chip holds in steady state with the die at the junction limit,
  /// with `hbmW` of it in the HBM.
  double sustainableW(double hbmW) const;

 private:
  const ThermalConfig& m_config;
  double m_ambientC;
  ThermalNetwork m_network;
  std::vector<double> m_rise;
  mutable std::vector<double> m_power;  ///< scratch: per node
  mutable std::vector<double> m_scratch;
};

}  // namespace scoville::power
