#pragma once
// A chip's thermal sensing and control, part of its power manager: it integrates the chip's thermal
// model (power/ThermalModel.h) on the chip's power telemetry, step by step, and acts on what it
// finds. Every step it announces the die and HBM temperatures and the core-rail leakage's scale at
// the die temperature (a tlm::PowerStateEvent kThermal, which the power model prices), and it
// switches the HBM to double-rate refresh above `hbm_refresh_limit` (and back below it less the
// hysteresis), as a memory controller reading the stacks' temperature sensors does. A DVFS governor
// reads it to hold the die under the junction limit (DvfsGovernor.h).
//
// Steps are taken lazily, as the governor's decisions: when the chip reports activity starting at
// or after a step's end, every step due until then is integrated from the energy known at that
// moment. A step is `thermal.step` long while the chip works; a stretch with no activity is
// integrated in steps that double up to 1 s (its power, the static power alone, changes only
// through the leakage, slowly).

#include <functional>
#include <optional>

#include "power/ChipPower.h"
#include "power/PowerConfig.h"
#include "power/ThermalConfig.h"
#include "power/ThermalModel.h"

namespace scoville::hw {

class ThermalControl {
 public:
  /// Announces the thermal state at a time (the manager emits it on the chip's bus).
  using Announce =
      std::function<void(double timeS, const power::ThermalModel& model, double leakageScale, double refreshRate)>;
  /// Sets the HBM refresh rate (1 or 2 times the normal one) from a time.
  using SetRefreshRate = std::function<void(double timeS, double rate)>;

  ThermalControl(const power::ThermalConfig& config, const power::ChipEnergyConfig& energy, double ratedW,
                 const power::PowerSensor& sensor, Announce announce, SetRefreshRate refresh);

  /// Puts the model in its start state (ThermalConfig::start) and announces it at time 0.
  void start();
  /// Integrates every step that ends at or before `timeS`; the core runs at `voltageScale`.
  void advanceTo(double timeS, double lastActivityEndS, double voltageScale);
  /// Integrates up to exactly `timeS` (the end of a run).
  void finish(double timeS, double lastActivityEndS, double voltageScale);

  /// Where the model is in time; energy before it is not read again.
  double timeS() const { return m_timeS; }
  const power::ThermalModel& model() const { return m_model; }
  double limitC() const { return m_config.junctionLimitC; }
  double hysteresisK() const { return m_config.throttleHysteresisK; }
  /// The die's temperature at `untilS` if the chip draws `totalW` from now, `hbmW` of it in the HBM.
  double predictDieC(double untilS, double totalW, double hbmW) const;
  /// The HBM's power over [from, to) as the telemetry gives it.
  double hbmW(double fromS, double toS) const;

 private:
  void step(double dtS, double voltageScale);
  void announce();

  const power::ThermalConfig& m_config;
  const power::ChipEnergyConfig& m_energy;
  double m_ratedW;
  const power::PowerSensor& m_sensor;
  Announce m_announce;
  SetRefreshRate m_refresh;
  power::ThermalModel m_model;
  double m_timeS = 0.0;
  double m_idleStepS;
  double m_refreshRate = 1.0;
};

}  // namespace scoville::hw
