#pragma once
// One chip's energy: listens to the activity its units emit (and, routed by PowerMonitor, to its
// link ports' network activity) and to its power manager's state changes, and prices them level
// by level (EnergyLevels.h). It never feeds back into timing: a power manager (hw/power/) that
// acts on the clock reads it through the read-only PowerSensor interface, as hardware reads its
// power telemetry.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "power/EnergyLevels.h"
#include "power/EnergyTimeline.h"
#include "power/PowerConfig.h"
#include "power/RecentEnergy.h"
#include "power/ThermalConfig.h"
#include "tlm/ActivityBus.h"

namespace scoville::power {

/// What a serving chip is doing, as its serving runtime tells the power model: energy and time are
/// attributed to the state the chip is in when they are drawn (workloads/PhasePolicy.h).
enum class ServingState { kIdle, kPrefill, kDecode, kTransition };
inline constexpr std::size_t kServingStates = 4;
const char* servingStateName(ServingState state);

/// A chip's power telemetry, as a DVFS governor reads it: the latest dynamic energy at the
/// configured timeline interval, and the static power at a core voltage.
class PowerSensor {
 public:
  virtual ~PowerSensor() = default;
  /// Dynamic energy in [from, to) (edge bins in proportion), all of it and the core's (the part
  /// whose rate follows the core clock: datapath, register file, vector unit, floor).
  virtual double recentJ(double from, double to) const = 0;
  virtual double recentCoreJ(double from, double to) const = 0;
  /// Dynamic energy of the HBM stacks themselves (DRAM core, TSVs, refresh) in [from, to): what
  /// heats the HBM rather than the die (kept once keepRecent(true) was called).
  virtual double recentHbmJ(double from, double to) const = 0;
  /// No later reading starts before `timeS`: energy before it may be forgotten.
  virtual void forgetBefore(double timeS) const = 0;
  /// Static power with the core at `voltageScale` (V / V nominal), the current gating and the
  /// current die temperature.
  virtual double staticAtW(double voltageScale) const = 0;
  /// The HBM stacks' static power.
  virtual double hbmStaticW() const = 0;
  /// The core-rail leakage at `voltageScale` and the current gating, at the leakage reference
  /// temperature (what the die temperature scales).
  virtual double coreLeakageRefW(double voltageScale) const = 0;
};

class ChipPower : public tlm::ActivityListener, public PowerSensor {
 public:
  ChipPower(std::string name, std::string type, const ChipEnergyConfig& energy, double hbmBurstBytes, double ratedW,
            double intervalS, std::size_t maxBins = kDefaultMaxBins, const ThermalConfig* thermal = nullptr);

  void onActivity(const tlm::ActivityEvent& event) override;
  void onPowerState(const tlm::PowerStateEvent& event) override;
  /// The chip mirrors another (PowerMonitor::setMirrors): it is reported as that chip, so it keeps
  /// nothing of what it hears from now on.
  void setMirror() { m_mirror = true; }

  /// Starts keeping the latest energy for a governor or a thermal model (before, the PowerSensor
  /// readings are 0); `hbm`: the HBM's part too (a thermal model's).
  void keepRecent(bool hbm = false);
  double recentJ(double from, double to) const override;
  double recentCoreJ(double from, double to) const override;
  double recentHbmJ(double from, double to) const override;
  void forgetBefore(double timeS) const override;
  double staticAtW(double voltageScale) const override;
  double hbmStaticW() const override { return m_energy.hbm.staticW; }
  double coreLeakageRefW(double voltageScale) const override;

  /// The thermal model's state as announced (kThermal and kThrottle events): a trace of the die
  /// and HBM temperatures, bounded by keeping every other sample once it is full, and totals.
  struct ThermalTrace {
    struct Sample {
      double timeS = 0.0;
      double dieC = 0.0;
      double hbmC = 0.0;
    };
    std::vector<Sample> samples;
    std::size_t stride = 1;   ///< announcements per kept sample
    std::size_t skipped = 0;  ///< announcements since the last kept sample
    double peakDieC = 0.0;
    double peakHbmC = 0.0;
    double dieCSeconds = 0.0;  ///< integral of the die temperature over time (its mean x time)
    double hbmCSeconds = 0.0;
    double refreshDoubledS = 0.0;
    double throttledS = 0.0;
    double sinceS = 0.0;  ///< the last announcement's time
    bool throttled = false;
    double refreshRate = 1.0;
    double dieC = 0.0;
    double hbmC = 0.0;
    double leakageScale = 1.0;
    bool announced = false;
  };
  /// Null until the thermal model announced its first state.
  const ThermalTrace* thermal() const { return m_thermal.announced ? &m_thermal : nullptr; }
  /// The trace's totals carried on to `endS`.
  ThermalTrace thermalUntil(double endS) const;

  /// The operating point as the power manager announced it (the run starts at point 0).
  std::size_t point() const { return m_point; }
  /// Time spent at each DVFS point up to `endS`.
  std::vector<double> timeAtPoints(double endS) const;
  std::size_t clockChanges() const { return m_clockLog.size(); }
  struct ClockChange {
    double timeS = 0.0;
    std::size_t point = 0;
  };
  const std::vector<ClockChange>& clockLog() const { return m_clockLog; }
  const std::vector<DvfsPoint>& points() const { return m_energy.dvfs; }

  /// Energy (dynamic and static) and time in each serving state up to `endS`.
  std::array<double, kServingStates> stateEnergyJ(double endS) const;
  std::array<double, kServingStates> stateTimeS(double endS) const;
  /// Static energy not drawn relative to idleW() (gated arrays, leakage at a lower voltage), binned
  /// as the timeline, up to `endS`.
  EnergyBins savedStaticBins(double endS) const;
  /// Static energy drawn in [0, endS).
  double staticJ(double endS) const;

  const std::string& name() const { return m_name; }
  const std::string& type() const { return m_type; }
  double ratedW() const { return m_ratedW; }
  /// Static power at the nominal voltage with every array powered.
  double idleW() const { return m_energy.idleW(); }
  const ChipEnergyConfig& energy() const { return m_energy; }
  /// The chip type's thermal model, or null.
  const ThermalConfig* thermalConfig() const { return m_thermalConfig; }
  /// Dynamic energy by level, and the effective counts behind it (EnergyLevels.h).
  const std::array<double, kLevels>& levelJ() const { return m_levelJ; }
  const Counts& counts() const { return m_counts; }
  const std::array<double, kPhases>& phaseJ() const { return m_phaseJ; }
  /// Dynamic energy by the kind of layer the transactions worked for (tlm::OpBlock order); the
  /// floor and waking arrays count as kOther.
  const std::array<double, tlm::kOpBlocks>& blockJ() const { return m_blockJ; }
  double dynamicJ() const;
  const EnergyTimeline& timeline() const { return m_timeline; }

 private:
  /// Closes the current static interval at `timeS`.
  void accrue(double timeS);
  /// Static power below idleW() now.
  double savedW() const;
  /// The tensor core's static power gated off now.
  double gatedW() const;
  /// Carries the thermal totals to `timeS`.
  static void carry(ThermalTrace& trace, double timeS);

  std::string m_name;
  std::string m_type;
  const ChipEnergyConfig& m_energy;
  const ThermalConfig* m_thermalConfig;
  double m_burstBytes;
  double m_ratedW;
  Counts m_counts{};
  std::array<double, kLevels> m_levelJ{};
  std::array<double, kPhases> m_phaseJ{};
  std::array<double, tlm::kOpBlocks> m_blockJ{};
  EnergyTimeline m_timeline;
  mutable std::optional<RecentEnergy> m_recent;      ///< all dynamic energy, for a governor
  mutable std::optional<RecentEnergy> m_recentCore;  ///< core dynamic energy, for its prediction
  mutable std::optional<RecentEnergy> m_recentHbm;   ///< HBM dynamic energy, for a thermal model
  ThermalTrace m_thermal;
  bool m_mirror = false;

  // Operating point and gating, as announced.
  std::size_t m_point = 0;
  double m_voltageScale = 1.0;
  double m_frequencyScale = 1.0;
  double m_pointSince = 0.0;
  std::vector<double> m_timeAtPoint;
  std::vector<ClockChange> m_clockLog;
  int m_gated = 0;
  int m_arrays = 1;

  // Serving state and static accrual.
  ServingState m_state = ServingState::kIdle;
  double m_since = 0.0;
  std::array<double, kServingStates> m_stateJ{};  ///< closed intervals' static plus all dynamic energy
  std::array<double, kServingStates> m_stateS{};
  EnergyBins m_savedBins;  ///< static energy saved (closed intervals)
  double m_savedJ = 0.0;
};

}  // namespace scoville::power
