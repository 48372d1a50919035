// `scoville calibrate-power DATASET.yaml`: fits the energy constants a kernel dataset's `power_fit`
// names, on the power points it names for training, for the platform's first chip type; prints the
// fitted constants, the training and the predicted points apart, and whether the chip type's file
// holds the fitted values; writes calibrate-power.json and a measured-against-simulated plot.
// docs/power.md#calibration.
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/Commands.h"
#include "cli/Inputs.h"
#include "cli/KernelBenchRun.h"
#include "cli/ReportWriter.h"
#include "cli/Sweep.h"
#include "config/ConfigError.h"
#include "config/Loader.h"
#include "power/EnergyKeys.h"
#include "workloads/PowerCalibration.h"

namespace scoville::cli {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using Json = nlohmann::ordered_json;

namespace {

constexpr const char* kPlotScript = "scripts/power_calibration_plot.py";

/// A value as a chip file writes it: per-byte energies in pJ/bit, wire energy in pJ/bit/mm.
std::string asWritten(double value, config::Dimension d) {
  namespace dim = config::dim;
  if (d == dim::kEnergyPerByte) return fmt::format("{:.4g} pJ/bit", value * 1e12 / 8.0);
  if (d == dim::kEnergyPerByteLength) return fmt::format("{:.4g} pJ/bit/mm", value * 1e12 / 8.0 * 1e-3);
  if (d == dim::kEnergyPerFlop) return fmt::format("{:.4g} pJ/FLOP", value * 1e12);
  if (d == dim::kEnergy) return fmt::format("{:.4g} pJ", value * 1e12);
  return config::formatQuantity(value, d);
}

/// Whether a chip file's value is the fitted one (within 0.5%).
bool holdsValue(double inFile, double fitted) {
  return std::fabs(inFile - fitted) <= 5e-3 * std::max(std::fabs(fitted), 1e-300);
}

double valueIn(const power::ChipEnergyConfig& energy, const std::string& key) {
  power::ChipEnergyConfig copy = energy;
  const power::EnergyKey* k = power::findEnergyKey(key);
  const double* v = k != nullptr ? k->value(copy) : nullptr;
  return v != nullptr ? *v : 0.0;
}

}  // namespace

int calibratePowerCommand(const Args& args, std::ostream& out) {
  std::string datasetFile, outDir, timing = "lt";
  bool quiet = false, noPlot = false;
  InputOptions inputs;
  inputs.platform.clear();
  po::options_description description(
      "scoville calibrate-power: fit a chip type's energy constants on a kernel dataset's measured power");
  description.add_options()("help,h", "show this help")(
      "out,o", po::value(&outDir),
      "results directory (default calibrate-power-NAME): calibrate-power.json, "
      "power-calibration.png")("no-plot", po::bool_switch(&noPlot),
                               "skip the plot (it needs Debian's python3-matplotlib)")(
      "timing", po::value(&timing)->default_value(timing), "timing mode: lt or at")("quiet,q", po::bool_switch(&quiet),
                                                                                    "print only the summary");
  addInputOptions(description, inputs, false);
  const po::variables_map vm = parseWithPositional(args, description, datasetFile);
  if (datasetFile.empty() && !vm.count("help")) {
    throw po::error("give a DATASET (a workloads/validation/ name or a file)");
  }
  if (vm.count("help")) {
    out << "usage: scoville calibrate-power DATASET.yaml [--platform P] [--out DIR]\n"
        << "The dataset's `power_fit` names the training points and the fitted constants with their ranges "
           "(docs/power.md#calibration); the platform defaults to the dataset's.\n"
        << description << "\n";
    return kExitOk;
  }
  const tlm::TimingMode mode = parseTimingMode(timing);
  const std::string file = config::resolveConfigFile("dataset", "DATASET", "workloads/validation", datasetFile);
  const workload::KernelDataset dataset = workload::loadKernelDataset(file);
  if (!dataset.powerFit) {
    throw config::ConfigError(
        config::ErrorKind::kMissingKey, file,
        fmt::format("dataset '{}' has no `power_fit` section: nothing to calibrate", dataset.name));
  }
  if (inputs.platform.empty()) inputs.platform = dataset.platform;
  const Inputs loaded = loadInputs(inputs, false);
  const hw::ChipConfig& chipConfig = loaded.platform.chipConfig(0);
  if (!chipConfig.power) {
    throw config::ConfigError(config::ErrorKind::kInvalidConfig, inputs.platform,
                              fmt::format("chip type '{}' has no `power` section to calibrate", chipConfig.name));
  }
  for (const workload::PowerFitParameter& p : dataset.powerFit->parameters) {
    power::ChipEnergyConfig copy = *chipConfig.power;
    if (power::findEnergyKey(p.key)->value(copy) == nullptr) {
      throw config::ConfigError(
          config::ErrorKind::kInvalidConfig, file,
          fmt::format("power_fit fits '{}', which chip type '{}' does not have", p.key, chipConfig.name));
    }
  }
  if (outDir.empty()) outDir = "calibrate-power-" + dataset.name;
  prepareOutputDirectory(outDir);

  // Only the kernels the power points load.
  KernelBenchRun bench(dataset, loaded.platform, nullptr, mode, KernelBenchRun::powerKernels(dataset), true);
  const std::vector<workload::PowerLoad> loads = bench.powerLoads(dataset);
  const power::ChipEnergyConfig& shipped = *chipConfig.power;
  const workload::PowerFitResult fit = workload::fitPower(shipped, bench.refreshPerS(), loads, *dataset.powerFit);

  out << fmt::format("calibrate-power: dataset {} ({}), chip type {} of platform {}: {} power points, {} training\n",
                     dataset.name, dataset.hardware, chipConfig.name, loaded.platform.name, loads.size(),
                     dataset.powerFit->training.size());
  // The constants.
  Json parameters = Json::array();
  bool holds = true;
  if (!quiet) out << fmt::format("\n{:<34} {:>16} {:>34}  {}\n", "fitted constant", "value", "range", "chip file");
  for (const workload::PowerFitResult::Parameter& p : fit.parameters) {
    const config::Dimension d = power::findEnergyKey(p.key)->dimension;
    const double inFile = valueIn(shipped, p.key);
    const bool same = holdsValue(inFile, p.value);
    holds = holds && same;
    const std::string bound = p.atLower ? " (at its lower end)" : p.atUpper ? " (at its upper end)" : "";
    if (!quiet) {
      out << fmt::format("{:<34} {:>16} {:>34}  {}{}\n", p.key, asWritten(p.value, d),
                         fmt::format("[{}, {}]", asWritten(p.min, d), asWritten(p.max, d)),
                         same ? "holds it" : "has " + asWritten(inFile, d), bound);
    }
    parameters.push_back({{"key", p.key},
                          {"value", p.value},
                          {"as_written", asWritten(p.value, d)},
                          {"unit", config::siUnit(d)},
                          {"min", p.min},
                          {"max", p.max},
                          {"at_lower_bound", p.atLower},
                          {"at_upper_bound", p.atUpper},
                          {"chip_file_value", inFile},
                          {"source", p.source}});
  }
  Json tied = Json::array();
  for (const workload::PowerFitResult::Tied& t : fit.tied) {
    const config::Dimension d = power::findEnergyKey(t.key)->dimension;
    const double inFile = valueIn(shipped, t.key);
    const bool same = holdsValue(inFile, t.value);
    holds = holds && same;
    if (!quiet) {
      out << fmt::format("{:<34} {:>16} {:>34}  {}\n", t.key, asWritten(t.value, d),
                         fmt::format("{:.3g} x {}", t.ratio, t.to), same ? "holds it" : "has " + asWritten(inFile, d));
    }
    tied.push_back({{"key", t.key}, {"to", t.to}, {"ratio", t.ratio}, {"value", t.value}, {"chip_file_value", inFile}});
  }
  // The points, training and predicted apart.
  Json points = Json::array();
  for (const bool training : {true, false}) {
    if (!quiet) {
      out << fmt::format("\n{} points\n{:<38} {:>10} {:>10} {:>8} {:>12} {:>8}\n", training ? "training" : "predicted",
                         "power", "measured", "fitted", "error", "chip file", "error");
    }
    for (std::size_t i = 0; i < fit.points.size(); ++i) {
      const workload::PowerFitResult::Point& p = fit.points[i];
      if (p.training != training) continue;
      const double withFile = workload::loadPowerW(shipped, bench.refreshPerS(), loads[i]);
      const double fileError = (withFile - p.measuredW) / p.measuredW * 100.0;
      if (!quiet) {
        out << fmt::format("{:<38} {:>8.1f} W {:>8.1f} W {:>+7.1f}% {:>10.1f} W {:>+7.1f}%\n", p.id, p.measuredW,
                           p.simulatedW, p.errorPercent, withFile, fileError);
      }
      points.push_back({{"id", p.id},
                        {"kernel", loads[i].kernel.empty() ? Json(nullptr) : Json(loads[i].kernel)},
                        {"training", p.training},
                        {"measured_w", p.measuredW},
                        {"simulated_w", p.simulatedW},
                        {"error_percent", p.errorPercent},
                        {"chip_file_w", withFile},
                        {"chip_file_error_percent", fileError}});
    }
  }
  out << fmt::format("MAPE: training {:.2f}%, predicted {:.2f}%, all {:.2f}%; largest error {:.1f}%\n",
                     fit.trainingMape, fit.predictedMape, fit.mape, fit.maxAbsErrorPercent);
  out << fmt::format("chip type {}: {}\n", chipConfig.name,
                     holds ? "its file holds the fitted values (within 0.5%)"
                           : "its file differs from the fit: write the values above into its `power` section");

  const Json result = {
      {"dataset", dataset.name},
      {"file", file},
      {"hardware", dataset.hardware},
      {"platform", loaded.platform.name},
      {"chip_type", chipConfig.name},
      {"training", dataset.powerFit->training},
      {"prior", dataset.powerFit->prior},
      {"parameters", parameters},
      {"tied", tied},
      {"points", points},
      {"mape_percent", {{"training", fit.trainingMape}, {"predicted", fit.predictedMape}, {"all", fit.mape}}},
      {"max_abs_error_percent", fit.maxAbsErrorPercent},
      {"chip_file_holds_fit", holds}};
  const std::string json = (fs::path(outDir) / "calibrate-power.json").string();
  writeFileAtomically(json, result.dump(2) + "\n");
  out << "calibrate-power: " << json << "\n";
  if (!noPlot) {
    const std::string script = (fs::path(config::dataDirectory()) / kPlotScript).string();
    const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string png = (fs::path(outDir) / "power-calibration.png").string();
    out.flush();
    const int code = sweep::runAndWait(python, {script, json, png});
    if (code != 0) throw SimulationError(fmt::format("{} {} failed with exit code {}", python, script, code));
    out << "calibrate-power: " << png << "\n";
  }
  return kExitOk;
}

}  // namespace scoville::cli
