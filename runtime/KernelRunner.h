#pragma once
// Runs kernel plans (KernelBench.h) one after another on one chip of an elaborated platform, and
// records each one's simulated time and what the chip's power model counted over it.
// One StepDriver issues them, as it issues a serving step: the time comes from the chip's modules
// alone.

#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "platforms/Platform.h"
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
    double seconds() const { return endS - startS; }
  };

  /// Binds a driver to chip `chip` of `platform` (before sc_start()); `stack` (null: none) as in
  /// serving runs.
  KernelRunner(const sc_core::sc_module_name& name, platform::Platform& platform, int chip, std::vector<StepPlan> plans,
               tlm::TimingMode mode, const SoftwareStackConfig* stack);

  /// One per plan, in order, once finished().
  const std::vector<Outcome>& outcomes() const { return m_outcomes; }
  bool finished() const { return m_outcomes.size() == m_plans.size(); }
  /// Non-empty when a target answered with an error response.
  const std::string& error() const { return m_driver.error(); }

 private:
  void run();

  platform::Platform& m_platform;
  int m_chip;
  std::vector<std::shared_ptr<const StepPlan>> m_plans;
  StepDriver m_driver;
  std::vector<Outcome> m_outcomes;
};

}  // namespace scoville::runtime
