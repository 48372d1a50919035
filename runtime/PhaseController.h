#pragma once
// Applies a replica's phase policies (workloads/PhasePolicy.h, docs/serving.md "Phase policies")
// to its chips as the simulation runs: the setting each step runs at goes to the chips' power
// managers, and what the steps did under each phase is summed.

#include <array>
#include <cstdint>
#include <vector>

#include "hw/chip/Chip.h"
#include "power/PowerMonitor.h"
#include "workloads/PhasePolicy.h"

namespace scoville::runtime {

using workload::CorePoints;
using workload::kStepPhases;
using workload::PhasePolicyConfig;
using workload::PhaseSetting;
using workload::PhaseTotals;
using workload::PhaseTransition;
using workload::ServingPolicyConfig;
using workload::StepPhase;
using workload::StepPlan;

/// Applies a serving policy to the chips of one replica, step by step (the replica runner calls it
/// around every step; see workloads/PhasePolicy.h).
class PhaseController {
 public:
  /// `chips`: the replica's chips (all of one type). The policy acts through their power managers
  /// (never on a clock a DVFS governor owns) and announces what they do on their activity buses.
  PhaseController(int replica, const ServingPolicyConfig& config, std::vector<hw::Chip*> chips);

  /// Chooses the setting of a step of `phase` whose simulated chips run `plans`, applies it now
  /// and returns how long the change stalls the chips (0: none); the caller waits that long, then
  /// calls started().
  double prepare(StepPhase phase, const std::vector<const StepPlan*>& plans);
  /// The step's transactions start now.
  void started();
  /// The step finished now: `flops`, `bytes` of all its chips, the `tokens` it fed and its
  /// compute precision.
  void finished(double flops, double bytes, uint64_t tokens, tlm::Precision precision);
  /// Chips of the replica.
  std::size_t chips() const { return m_chips.size(); }

  const std::array<PhaseTotals, kStepPhases>& totals() const { return m_totals; }
  const PhaseSetting& setting() const { return m_setting; }
  /// The first kListedTransitions changes.
  const std::vector<PhaseTransition>& transitions() const { return m_log; }
  static constexpr std::size_t kListedTransitions = 100;

 private:
  const PhasePolicyConfig& policy(StepPhase phase) const {
    return phase == StepPhase::kPrefill ? m_config.prefill : m_config.decode;
  }
  void enterState(double timeS, power::ServingState state);

  int m_replica;
  const ServingPolicyConfig& m_config;
  std::vector<hw::Chip*> m_chips;
  bool m_governed;
  hw::ChipConfig m_chip;  ///< the replica's chip type
  CorePoints m_points;
  PhaseSetting m_setting;
  StepPhase m_phase = StepPhase::kDecode;
  double m_stepStart = 0.0;
  std::array<PhaseTotals, kStepPhases> m_totals{};
  std::vector<PhaseTransition> m_log;
};

}  // namespace scoville::runtime
