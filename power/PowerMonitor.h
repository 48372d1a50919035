#pragma once
// The power model of a platform: a ChipPower per chip (EnergyLevels.h prices what each chip's units
// do, level by level), the switches, and the report: a power timeline, sustained power against the
// rating, breakdowns by level, phase and layer kind. It only listens: the timing model runs the
// same with or without it (DRAMPower-style), and the power managers that act on the clocks
// (hw/power/PowerManager.h) read it as telemetry.
//
// Energy of an event is spread evenly over the event's [start, end] into timeline bins of
// `interval`. Static power (every unit's leakage plus the uncore) is drawn all the time. Sustained
// power over a window is the largest average over any run of whole bins that long (sliding by
// one bin); a violation is a maximal run of window positions above the rating.

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "power/ChipPower.h"
#include "power/PowerConfig.h"
#include "power/SustainedPower.h"
#include "power/SwitchPower.h"
#include "power/ThermalConfig.h"
#include "tlm/ActivityBus.h"

namespace scoville::power {

/// What a chip of the platform is to the power report.
struct ChipPowerSpec {
  std::string name;
  std::string type;
  double ratedW = 0.0;
  const ChipEnergyConfig* energy = nullptr;  ///< null: the chip type has no `power` section
  double hbmBurstBytes = 0.0;
  const ThermalConfig* thermal = nullptr;  ///< null: the chip type has no `thermal` section
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
  const PowerManagementConfig& config() const { return m_config; }
  /// The listener of chip `index`'s activity bus (null when the chip is not modelled).
  ChipPower* chip(std::size_t index) { return index < m_chips.size() ? m_chips[index].get() : nullptr; }
  const ChipPower* chip(std::size_t index) const { return index < m_chips.size() ? m_chips[index].get() : nullptr; }
  std::size_t chips() const { return m_chips.size(); }
  const SwitchPower* switches() const { return m_switches ? &*m_switches : nullptr; }

  /// Chip c with mirrorOf[c] >= 0 is not simulated but provably does what chip mirrorOf[c] does:
  /// its power is reported as that chip's, and its own (network) events are dropped.
  void setMirrors(std::vector<int> mirrorOf);
  /// Replica classes: switch activity a message of chip c causes counts weight[c] times (the
  /// replicas its replica stands for; chips past the end: once).
  void setSwitchWeights(std::vector<double> weight) { m_switchWeight = std::move(weight); }
  /// Whether chip `index` mirrors another (is not simulated).
  bool mirrored(std::size_t index) const { return index < m_mirrorOf.size() && m_mirrorOf[index] >= 0; }

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
  std::vector<int> m_mirrorOf;         ///< per chip: -1, or the chip it mirrors
  std::vector<double> m_switchWeight;  ///< per chip, by the message's sender

  nlohmann::ordered_json thermalJson(const ChipPower& chip, double endS) const;
  nlohmann::ordered_json dvfsJson(const ChipPower& chip, const std::vector<double>& watts, double intervalS,
                                  double endS) const;
  /// Whether chip `chip` runs a governor: one is configured and its type has two points or more.
  bool governed(const ChipPower& chip) const;
};

}  // namespace scoville::power
