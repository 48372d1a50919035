// `scoville kernels DATASET.yaml`: runs every kernel of a microbenchmark dataset (KernelBench.h)
// on the first chip of a platform, one after another in one elaboration, and compares each
// simulated time with the measured one, and the chip's power under each measured sustained load
// with the board's. Prints the table, per class the MAPE and the overhead + efficiency line
// through the points, and writes kernels.json. Format: docs/validation.md#kernel-microbenchmarks.
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <systemc>

#include "cli/Commands.h"
#include "cli/Inputs.h"
#include "cli/KernelBenchRun.h"
#include "cli/ReportWriter.h"
#include "config/Loader.h"
#include "platforms/Platform.h"
#include "runtime/KernelRunner.h"
#include "workloads/KernelBench.h"
#include "workloads/PowerCalibration.h"
#include "workloads/SoftwareStack.h"

namespace scoville::cli {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using Json = nlohmann::ordered_json;

namespace {

std::string formatTime(double s) {
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

}  // namespace

int kernelsCommand(const Args& args, std::ostream& out) {
  std::string datasetFile, outDir, only, stackName, timing = "lt";
  bool quiet = false;
  InputOptions inputs;
  inputs.platform.clear();
  po::options_description description(
      "scoville kernels: run a kernel microbenchmark dataset on a platform's chip and compare with its measurements");
  description.add_options()("help,h", "show this help")("out,o", po::value(&outDir),
                                                        "results directory for kernels.json (default kernels-NAME)")(
      "only", po::value(&only), "comma-separated kernel ids to run (power is then not compared)")(
      "software-stack", po::value(&stackName),
      "software-stack profile (workloads/stacks/ name or file) applied as in serving runs (default: none)")(
      "timing", po::value(&timing)->default_value(timing), "timing mode: lt or at")("quiet,q", po::bool_switch(&quiet),
                                                                                    "print only the summaries");
  addInputOptions(description, inputs, false);
  const po::variables_map vm = parseWithPositional(args, description, datasetFile);
  if (datasetFile.empty() && !vm.count("help")) {
    throw po::error("give a DATASET (a workloads/validation/ name or a file)");
  }
  if (vm.count("help")) {
    out << "usage: scoville kernels DATASET.yaml [--platform P] [--software-stack S] [--out DIR] [--only ID,...]\n"
        << "Datasets ship in workloads/validation/ (docs/validation.md#kernel-microbenchmarks); the platform "
           "defaults to the dataset's.\n"
        << description << "\n";
    return kExitOk;
  }
  const tlm::TimingMode mode = parseTimingMode(timing);
  const std::string file = config::resolveConfigFile("kernel dataset", "DATASET", "workloads/validation", datasetFile);
  const workload::KernelDataset dataset = workload::loadKernelDataset(file);
  if (inputs.platform.empty()) inputs.platform = dataset.platform;
  const Inputs loaded = loadInputs(inputs, false);
  std::optional<workload::SoftwareStackConfig> stack;
  if (!stackName.empty()) stack = loadSoftwareStack("--software-stack", stackName);
  std::vector<std::string> ids;
  for (const workload::MeasuredKernel& k : dataset.kernels) ids.push_back(k.id);
  if (vm.count("only") && only.empty()) {
    throw config::ConfigError(config::ErrorKind::kBadOverride, "--only",
                              "an empty list (to run everything, leave --only out)");
  }
  const std::set<std::string> selected = selectedIds(only, ids, "kernel", file);
  if (outDir.empty()) outDir = "kernels-" + dataset.name;
  prepareOutputDirectory(outDir);

  KernelBenchRun bench(dataset, loaded.platform, stack ? &*stack : nullptr, mode, selected, selected.empty());
  const hw::ChipConfig& chip = bench.chip();
  if (!quiet) {
    out << fmt::format("dataset {} ({}, {}), platform {} chip type {}, software stack {}: {} kernels\n", dataset.name,
                       dataset.hardware, dataset.date, loaded.platform.name, chip.name, stack ? stack->name : "none",
                       bench.planned());
  }

  // Kernel times; with a timing fit, each compared kernel trains it or is predicted.
  const std::set<std::string> training =
      dataset.timingFit ? std::set<std::string>(dataset.timingFit->training.begin(), dataset.timingFit->training.end())
                        : std::set<std::string>{};
  const auto roleOf = [&](const std::string& id) -> std::string {
    if (!dataset.timingFit) return "";
    return training.count(id) > 0 ? "training" : "predicted";
  };
  std::vector<workload::KernelComparison> comparisons, predicted;
  std::vector<double> trainingMeasured, trainingSimulated;
  Json kernels = Json::array();
  if (!quiet) {
    out << fmt::format("\n{:<34} {:<18} {:>11} {:>11} {:>11} {:>8} {:>9} {:>6}  {}\n", "kernel", "class", "measured",
                       "simulated", "roofline", "error", "meas/roof", "clock", dataset.timingFit ? "role" : "");
  }
  for (const workload::MeasuredKernel& k : dataset.kernels) {
    const runtime::KernelRunner::Outcome* o = bench.outcome(k.id);
    Json entry = {{"id", k.id}, {"kind", workload::kernelKindName(k.kind)}};
    entry["class"] = o != nullptr ? Json(bench.kernelClass(k.id)) : Json(nullptr);
    entry["measured_s"] = k.seconds;
    const bool compared = k.exclude.empty() && (selected.empty() || selected.count(k.id) > 0);
    if (!compared) {
      entry["status"] = k.exclude.empty() ? "not_selected" : "excluded";
      entry["reason"] = k.exclude.empty() ? "not in --only" : k.exclude;
      if (!quiet && !k.exclude.empty()) out << fmt::format("{:<34} excluded: {}\n", k.id, k.exclude);
      kernels.push_back(entry);
      continue;
    }
    const double roofline = bench.rooflineS(k.id);
    // Timed back to back (timing_load sustained): the time under the chip's power limiter.
    const double simulated = o->sustained ? o->sustained->launchS : o->seconds();
    const double clock = o->sustained ? o->sustained->frequencyScale : 1.0;
    const workload::KernelComparison c{
        k.id, bench.kernelClass(k.id), k.seconds, simulated, roofline, (simulated - k.seconds) / k.seconds * 100.0};
    comparisons.push_back(c);
    const std::string role = roleOf(k.id);
    if (role == "training") {
      if (o->sustained && o->sustained->limited) {
        throw config::ConfigError(config::ErrorKind::kInvalidConfig, "timing_fit.training",
                                  fmt::format("training kernel '{}' runs power-limited: the launch gap is fitted on "
                                              "kernels at the nominal clock, whose time moves one for one with it",
                                              k.id));
      }
      trainingMeasured.push_back(c.measuredS);
      trainingSimulated.push_back(c.simulatedS);
    } else if (role == "predicted") {
      predicted.push_back(c);
    }
    entry["status"] = "compared";
    if (!role.empty()) entry["role"] = role;
    entry["simulated_s"] = c.simulatedS;
    entry["roofline_s"] = c.rooflineS;
    entry["error_percent"] = c.errorPercent;
    entry["measured_fraction_of_roofline"] = c.rooflineS / c.measuredS;
    entry["simulated_fraction_of_roofline"] = c.rooflineS / c.simulatedS;
    entry["simulated_nominal_s"] = o->seconds();
    entry["clock_scale"] = clock;
    entry["sustained_power_w"] = o->sustained ? Json(o->sustained->powerW) : Json(nullptr);
    entry["power_limited"] = o->sustained && o->sustained->limited;
    kernels.push_back(entry);
    if (!quiet) {
      out << fmt::format("{:<34} {:<18} {:>11} {:>11} {:>11} {:>+7.1f}% {:>9.2f} {:>6.3f}  {}\n", k.id, c.cls,
                         formatTime(c.measuredS), formatTime(c.simulatedS), formatTime(c.rooflineS), c.errorPercent,
                         c.rooflineS / c.measuredS, clock, role);
    }
  }
  const auto summarize = [&out](const std::vector<workload::KernelComparison>& rows, const std::string& title) {
    Json summary = Json::object();
    out << fmt::format("\n{:<18} {:>6} {:>8} {:>10}  {:<34} {:>12} {:>10}\n", title, "points", "MAPE", "max |err|",
                       "worst kernel", "fit: fixed", "efficiency");
    for (const auto& [cls, s] : workload::summarizeKernels(rows)) {
      out << fmt::format("{:<18} {:>6} {:>7.1f}% {:>9.1f}%  {:<34} {:>12} {:>10}\n", cls, s.error.points, s.error.mape,
                         s.error.maxAbsErrorPercent, s.error.worstPoint,
                         s.fitEfficiency > 0 ? formatTime(s.fitOverheadS) : "-",
                         s.fitEfficiency > 0 ? fmt::format("{:.3f}", s.fitEfficiency) : "-");
      summary[cls] = {{"points", s.error.points},
                      {"mape_percent", s.error.mape},
                      {"max_abs_error_percent", s.error.maxAbsErrorPercent},
                      {"worst_kernel", s.error.worstPoint},
                      {"fit_overhead_s", s.fitEfficiency > 0 ? Json(s.fitOverheadS) : Json(nullptr)},
                      {"fit_efficiency", s.fitEfficiency > 0 ? Json(s.fitEfficiency) : Json(nullptr)}};
    }
    return summary;
  };
  const Json summary = summarize(comparisons, "class");
  Json summaryPredicted = nullptr;
  Json timingFit = nullptr;
  if (dataset.timingFit) {
    summaryPredicted = summarize(predicted, "class (predicted)");
    // The launch gap the training kernels ask for (workloads/KernelBench.h), against the chip's.
    // A launch crosses the on-chip interconnect to the command processor and back.
    const double chipLaunchS = chip.commandProcessor.kernelLaunchS;
    const double hopsS = 2.0 * chip.interconnect.hopLatencyS;
    timingFit = {{"parameter", "command_processor.kernel_launch"},
                 {"fitted_s", nullptr},
                 {"chip_s", chipLaunchS},
                 {"chip_file_holds_fit", nullptr},
                 {"training", trainingMeasured.size()},
                 {"predicted", predicted.size()}};
    if (trainingMeasured.empty()) {
      out << "\ntiming fit: no training kernel ran (--only), so command_processor.kernel_launch is not fitted\n";
    } else {
      const double fitted = workload::fitKernelLaunchS(trainingMeasured, trainingSimulated,
                                                       chipLaunchS > 0.0 ? chipLaunchS + hopsS : 0.0, hopsS);
      const bool holds = std::fabs(fitted - chipLaunchS) <= 0.05e-6;
      out << fmt::format(
          "\ntiming fit: command_processor.kernel_launch = {} on {} training kernels (least squares of the relative "
          "error); the chip has {}{}\n",
          formatTime(fitted), trainingMeasured.size(), formatTime(chipLaunchS),
          holds ? "" : ": write the fitted value into the chip file");
      timingFit["fitted_s"] = fitted;
      timingFit["chip_file_holds_fit"] = holds;
    }
  }

  // Power under sustained loads, priced with the chip's energy model (workloads/PowerCalibration.h).
  Json power = Json::array();
  if (!dataset.power.empty() && selected.empty()) {
    if (!chip.power) {
      out << fmt::format("\npower: chip type '{}' has no power model; {} measurements not compared\n", chip.name,
                         dataset.power.size());
    } else {
      const std::vector<workload::PowerLoad> loads = bench.powerLoads(dataset);
      out << fmt::format("\n{:<38} {:<30} {:>10} {:>10} {:>8} {:>12} {:>8} {:>9}\n", "power", "load", "measured",
                         "simulated", "error", "at sim. rate", "error", "SM clock");
      std::vector<double> errors;
      for (std::size_t i = 0; i < loads.size(); ++i) {
        const workload::MeasuredPower& p = dataset.power[i];
        const workload::PowerLoad& load = loads[i];
        const double simulated = workload::loadPowerW(*chip.power, bench.refreshPerS(), load);
        const double atSimulatedRate =
            load.kernel.empty() ? simulated : workload::loadPowerW(*chip.power, bench.refreshPerS(), load, true);
        const double error = (simulated - p.watts) / p.watts * 100.0;
        const double errorAtSimulatedRate = (atSimulatedRate - p.watts) / p.watts * 100.0;
        errors.push_back(error);
        const std::string name = p.kernel.empty() ? "idle"
                                 : p.duty < 1     ? fmt::format("{} x {:.3f}", p.kernel, p.duty)
                                                  : p.kernel;
        out << fmt::format("{:<38} {:<30} {:>8.1f} W {:>8.1f} W {:>+7.1f}% {:>10.1f} W {:>+7.1f}% {:>9}\n", p.id, name,
                           p.watts, simulated, error, atSimulatedRate, errorAtSimulatedRate,
                           p.smClockHz > 0 ? fmt::format("{:.0f} MHz", p.smClockHz / 1e6) : "-");
        power.push_back({{"id", p.id},
                         {"kernel", p.kernel.empty() ? Json(nullptr) : Json(p.kernel)},
                         {"duty", p.duty},
                         {"measured_w", p.watts},
                         {"simulated_w", simulated},
                         {"error_percent", error},
                         {"simulated_at_simulated_rate_w", atSimulatedRate},
                         {"error_at_simulated_rate_percent", errorAtSimulatedRate},
                         {"launch_time_s", load.kernel.empty() ? Json(nullptr) : Json(load.launchS)},
                         {"simulated_launch_time_s", load.kernel.empty() ? Json(nullptr) : Json(load.simulatedLaunchS)},
                         {"sm_clock_hz", p.smClockHz > 0 ? Json(p.smClockHz) : Json(nullptr)},
                         {"voltage_scale", load.voltageScale},
                         {"note", p.note.empty() ? Json(nullptr) : Json(p.note)}});
      }
      out << fmt::format(
          "power MAPE {:.1f}% over {} points (simulated: the chip's static power at the point's voltage, HBM "
          "refresh, and one launch's energy at the measured launch rate and clock; rated {:.0f} W)\n",
          workload::meanAbsolutePercent(errors), errors.size(), chip.ratedPowerW);
    }
  }
  const Json result = {{"dataset", dataset.name},
                       {"file", file},
                       {"hardware", dataset.hardware},
                       {"date", dataset.date},
                       {"platform", loaded.platform.name},
                       {"chip_type", chip.name},
                       {"software_stack", stack ? Json(stack->name) : Json(nullptr)},
                       {"timing", timing},
                       {"summary", summary},
                       {"summary_predicted", summaryPredicted},
                       {"timing_fit", timingFit},
                       {"kernels", kernels},
                       {"power", power}};
  writeFileAtomically((fs::path(outDir) / "kernels.json").string(), result.dump(2) + "\n");
  out << "kernels: " << (fs::path(outDir) / "kernels.json").string() << "\n";
  return kExitOk;
}

}  // namespace scoville::cli
