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
#include "cli/ReportWriter.h"
#include "platforms/Platform.h"
#include "tlm/config/Loader.h"
#include "workloads/KernelBench.h"
#include "workloads/KernelRunner.h"
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
  if (vm.count("help") || datasetFile.empty()) {
    out << "usage: scoville kernels DATASET.yaml [--platform P] [--software-stack S] [--out DIR] [--only ID,...]\n"
        << "Datasets ship in workloads/validation/ (docs/validation.md#kernel-microbenchmarks); the platform "
           "defaults to the dataset's.\n"
        << description << "\n";
    return datasetFile.empty() && !vm.count("help") ? kExitUsageOrConfigError : kExitOk;
  }
  const tlm::TimingMode mode = parseTimingMode(timing);
  const std::string file = config::resolveConfigFile("DATASET", "workloads/validation", datasetFile);
  const workload::KernelDataset dataset = workload::loadKernelDataset(file);
  if (inputs.platform.empty()) inputs.platform = dataset.platform;
  const Inputs loaded = loadInputs(inputs, false);
  std::optional<workload::SoftwareStackConfig> stack;
  if (!stackName.empty()) stack = loadSoftwareStack("--software-stack", stackName);
  std::vector<std::string> ids;
  for (const workload::MeasuredKernel& k : dataset.kernels) ids.push_back(k.id);
  const std::set<std::string> selected = selectedIds(only, ids, "kernel", file);
  if (outDir.empty()) outDir = "kernels-" + dataset.name;
  prepareOutputDirectory(outDir);

  // Plan every kernel that is compared or loads a power measurement.
  const hw::ChipConfig& chip = loaded.platform.chipConfig(0);
  std::set<std::string> powerLoads;
  for (const workload::MeasuredPower& p : dataset.power) {
    if (!p.kernel.empty()) powerLoads.insert(p.kernel);
  }
  std::vector<std::size_t> planned;  // dataset index of each plan
  std::vector<workload::StepPlan> plans;
  std::vector<double> rooflines;
  std::vector<std::string> classes;
  for (std::size_t i = 0; i < dataset.kernels.size(); ++i) {
    const workload::MeasuredKernel& k = dataset.kernels[i];
    const bool compared = k.exclude.empty() && (selected.empty() || selected.count(k.id) > 0);
    const bool loads = selected.empty() && powerLoads.count(k.id) > 0;
    if (!compared && !loads) continue;
    plans.push_back(workload::planKernel(k, chip));
    rooflines.push_back(workload::kernelRooflineS(plans.back(), chip));
    classes.push_back(workload::kernelClass(k, plans.back(), chip));
    planned.push_back(i);
  }
  if (!quiet) {
    out << fmt::format("dataset {} ({}, {}), platform {} chip type {}, software stack {}: {} kernels\n", dataset.name,
                       dataset.hardware, dataset.date, loaded.platform.name, chip.name, stack ? stack->name : "none",
                       plans.size());
  }

  // One elaboration: the platform and a driver on its first chip run the kernels back to back.
  platform::Platform platform("platform", loaded.platform);
  workload::KernelRunner runner("kernels", platform, 0, std::move(plans), mode, stack ? &*stack : nullptr);
  sc_core::sc_start();
  if (!runner.error().empty()) throw SimulationError(runner.error());
  if (!runner.finished()) throw SimulationError("the kernels did not finish (simulation starved)");

  // Kernel times.
  std::map<std::string, std::size_t> outcomeOf;  // kernel id -> index in runner.outcomes()
  for (std::size_t j = 0; j < planned.size(); ++j) outcomeOf[dataset.kernels[planned[j]].id] = j;
  std::vector<workload::KernelComparison> comparisons;
  Json kernels = Json::array();
  if (!quiet) {
    out << fmt::format("\n{:<34} {:<18} {:>11} {:>11} {:>11} {:>8} {:>9}\n", "kernel", "class", "measured", "simulated",
                       "roofline", "error", "meas/roof");
  }
  for (const workload::MeasuredKernel& k : dataset.kernels) {
    const auto found = outcomeOf.find(k.id);
    Json entry = {{"id", k.id}, {"kind", workload::kernelKindName(k.kind)}};
    entry["class"] = found != outcomeOf.end() ? Json(classes[found->second]) : Json(nullptr);
    entry["measured_s"] = k.seconds;
    const bool compared = k.exclude.empty() && (selected.empty() || selected.count(k.id) > 0);
    if (!compared) {
      entry["status"] = k.exclude.empty() ? "not_selected" : "excluded";
      entry["reason"] = k.exclude.empty() ? "not in --only" : k.exclude;
      if (!quiet && !k.exclude.empty()) out << fmt::format("{:<34} excluded: {}\n", k.id, k.exclude);
      kernels.push_back(entry);
      continue;
    }
    const workload::KernelRunner::Outcome& o = runner.outcomes()[found->second];
    const double roofline = rooflines[found->second];
    const workload::KernelComparison c{
        k.id, classes[found->second], k.seconds, o.seconds(), roofline, (o.seconds() - k.seconds) / k.seconds * 100.0};
    comparisons.push_back(c);
    entry["status"] = "compared";
    entry["simulated_s"] = c.simulatedS;
    entry["roofline_s"] = c.rooflineS;
    entry["error_percent"] = c.errorPercent;
    entry["measured_fraction_of_roofline"] = c.rooflineS / c.measuredS;
    entry["simulated_fraction_of_roofline"] = c.rooflineS / c.simulatedS;
    kernels.push_back(entry);
    if (!quiet) {
      out << fmt::format("{:<34} {:<18} {:>11} {:>11} {:>11} {:>+7.1f}% {:>9.2f}\n", k.id, c.cls,
                         formatTime(c.measuredS), formatTime(c.simulatedS), formatTime(c.rooflineS), c.errorPercent,
                         c.rooflineS / c.measuredS);
    }
  }
  Json summary = Json::object();
  out << fmt::format("\n{:<18} {:>6} {:>8} {:>10}  {:<34} {:>12} {:>10}\n", "class", "points", "MAPE", "max |err|",
                     "worst kernel", "fit: fixed", "efficiency");
  for (const auto& [cls, s] : workload::summarizeKernels(comparisons)) {
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

  // Power under sustained loads: the chip's static power plus its dynamic energy over one launch.
  Json power = Json::array();
  const power::ChipPower* chipPower = platform.power().chip(0);
  if (!dataset.power.empty() && selected.empty()) {
    if (chipPower == nullptr) {
      out << fmt::format("\npower: chip type '{}' has no power model; {} measurements not compared\n", chip.name,
                         dataset.power.size());
    } else {
      out << fmt::format("\n{:<34} {:<30} {:>10} {:>10} {:>8} {:>9}\n", "power", "load", "measured", "simulated",
                         "error", "SM clock");
      for (const workload::MeasuredPower& p : dataset.power) {
        double simulated = chipPower->idleW();
        std::string load = "idle";
        if (!p.kernel.empty()) {
          const workload::KernelRunner::Outcome& o = runner.outcomes()[outcomeOf.at(p.kernel)];
          simulated += p.duty * o.dynamicJ / o.seconds();
          load = p.duty < 1 ? fmt::format("{} x {:.2f}", p.kernel, p.duty) : p.kernel;
        }
        const double error = (simulated - p.watts) / p.watts * 100.0;
        out << fmt::format("{:<34} {:<30} {:>8.1f} W {:>8.1f} W {:>+7.1f}% {:>9}\n", p.id, load, p.watts, simulated,
                           error, p.smClockHz > 0 ? fmt::format("{:.0f} MHz", p.smClockHz / 1e6) : "-");
        power.push_back({{"id", p.id},
                         {"kernel", p.kernel.empty() ? Json(nullptr) : Json(p.kernel)},
                         {"duty", p.duty},
                         {"measured_w", p.watts},
                         {"simulated_w", simulated},
                         {"error_percent", error},
                         {"sm_clock_hz", p.smClockHz > 0 ? Json(p.smClockHz) : Json(nullptr)},
                         {"note", p.note.empty() ? Json(nullptr) : Json(p.note)}});
      }
      out << fmt::format(
          "(simulated: the chip's static {:.1f} W plus its dynamic energy over one launch of the load, times its duty; "
          "rated {:.0f} W)\n",
          chipPower->idleW(), chip.ratedPowerW);
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
                       {"kernels", kernels},
                       {"power", power}};
  writeFileAtomically((fs::path(outDir) / "kernels.json").string(), result.dump(2) + "\n");
  out << "kernels: " << (fs::path(outDir) / "kernels.json").string() << "\n";
  return kExitOk;
}

}  // namespace scoville::cli
