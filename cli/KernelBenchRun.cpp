#include "cli/KernelBenchRun.h"

#include <fmt/format.h>

#include "cli/Commands.h"
#include "workloads/Roofline.h"

namespace scoville::cli {

KernelBenchRun::KernelBenchRun(const workload::KernelDataset& dataset, const platform::PlatformConfig& config,
                               const workload::SoftwareStackConfig* stack, tlm::TimingMode mode,
                               const std::set<std::string>& selected, bool withPowerLoads) {
  const hw::ChipConfig& chip = config.chipConfig(0);
  if (dataset.sustainedTiming && config.power.governor.kind != power::GovernorKind::kNone) {
    // The limiter's steady state is computed from runs at fixed points; a governor would move them.
    throw config::ConfigError(config::ErrorKind::kInvalidConfig, "platform.power.governor",
                              fmt::format("dataset '{}' was timed back to back (timing_load: sustained), which "
                                          "`kernels` simulates under the chip's rated-power limiter in its steady "
                                          "state; run it on a platform without a governor (impl none)",
                                          dataset.name));
  }
  const std::set<std::string> powerLoads = withPowerLoads ? powerKernels(dataset) : std::set<std::string>{};
  std::vector<workload::StepPlan> plans;
  for (std::size_t i = 0; i < dataset.kernels.size(); ++i) {
    const workload::MeasuredKernel& k = dataset.kernels[i];
    const bool compared = k.exclude.empty() && (selected.empty() || selected.count(k.id) > 0);
    if (!compared && powerLoads.count(k.id) == 0) continue;
    plans.push_back(workload::planKernel(k, chip, dataset.attentionKernel,
                                         stack != nullptr ? stack->moeKernelFor(k.precision) : nullptr));
    m_rooflines.push_back(workload::rooflineBoundS(plans.back(), chip));
    m_classes.push_back(workload::kernelClass(k, plans.back(), chip));
    m_index[k.id] = m_planned.size();
    m_planned.push_back(i);
  }
  // One elaboration: the platform and a driver on its first chip run the kernels back to back.
  m_platform = std::make_unique<platform::Platform>("platform", config);
  m_runner = std::make_unique<runtime::KernelRunner>("kernels", *m_platform, 0, std::move(plans), mode, stack);
  if (dataset.sustainedTiming && chip.power && chip.power->dvfs.size() >= 2) {
    // Timed back to back, as the dataset was: the board's limiter holds the chip's rating.
    const power::ChipEnergyConfig& energy = *chip.power;
    m_runner->limitPower(chip.ratedPowerW,
                         [this, &energy](const power::Counts& perLaunch, std::size_t point, double launchS) {
                           workload::PowerLoad load;
                           load.kernel = "sustained";
                           load.launchS = launchS;
                           load.perLaunch = perLaunch;
                           load.voltageScale = energy.voltageScaleAt(point);
                           load.frequencyScale = energy.frequencyScaleAt(point);
                           return workload::loadPowerW(energy, refreshPerS(), load);
                         });
  }
  sc_core::sc_start();
  if (!m_runner->error().empty()) throw SimulationError(m_runner->error());
  if (!m_runner->finished()) throw SimulationError("the kernels did not finish (simulation starved)");
}

const runtime::KernelRunner::Outcome* KernelBenchRun::outcome(const std::string& id) const {
  const auto it = m_index.find(id);
  return it == m_index.end() ? nullptr : &m_runner->outcomes()[it->second];
}

std::set<std::string> KernelBenchRun::powerKernels(const workload::KernelDataset& dataset) {
  std::set<std::string> kernels;
  for (const workload::MeasuredPower& p : dataset.power) {
    if (!p.kernel.empty()) kernels.insert(p.kernel);
  }
  return kernels;
}

double KernelBenchRun::refreshPerS() const {
  const hw::MemoryControllerConfig& hbm = chip().hbm;
  return hbm.timing.tREFI > 0.0 ? hbm.channels / hbm.timing.tREFI : 0.0;
}

std::vector<workload::PowerLoad> KernelBenchRun::powerLoads(const workload::KernelDataset& dataset) const {
  std::vector<workload::PowerLoad> loads;
  const power::ChipEnergyConfig* energy = chip().power ? &*chip().power : nullptr;
  for (const workload::MeasuredPower& p : dataset.power) {
    workload::PowerLoad load;
    load.id = p.id;
    load.kernel = p.kernel;
    load.measuredW = p.watts;
    load.duty = p.duty;
    if (energy != nullptr) {
      const workload::OperatingPoint point = workload::operatingPointOf(*energy, p.smClockHz, dataset.nominalSmClockHz);
      load.voltageScale = point.voltageScale;
      load.frequencyScale = point.frequencyScale;
    }
    if (!p.kernel.empty()) {
      const runtime::KernelRunner::Outcome* o = outcome(p.kernel);
      if (o == nullptr) throw SimulationError(fmt::format("power point '{}': kernel '{}' did not run", p.id, p.kernel));
      const workload::MeasuredKernel& kernel = dataset.kernels[m_planned[m_index.at(p.kernel)]];
      load.launchS = p.launchTimeS > 0.0 ? p.launchTimeS : kernel.seconds;
      load.simulatedLaunchS = o->seconds();
      load.perLaunch = o->counts;
    }
    loads.push_back(load);
  }
  return loads;
}

}  // namespace scoville::cli
