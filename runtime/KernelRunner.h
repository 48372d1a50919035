#pragma once
// Runs kernel plans (KernelBench.h) one after another on one chip of an elaborated platform, and
// records each one's simulated time and what the chip's power model counted over it.
// One StepDriver issues them, as it issues a serving step: the time comes from the chip's modules
// alone.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "platforms/Platform.h"
#include "power/PowerLimit.h"
#include "runtime/StepDriver.h"
#include "tlm/TimingMode.h"
#include "workloads/SoftwareStack.h"
#include "workloads/StepPlan.h"

namespace scoville::runtime {

using workload::SoftwareStackConfig;
using workload::StepPlan;

class KernelRunner : public sc_core::sc_module {
 public:
  struct Outcome {
    double startS = 0.0;
    double endS = 0.0;
    power::Counts counts{};  ///< what the chip's power model counted over it (0 without a power model)
    /// Under limitPower(): the limiter's steady state for the kernel launched back to back, from
    /// its runs at the points down to the first under the cap (the nominal run alone when that is).
    std::optional<power::SustainedLoad> sustained;
    double seconds() const { return endS - startS; }
  };

  /// Prices back-to-back launches of a kernel that counted `perLaunch` at the nominal point, run at
  /// DVFS point `point` with `launchS` per launch: the sustained power (W).
  using SustainedPower = std::function<double(const power::Counts& perLaunch, std::size_t point, double launchS)>;

  /// Binds a driver to chip `chip` of `platform` (before sc_start()); `stack` (null: none) as in
  /// serving runs.
  KernelRunner(const sc_core::sc_module_name& name, platform::Platform& platform, int chip, std::vector<StepPlan> plans,
               tlm::TimingMode mode, const SoftwareStackConfig* stack);

  /// Times each plan also under a power limiter holding `capW` (power/PowerLimit.h): after its run
  /// at the nominal point, a plan whose sustained power is above the cap runs again at each lower
  /// DVFS point of the chip until one is under it; the chip is back at nominal for the next plan.
  /// Before sc_start().
  void limitPower(double capW, SustainedPower power);

  /// One per plan, in order, once finished().
  const std::vector<Outcome>& outcomes() const { return m_outcomes; }
  bool finished() const { return m_outcomes.size() == m_plans.size(); }
  /// Non-empty when a target answered with an error response.
  const std::string& error() const { return m_driver.error(); }

 private:
  void run();
  /// Runs plan `i` once from now; false on an error.
  bool runOnce(std::size_t i, Outcome& o);
  /// The limiter's steady state for plan `i`, whose nominal run is `nominal`.
  std::optional<power::SustainedLoad> sustain(std::size_t i, const Outcome& nominal);

  platform::Platform& m_platform;
  int m_chip;
  std::vector<std::shared_ptr<const StepPlan>> m_plans;
  StepDriver m_driver;
  std::vector<Outcome> m_outcomes;
  double m_capW = 0.0;
  SustainedPower m_power;  ///< empty: no limiter
};

}  // namespace scoville::runtime
