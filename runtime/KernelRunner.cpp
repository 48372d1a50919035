#include "runtime/KernelRunner.h"

#include <utility>

namespace scoville::runtime {

KernelRunner::KernelRunner(const sc_core::sc_module_name& name, platform::Platform& platform, int chip,
                           std::vector<StepPlan> plans, tlm::TimingMode mode, const SoftwareStackConfig* stack)
    : sc_core::sc_module(name),
      m_platform(platform),
      m_chip(chip),
      m_driver("driver", platform.chip(chip).config().sram, mode) {
  for (StepPlan& p : plans) m_plans.push_back(std::make_shared<const StepPlan>(std::move(p)));
  m_driver.loadPort.socket.bind(platform.chip(chip).socket());
  m_driver.computePort.socket.bind(platform.chip(chip).socket());
  m_driver.setStack(stack);
  SC_HAS_PROCESS(KernelRunner);
  SC_THREAD(run);
}

void KernelRunner::run() {
  const power::ChipPower* power = m_platform.power().chip(static_cast<std::size_t>(m_chip));
  hw::PowerManager& manager = m_platform.chip(m_chip).powerManager();
  const auto counts = [power] { return power != nullptr ? power->counts() : power::Counts{}; };
  for (const std::shared_ptr<const StepPlan>& plan : m_plans) {
    Outcome o;
    o.startS = sc_core::sc_time_stamp().to_seconds();
    const power::Counts countedBefore = counts();
    m_driver.post(plan);
    wait(m_driver.stepDone());
    if (!m_driver.error().empty()) return;
    manager.settle(sc_core::sc_time_stamp().to_seconds());  // the kernel's clocked time, announced
    o.endS = sc_core::sc_time_stamp().to_seconds();
    const power::Counts countedAfter = counts();
    for (std::size_t c = 0; c < power::kCounters; ++c) o.counts[c] = countedAfter[c] - countedBefore[c];
    m_outcomes.push_back(o);
  }
}

}  // namespace scoville::runtime
