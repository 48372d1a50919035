#include "runtime/KernelRunner.h"

#include <utility>

namespace scoville::runtime {

KernelRunner::KernelRunner(const sc_core::sc_module_name& name, platform::Platform& platform, int chip,
                           std::vector<StepPlan> plans, tlm::TimingMode mode, const SoftwareStackConfig* stack)
    : sc_core::sc_module(name),
      m_platform(platform),
      m_chip(chip),
      m_driver("driver", platform.chip(chip).config(), mode) {
  for (StepPlan& p : plans) m_plans.push_back(std::make_shared<const StepPlan>(std::move(p)));
  m_driver.loadPort.socket.bind(platform.chip(chip).socket());
  m_driver.computePort.socket.bind(platform.chip(chip).socket());
  m_driver.setStack(stack);
  SC_HAS_PROCESS(KernelRunner);
  SC_THREAD(run);
}

void KernelRunner::limitPower(double capW, SustainedPower power) {
  m_capW = capW;
  m_power = std::move(power);
}

bool KernelRunner::runOnce(std::size_t i, Outcome& o) {
  const power::ChipPower* power = m_platform.power().chip(static_cast<std::size_t>(m_chip));
  const auto counts = [power] { return power != nullptr ? power->counts() : power::Counts{}; };
  o.startS = sc_core::sc_time_stamp().to_seconds();
  const power::Counts countedBefore = counts();
  m_driver.post(m_plans[i]);
  wait(m_driver.stepDone());
  if (!m_driver.error().empty()) return false;
  m_platform.chip(m_chip).powerManager().settle(sc_core::sc_time_stamp().to_seconds());  // its clocked time
  o.endS = sc_core::sc_time_stamp().to_seconds();
  const power::Counts countedAfter = counts();
  for (std::size_t c = 0; c < power::kCounters; ++c) o.counts[c] = countedAfter[c] - countedBefore[c];
  return true;
}

std::optional<power::SustainedLoad> KernelRunner::sustain(std::size_t i, const Outcome& nominal) {
  hw::PowerManager& manager = m_platform.chip(m_chip).powerManager();
  const hw::ChipConfig& chip = m_platform.chip(m_chip).config();
  const std::size_t points = chip.power ? chip.power->dvfs.size() : 0;
  std::vector<power::PointRun> runs{{1.0, nominal.seconds(), m_power(nominal.counts, 0, nominal.seconds())}};
  for (std::size_t k = 1; k < points && runs.back().powerW > m_capW; ++k) {
    manager.setOperatingPoint(sc_core::sc_time_stamp().to_seconds(), k);
    Outcome at;
    const bool ok = runOnce(i, at);
    manager.setOperatingPoint(sc_core::sc_time_stamp().to_seconds(), 0);
    if (!ok) return std::nullopt;
    runs.push_back(
        power::PointRun{chip.power->frequencyScaleAt(k), at.seconds(), m_power(nominal.counts, k, at.seconds())});
  }
  return power::sustainedUnderCap(runs, m_capW);
}

void KernelRunner::run() {
  for (std::size_t i = 0; i < m_plans.size(); ++i) {
    Outcome o;
    if (!runOnce(i, o)) return;
    if (m_power) {
      o.sustained = sustain(i, o);
      if (!o.sustained) return;
    }
    m_outcomes.push_back(o);
  }
}

}  // namespace scoville::runtime
