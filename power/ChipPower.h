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

#include "tlm/ActivityBus.h"
#include "power/EnergyLevels.h"
#include "power/EnergyTimeline.h"
#include "power/PowerConfig.h"
#include "power/RecentEnergy.h"

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
  /// No later reading starts before `timeS`: energy before it may be forgotten.
  virtual void forgetBefore(double timeS) const = 0;
  /// Static power with the core at `voltageScale` (V / V nominal) and the current gating.
  virtual double staticAtW(double voltageScale) const = 0;
};

class ChipPower : public tlm::ActivityListener, public PowerSensor {
 public:
  ChipPower(std::string name, std::string type, const ChipEnergyConfig& energy, double hbmBurstBytes, double ratedW,
            double intervalS, std::size_t maxBins = kDefaultMaxBins);

  void onActivity(const tlm::ActivityEvent& event) override;
  void onPowerState(const tlm::PowerStateEvent& event) override;

  /// Starts keeping the latest energy for a governor (before, the PowerSensor readings are 0).
  void keepRecent();
  double recentJ(double from, double to) const override;
  double recentCoreJ(double from, double to) const override;
  void forgetBefore(double timeS) const override;
  double staticAtW(double voltageScale) const override;

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

  std::string m_name;
  std::string m_type;
  const ChipEnergyConfig& m_energy;
  double m_burstBytes;
  double m_ratedW;
  Counts m_counts{};
  std::array<double, kLevels> m_levelJ{};
  std::array<double, kPhases> m_phaseJ{};
  std::array<double, tlm::kOpBlocks> m_blockJ{};
  EnergyTimeline m_timeline;
  mutable std::optional<RecentEnergy> m_recent;      ///< all dynamic energy, for a governor
  mutable std::optional<RecentEnergy> m_recentCore;  ///< core dynamic energy, for its prediction

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
