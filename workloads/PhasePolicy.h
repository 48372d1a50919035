#pragma once
// Per-phase resource policies of a serving deployment (scenario key `serving`, docs/serving.md
// "Phase policies"): which core operating point (DVFS point) and how many tensor arrays each
// engine step runs with, chosen by the phase of the step, and what changing them costs.
//
// A step that feeds any prompt tokens (a prefill chunk, alone or inside a decode batch) is a
// prefill step and runs under `prefill_policy`; a step of decodes only runs under `decode_policy`.
// Policies (`impl`):
//   uniform        one fixed setting for every step: `dvfs_point` (0, the nominal clock, unless
//                  given) and `active_arrays` (all unless given). Two uniform policies at their
//                  defaults are what a run without a `serving` block does.
//   compute_opt    the nominal (highest) clock and every array: the setting for compute-bound work.
//   bandwidth_opt  the least core the step's memory traffic leaves room for: the lowest DVFS point
//                  and the fewest powered arrays (the rest power-gated) at which the step's predicted
//                  core time (TensorCoreConfig::gemmCycles of every GEMM at that array count, and the
//                  vector unit's cycles, at that clock) stays within `compute_headroom` of its HBM
//                  time bound (bytes / bandwidth), on every chip of the replica; among the settings
//                  that do, the one of least predicted core energy (dynamic energy x (V/V0)^2 plus
//                  the powered arrays' static power over the memory time). A step that no setting
//                  fits (compute-bound) runs at the nominal clock with every array (`fallbacks`).
//                  `dvfs_point` or `active_arrays`, when given, fix that half of the choice (a step
//                  that does not fit at it still falls back to the nominal setting; `uniform`
//                  forces a setting).
//                  A change of setting costs energy (the chips' idle power over the transition's
//                  stall, and the wake energy): the current setting, when it still fits, is kept
//                  unless another saves more than the change costs.
// Changing the setting costs what the chip type's `power.transitions` say: `clock_switch` when the
// DVFS point changes, `wake` (and `wake_energy` per array) when arrays are powered back on; the core
// does nothing meanwhile (the step starts after the longer of the two) and the chip's power model
// books the time as its `transition` state. Powering arrays off is immediate.
//
// PhaseController (runtime/PhaseController.h) applies these choices to a replica's chips.
//
// The timing of a step never comes from this prediction: the chosen clock and array count are
// applied to the chip (its core clock domain and TensorCore::setActiveArrays) and the step then
// takes what the modules take.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/chip/ChipConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {

/// The phase a step runs under.
enum class StepPhase { kPrefill, kDecode };
inline constexpr std::size_t kStepPhases = 2;
const char* stepPhaseName(StepPhase phase);

/// A core operating state: DVFS point (0: nominal) and powered tensor arrays.
struct PhaseSetting {
  std::size_t point = 0;
  int arrays = 0;
  bool fallback = false;  ///< bandwidth_opt found no setting that fits: nominal, all arrays

  bool operator==(const PhaseSetting& o) const { return point == o.point && arrays == o.arrays; }
  bool operator!=(const PhaseSetting& o) const { return !(*this == o); }
};

/// The chip type's core operating points (chip power.dvfs; one nominal point when it has none).
struct CorePoints {
  std::vector<double> frequencyScale;  ///< f / f nominal, highest first
  std::vector<double> voltageScale;    ///< V / V nominal
  static CorePoints of(const hw::ChipConfig& chip);
};

/// Predicted core time of `plan` on `chip` at `setting`: every GEMM's TensorCoreConfig::gemmCycles with
/// `setting.arrays` arrays and every op's VectorUnitConfig::cycles, at the point's clock. Weight
/// conversions (PlannedOp::convertOps) run beside the loads, not after the GEMMs: they count in the
/// vector unit's time, which the core time is at least.
double predictedCoreS(const hw::ChipConfig& chip, const CorePoints& points, const StepPlan& plan,
                      const PhaseSetting& setting);

/// The setting `policy` runs a step with `plans` (one per simulated chip, all of type `chip`) at.
/// `current`: the setting the chips run at now; bandwidth_opt keeps it (when it fits) unless
/// another setting's predicted saving pays for the change (null: no change cost).
PhaseSetting choosePhaseSetting(const PhasePolicyConfig& policy, const hw::ChipConfig& chip,
                                const std::vector<const StepPlan*>& plans, const PhaseSetting* current = nullptr);

/// Per phase: what a replica's steps under its policy did.
struct PhaseTotals {
  uint64_t steps = 0;
  double stepS = 0.0;               ///< summed step times (transitions excluded)
  double transitionS = 0.0;         ///< summed stalls for changing into this phase's setting
  uint64_t transitions = 0;         ///< changes of setting (clock or arrays) made for its steps
  uint64_t clockSwitches = 0;       ///< of them, changes of DVFS point
  uint64_t wakes = 0;               ///< of them, arrays powered back on
  uint64_t fallbacks = 0;           ///< bandwidth_opt steps that no lowered setting fitted
  double arrayS = 0.0;              ///< active arrays x step time (time-weighted mean = arrayS / stepS)
  double frequencyS = 0.0;          ///< core Hz x step time
  std::vector<double> timeAtPoint;  ///< step time at each DVFS point (empty under a governor)
  double chipS = 0.0;               ///< step time x chips of the replica
  double flops = 0.0;               ///< all the replica's chips
  double bytes = 0.0;
  uint64_t tokens = 0;      ///< tokens the steps fed (prompt and decode tokens)
  double peakFlopS = 0.0;   ///< nominal peak FLOP/s of the replica's chips (at the steps' precision) x step time
  double peakBytesS = 0.0;  ///< HBM bandwidth of the replica's chips x step time

  /// Adds another replica's totals (time at each point by index: one chip type).
  PhaseTotals& operator+=(const PhaseTotals& o);
};

/// One change of setting, for the report's list.
struct PhaseTransition {
  double startS = 0.0;
  double stallS = 0.0;
  int replica = 0;
  StepPhase phase = StepPhase::kDecode;
  PhaseSetting from, to;
};

}  // namespace scoville::workload
