#pragma once
// A chip's power manager: the hardware that acts on power. It owns the core clock domain (the
// tensor core and vector unit run on it) and its operating point, the power gating of tensor
// arrays and what waking them costs, the clock gating that decides when the clocked-active floor
// is drawn, and the DVFS governor. Serving phase policies and the governor change the chip's power
// state only through it; it announces every change on the chip's activity bus
// (tlm::PowerStateEvent, kClockActive and kWakeArrays events), where the power model (power/)
// prices them and nothing else.
//
// It listens to the chip's activity itself, as a hardware activity monitor: the units' busy
// intervals drive the clock gating, and their arrival drives the governor's lazy decisions. It
// subscribes to the bus before any power listener, so that a decision taken on an event's arrival
// is announced before the event is priced.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <systemc>
#include <vector>

#include "hw/power/ClockGating.h"
#include "hw/power/DvfsGovernor.h"
#include "hw/power/ThermalControl.h"
#include "power/ChipPower.h"
#include "power/PowerConfig.h"
#include "stats/StatsGroup.h"
#include "tlm/ActivityBus.h"
#include "tlm/ClockDomain.h"

namespace scoville::hw {

class PowerManager : public sc_core::sc_module, public tlm::ActivityListener {
 public:
  /// How the manager powers tensor arrays on and off (the chip's tensor core).
  using ArrayGate = std::function<void(int arrays)>;

  /// `energy`: the chip type's power section (null: no power model; the clock domain and gating
  /// still work, nothing is announced but the state). `arrays`: the tensor core's arrays.
  PowerManager(const sc_core::sc_module_name& name, const power::ChipEnergyConfig* energy, int arrays, ArrayGate gate);
  PowerManager(const PowerManager&) = delete;
  PowerManager& operator=(const PowerManager&) = delete;

  /// Subscribes to `bus` (before any power listener) and announces on it.
  void attach(tlm::ActivityBus& bus);

  /// The core clock domain (tensor core and vector unit).
  tlm::ClockDomain& coreClock() { return m_coreClock; }
  const tlm::ClockDomain& coreClock() const { return m_coreClock; }

  /// Runs the core at DVFS point `point` from `timeS` (a phase policy, between steps). Throws
  /// std::logic_error on a governed chip and std::invalid_argument for a point the type lacks.
  void setOperatingPoint(double timeS, std::size_t point);
  std::size_t operatingPoint() const { return m_point; }
  /// Powers `arrays` of the tensor core's arrays from `timeS` (1..count). Arrays powered back on
  /// draw their wake energy over [timeS, wakeEndS], booked to `phase`.
  void setPoweredArrays(double timeS, int arrays, double wakeEndS, tlm::LlmPhase phase);
  int poweredArrays() const { return m_arrays - m_gated; }

  /// Runs the chip's thermal model (ThermalControl.h) on `sensor` (the chip's power model) from
  /// time 0; call before govern(). `ratedW`: the chip's rating (thermal.start rated).
  void thermal(const power::ThermalConfig& config, double ratedW, const power::PowerSensor& sensor);
  const ThermalControl* thermalControl() const { return m_thermal.get(); }
  /// How the manager sets the HBM's refresh rate (1 or 2 times the normal one) from a time.
  void setRefreshControl(ThermalControl::SetRefreshRate refresh) { m_refreshRate = std::move(refresh); }

  /// Lets a DVFS governor drive the core clock under `capW` (and under the junction limit when the
  /// chip has a thermal model), reading `sensor` (the chip's power model). No effect for
  /// GovernorKind::kNone, kThermal without a thermal model, or fewer than two operating points.
  void govern(const power::GovernorConfig& config, double capW, const power::PowerSensor& sensor);
  bool governed() const { return m_governor != nullptr; }
  /// How many times the core's DVFS point has changed so far (by a governor or a phase policy).
  uint64_t operatingPointChanges() const { return m_pointChangeCount; }

  /// Announces the clocked-active time not yet announced, and with `thermal` integrates the
  /// thermal model to `endS` (call before reading the power model at the end of a run or of a
  /// measured kernel).
  void settle(double endS, bool thermal = true);

  void onActivity(const tlm::ActivityEvent& event) override;

  const stats::Group& stats() const { return m_stats; }

 private:
  void moveTo(double timeS, std::size_t point);
  /// Lets the thermal model and the governor catch up with `timeS`, then forgets what neither reads.
  void catchUp(double timeS);
  double voltageScale() const;
  void announce(const std::vector<ClockGating::Stretch>& stretches);

  const power::ChipEnergyConfig* m_energy;
  int m_arrays;
  int m_gated = 0;
  ArrayGate m_gate;
  tlm::ClockDomain m_coreClock;
  std::size_t m_point = 0;
  uint64_t m_pointChangeCount = 0;
  tlm::ActivityBus* m_bus = nullptr;
  tlm::ActivitySource m_source;
  ClockGating m_gating;
  std::vector<ClockGating::Stretch> m_stretches;  ///< scratch
  tlm::OpExtension m_clockOp;                     ///< what clock-active events are booked as
  double m_lastEnd = 0.0;                         ///< latest end of any activity reported
  std::unique_ptr<ThermalControl> m_thermal;
  ThermalControl::SetRefreshRate m_refreshRate;
  const power::PowerSensor* m_sensor = nullptr;
  std::unique_ptr<DvfsGovernor> m_governor;
  stats::Group m_stats;
  stats::Counter& m_clockActive;
  stats::Counter& m_pointChanges;
  stats::Counter& m_wakes;
};

}  // namespace scoville::hw
