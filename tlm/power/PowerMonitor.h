#pragma once
// The power model: listens to the activity the timing model emits and turns it into energy, a
// power timeline, sustained power against the rating, and breakdowns by component and phase.
// It never feeds back into timing (DRAMPower-style: the timing model runs the same with or
// without it).
//
// Energy of an event is its amount times the energy the chip type's `power` section gives for
// that kind of activity; it is spread evenly over the event's [start, end] into timeline bins of
// `interval`. Static power (every unit's leakage plus the uncore) is drawn all the time. Sustained
// power over a window is the largest average over any run of whole bins that long (sliding by
// one bin); a violation is a maximal run of window positions above the rating.

#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tlm/ActivityBus.h"
#include "tlm/ClockDomain.h"
#include "tlm/power/PowerConfig.h"

namespace scoville::power {

/// Where dynamic energy goes on a chip.
enum class Component { kTensorCore, kVectorUnit, kSram, kHbm, kInterconnect, kFabricPorts };
inline constexpr std::size_t kComponents = 6;
const char* componentName(Component component);

/// Phases dynamic energy is attributed to (tlm::LlmPhase order).
inline constexpr std::size_t kPhases = 3;
const char* phaseName(std::size_t phase);

/// Energy in bins of `interval` from time 0, at most `maxBins` of them: when an event reaches past
/// the last one, adjacent pairs merge and the interval doubles. Energy is kept exactly; a long run
/// loses resolution, not joules, and its memory stays bounded.
class EnergyBins {
 public:
  EnergyBins(double intervalS, std::size_t maxBins);
  /// Adds `joules` spread evenly over [startS, endS] (all in one bin when equal).
  void add(double joules, double startS, double endS);
  /// The bin width now: the configured interval times a power of two.
  double interval() const { return m_interval; }
  std::size_t size() const { return m_bins.size(); }
  /// Energy of bin `b` (0 past the last event).
  double at(std::size_t b) const { return b < m_bins.size() ? m_bins[b] : 0.0; }
  const std::vector<double>& bins() const { return m_bins; }
  /// The bins merged to `intervalS`, a power-of-two multiple of interval().
  std::vector<double> resampled(double intervalS) const;
  /// Energy in [from, to), edge bins in proportion.
  double energyIn(double from, double to) const;

 private:
  void mergePairs();
  double m_interval;
  double m_perInterval;
  std::size_t m_maxBins;
  std::vector<double> m_bins;
};

/// Energy binned in time: all dynamic energy at the fine `interval` (for peak and sustained power),
/// and per phase at a coarse interval (for energy inside a measurement window). Both are
/// EnergyBins: past `maxBins` their intervals double.
class EnergyTimeline {
 public:
  /// The coarse bins are a whole number of fine ones, about 1 ms.
  EnergyTimeline(double intervalS, std::size_t maxBins = kDefaultMaxBins);
  /// Adds `joules` of `phase`, spread evenly over [startS, endS] (all in one bin when equal).
  void add(double joules, std::size_t phase, double startS, double endS);
  double interval() const { return m_fine.interval(); }
  double coarseInterval() const { return m_coarse[0].interval(); }
  std::size_t bins() const { return m_fine.size(); }
  /// Dynamic energy of fine bin `b`.
  double at(std::size_t b) const { return m_fine.at(b); }
  /// The fine bins (of width interval()).
  const std::vector<double>& fine() const { return m_fine.bins(); }
  const EnergyBins& fineBins() const { return m_fine; }
  /// Dynamic energy of `phase` in [startS, endS), coarse bins cut in proportion at the edges.
  double phaseEnergy(std::size_t phase, double startS, double endS) const;

 private:
  /// `coarse`: an empty phase timeline (each phase starts as a copy).
  EnergyTimeline(double intervalS, const EnergyBins& coarse, std::size_t maxBins);
  EnergyBins m_fine;
  std::array<EnergyBins, kPhases> m_coarse;
};

/// The latest stretch of energy at a fixed interval, for a DVFS governor: its bins are those of
/// an unbounded timeline (the same arithmetic), less those before a time no decision reads again.
class RecentEnergy {
 public:
  explicit RecentEnergy(double intervalS);
  /// As EnergyBins::add; the part before the dropped bins is not kept.
  void add(double joules, double startS, double endS);
  /// Energy in [from, to), edge bins in proportion; `from` must not lie before the dropped bins.
  double energyIn(double from, double to) const;
  /// Bins that end at or before `timeS` may be forgotten.
  void dropBefore(double timeS);
  std::size_t kept() const { return m_bins.size(); }

 private:
  double m_interval;
  double m_perInterval;
  std::size_t m_first = 0;  ///< index (from time 0) of m_bins[0]
  std::vector<double> m_bins;
};

/// Energy of `bins` (of width `interval` from time 0) in [from, to), edge bins in proportion.
double energyIn(const std::vector<double>& bins, double interval, double from, double to);

/// Sustained power over one window length, and the runs of windows above a limit.
struct SustainedPower {
  struct Violation {
    double startS = 0.0;  ///< start of the first window above the limit
    double endS = 0.0;    ///< end of the last one
    double maxW = 0.0;
  };
  double windowS = 0.0;  ///< the window as used: whole bins
  bool fits = false;     ///< false: the run is shorter than the window
  double maxW = 0.0;     ///< highest average over any window position
  double maxAtS = 0.0;   ///< start of that window
  std::size_t violations = 0;
  std::vector<Violation> firstViolations;  ///< at most kListedViolations
  static constexpr std::size_t kListedViolations = 10;
};

/// Sliding-window maxima of `binPowerW` (power of each bin) over `windowBins` bins.
SustainedPower sustainedPower(const std::vector<double>& binPowerW, double intervalS, std::size_t windowBins,
                              double limitW);

/// What a serving chip is doing, as its serving engine tells the power model: energy and time are
/// attributed to the state the chip is in when they are drawn (workloads/PhasePolicy.h).
enum class ServingState { kIdle, kPrefill, kDecode, kTransition };
inline constexpr std::size_t kServingStates = 4;
const char* servingStateName(ServingState state);

/// One chip's energy. Subscribed to the chip's activity bus; the platform's network events for
/// the chip's ports are routed to it by PowerMonitor.
///
/// With a governor, the chip's DVFS point changes at decision times (multiples of the response
/// time): a decision at t averages the chip's power over [t - window, t) and picks the highest
/// point whose predicted power is under the cap (dropping when above it, rising only when the
/// prediction is below cap x (1 - hysteresis)); the prediction scales the core's (tensor core and
/// vector unit) dynamic power by V^2 f and keeps the rest. Decisions are taken when the first
/// event starting at or after their time arrives, from the energy known then; the clock domain's
/// scale (f / f nominal) then stretches the core's later transactions, and core energy is priced
/// at (V / V nominal)^2. Static power stays at its nominal-voltage value.
class ChipPower : public tlm::ActivityListener {
 public:
  ChipPower(std::string name, std::string type, const ChipEnergyConfig& energy, double hbmBurstBytes, double ratedW,
            double intervalS, std::size_t maxBins = kDefaultMaxBins);
  /// Lets `governor` drive `clock` (no effect for GovernorKind::kNone or fewer than two points).
  void govern(const GovernorConfig& governor, tlm::ClockDomain& clock);
  bool governed() const { return m_clock != nullptr; }
  double capW() const { return m_capW; }
  /// Time spent at each DVFS point up to `endS` (closes the current one at endS).
  std::vector<double> timeAtPoints(double endS) const;
  std::size_t clockChanges() const { return m_changes; }
  /// Every change of DVFS point: when, and the point it moved to (the run starts at point 0).
  struct ClockChange {
    double timeS = 0.0;
    std::size_t point = 0;
  };
  const std::vector<ClockChange>& clockLog() const { return m_clockLog; }
  /// The first decision's time (windows starting then are the governor's to answer for).
  double firstDecisionS() const { return m_responseS; }
  const std::vector<DvfsPoint>& points() const { return m_energy.dvfs; }

  void onActivity(const tlm::ActivityEvent& event) override;

  // Operating state set by a serving phase policy (never together with a governor).
  /// From `timeS` on the core runs at DVFS point `point`: its dynamic energy is priced at that
  /// point's voltage (the caller scales the clock domain).
  void setPolicyPoint(double timeS, std::size_t point);
  /// From `timeS` on, `gated` of the tensor core's `arrays` are powered off: their share of the
  /// tensor core's static power is not drawn.
  void setGatedArrays(double timeS, int gated, int arrays);
  /// Energy of powering arrays back on, drawn over [startS, endS].
  void addWakeEnergy(double joules, double startS, double endS, tlm::LlmPhase phase);
  /// From `timeS` on, energy and time are attributed to `state`.
  void enterState(double timeS, ServingState state);
  /// Energy (dynamic and static) and time in each serving state up to `endS`.
  std::array<double, kServingStates> stateEnergyJ(double endS) const;
  std::array<double, kServingStates> stateTimeS(double endS) const;
  /// Static energy not drawn because arrays were gated, binned as the timeline, up to `endS`.
  EnergyBins gatedStaticBins(double endS) const;
  /// Static energy drawn in [0, endS): idle power less what gated arrays saved.
  double staticJ(double endS) const;

  const std::string& name() const { return m_name; }
  const std::string& type() const { return m_type; }
  double ratedW() const { return m_ratedW; }
  double idleW() const { return m_energy.idleW(); }
  const std::array<double, kComponents>& componentJ() const { return m_componentJ; }
  const std::array<double, kPhases>& phaseJ() const { return m_phaseJ; }
  /// Dynamic energy by the kind of layer the transactions worked for (tlm::OpBlock order).
  const std::array<double, tlm::kOpBlocks>& blockJ() const { return m_blockJ; }
  double dynamicJ() const;
  const EnergyTimeline& timeline() const { return m_timeline; }
  EnergyTimeline& timeline() { return m_timeline; }

 private:
  std::string m_name;
  std::string m_type;
  const ChipEnergyConfig& m_energy;
  double m_burstBytes;
  double m_ratedW;
  std::array<double, kComponents> m_componentJ{};
  std::array<double, kPhases> m_phaseJ{};
  std::array<double, tlm::kOpBlocks> m_blockJ{};
  EnergyTimeline m_timeline;

  /// What decisions aim under: half the hysteresis below the cap, a guard band for the
  /// prediction and for transactions already running at the old clock.
  double aimW() const { return m_capW * (1.0 - 0.5 * m_hysteresis); }
  /// Takes every decision due at or before `time`.
  void decideUntil(double time);
  void decide(double time);
  /// Books the time at the current point and moves to `point` (its energy scale; the caller scales
  /// the clock domain).
  void moveToPoint(double timeS, std::size_t point);
  // Governor state (m_clock null: not governed).
  tlm::ClockDomain* m_clock = nullptr;
  double m_capW = 0.0;
  double m_windowS = 0.0;
  double m_responseS = 0.0;
  double m_hysteresis = 0.0;
  std::size_t m_point = 0;         ///< current DVFS point
  double m_coreEnergyScale = 1.0;  ///< (V / V nominal)^2 at the current point
  double m_nextDecision = 0.0;
  double m_lastEnd = 0.0;  ///< latest end of an event seen (energy may lie up to there)
  double m_pointSince = 0.0;
  std::vector<double> m_timeAtPoint;
  std::size_t m_changes = 0;
  std::vector<ClockChange> m_clockLog;
  std::optional<RecentEnergy> m_recent;      ///< all dynamic energy, for the decisions
  std::optional<RecentEnergy> m_recentCore;  ///< core dynamic energy, for the prediction

  /// Closes the current state and gating interval at `timeS`.
  void accrue(double timeS);
  double gatedW() const;
  ServingState m_state = ServingState::kIdle;
  double m_stateSince = 0.0;
  std::array<double, kServingStates> m_stateJ{};  ///< closed intervals' static plus all dynamic energy
  std::array<double, kServingStates> m_stateS{};
  int m_gated = 0;
  int m_arrays = 1;
  EnergyBins m_gatedBins;  ///< static energy saved (closed intervals)
  double m_gatedJ = 0.0;
};

/// Every switch of the fabric together (one switch type per platform).
class SwitchPower : public tlm::ActivityListener {
 public:
  SwitchPower(const SwitchEnergyConfig& energy, int switches, double intervalS, std::size_t maxBins = kDefaultMaxBins)
      : m_energy(energy), m_switches(switches), m_timeline(intervalS, maxBins) {}
  void onActivity(const tlm::ActivityEvent& event) override;
  double staticW() const { return m_energy.staticW * m_switches; }
  int switches() const { return m_switches; }
  double dynamicJ() const { return m_bytesJ + m_packetsJ; }
  double bytesJ() const { return m_bytesJ; }
  double packetsJ() const { return m_packetsJ; }
  const EnergyTimeline& timeline() const { return m_timeline; }
  EnergyTimeline& timeline() { return m_timeline; }

 private:
  const SwitchEnergyConfig& m_energy;
  int m_switches;
  double m_bytesJ = 0.0;
  double m_packetsJ = 0.0;
  EnergyTimeline m_timeline;
};

/// What a chip of the platform is to the power report.
struct ChipPowerSpec {
  std::string name;
  std::string type;
  double ratedW = 0.0;
  const ChipEnergyConfig* energy = nullptr;  ///< null: the chip type has no `power` section
  double hbmBurstBytes = 0.0;
  tlm::ClockDomain* coreClock = nullptr;  ///< what a governor scales (null: no governor)
};

/// The power of a whole platform: a ChipPower per chip with an energy model, the switches, and
/// the report.
class PowerMonitor : public tlm::ActivityListener {
 public:
  PowerMonitor(const PowerManagementConfig& config, const std::vector<ChipPowerSpec>& chips,
               const SwitchEnergyConfig* switchEnergy, int switches);

  /// Whether every chip has an energy model (otherwise there is no power report).
  bool modelled() const { return m_missing.empty(); }
  /// Chip types without a `power` section.
  const std::vector<std::string>& missingTypes() const { return m_missing; }
  /// The listener of chip `index`'s activity bus (null when the chip is not modelled).
  ChipPower* chip(std::size_t index) { return index < m_chips.size() ? m_chips[index].get() : nullptr; }
  const ChipPower* chip(std::size_t index) const { return index < m_chips.size() ? m_chips[index].get() : nullptr; }
  std::size_t chips() const { return m_chips.size(); }
  const SwitchPower* switches() const { return m_switches ? &*m_switches : nullptr; }

  /// Chip c with mirrorOf[c] >= 0 is not simulated but provably does what chip mirrorOf[c] does:
  /// its power is reported as that chip's, and its own (network) events are dropped.
  void setMirrors(std::vector<int> mirrorOf);

  /// Network events: link bytes go to the chip whose port moved them, switch activity to the
  /// switches.
  void onActivity(const tlm::ActivityEvent& event) override;
  /// Link events of chips with a power model that mirror no other chip.
  bool usesChip(int chip) const override;

  /// Tokens a serving run produced in its measurement window, for the derived metrics.
  struct ServingWindow {
    double startS = 0.0;
    double endS = 0.0;
    double inputTokens = 0.0;
    double outputTokens = 0.0;
  };

  /// The `power` section of report.json for a run that ended at `endS`; with `window`, also the
  /// derived per-token and per-kW metrics of a serving run.
  nlohmann::ordered_json report(double endS, const std::optional<ServingWindow>& window) const;

 private:
  const PowerManagementConfig& m_config;
  std::vector<std::unique_ptr<ChipPower>> m_chips;
  std::optional<SwitchPower> m_switches;
  std::vector<std::string> m_missing;
  std::vector<int> m_mirrorOf;  ///< per chip: -1, or the chip it mirrors

  nlohmann::ordered_json dvfsJson(const ChipPower& chip, const std::vector<double>& watts, double intervalS,
                                  double endS) const;
};

}  // namespace scoville::power
