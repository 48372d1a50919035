#pragma once
// Running a kernel microbenchmark dataset (workloads/KernelBench.h) on the first chip of a platform,
// in this process's one elaboration: what `scoville kernels` and `scoville calibrate-power` share.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/Inputs.h"
#include "platforms/Platform.h"
#include "runtime/KernelRunner.h"
#include "workloads/KernelBench.h"
#include "workloads/PowerCalibration.h"

namespace scoville::cli {

/// A dataset's kernels, run.
class KernelBenchRun {
 public:
  /// Plans the kernels of `dataset` that are compared (not excluded, and in `selected` unless it is
  /// empty) and, when `withPowerLoads`, those the power points load; elaborates `config`'s platform
  /// and runs them back to back on chip 0 (sc_start). Throws SimulationError when the run fails.
  KernelBenchRun(const workload::KernelDataset& dataset, const platform::PlatformConfig& config,
                 const workload::SoftwareStackConfig* stack, tlm::TimingMode mode,
                 const std::set<std::string>& selected, bool withPowerLoads);

  const hw::ChipConfig& chip() const { return m_platform->config().chipConfig(0); }
  platform::Platform& platform() { return *m_platform; }
  /// Planned kernels: the dataset index, the roofline and the class of each, in run order.
  std::size_t planned() const { return m_planned.size(); }
  /// The outcome of the kernel `id` (null: not run).
  const runtime::KernelRunner::Outcome* outcome(const std::string& id) const;
  double rooflineS(const std::string& id) const { return m_rooflines.at(m_index.at(id)); }
  const std::string& kernelClass(const std::string& id) const { return m_classes.at(m_index.at(id)); }

  /// The kernels the dataset's power points load.
  static std::set<std::string> powerKernels(const workload::KernelDataset& dataset);
  /// The dataset's power points as the chip ran them (PowerCalibration.h).
  std::vector<workload::PowerLoad> powerLoads(const workload::KernelDataset& dataset) const;
  /// All-bank refreshes per second of the chip's HBM (every channel every t_refi).
  double refreshPerS() const;

 private:
  std::unique_ptr<platform::Platform> m_platform;
  std::unique_ptr<runtime::KernelRunner> m_runner;
  std::vector<std::size_t> m_planned;
  std::vector<double> m_rooflines;
  std::vector<std::string> m_classes;
  std::map<std::string, std::size_t> m_index;  ///< kernel id -> run order
};

}  // namespace scoville::cli
