#include "workloads/PowerCalibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "config/Units.h"
#include "power/EnergyKeys.h"
#include "workloads/BoundedLeastSquares.h"

namespace scoville::workload {

OperatingPoint operatingPointOf(const power::ChipEnergyConfig& energy, double smClockHz, double nominalSmClockHz) {
  OperatingPoint p;
  if (smClockHz <= 0.0 || nominalSmClockHz <= 0.0 || energy.dvfs.empty()) return p;
  p.frequencyScale = smClockHz / nominalSmClockHz;
  const double f = energy.dvfs.front().frequencyHz * p.frequencyScale;
  p.voltageScale = energy.voltageAt(f) / energy.nominalVoltage();
  return p;
}

double loadPowerW(const power::ChipEnergyConfig& e, double refreshPerS, const PowerLoad& load, bool atSimulatedRate) {
  // The simulator ran the kernel at the nominal point; the board at the load's.
  const double voltageScale = atSimulatedRate ? 1.0 : load.voltageScale;
  const double frequencyScale = atSimulatedRate ? 1.0 : load.frequencyScale;
  const double v2 = voltageScale * voltageScale;
  const double staticW = e.staticAtW(voltageScale);
  const double refreshW = refreshPerS * e.hbm.refreshJ;
  if (load.kernel.empty()) return staticW + refreshW;
  const double launch = atSimulatedRate ? load.simulatedLaunchS : load.launchS;
  double perLaunchJ = 0.0;
  for (std::size_t c = 0; c < power::kCounters; ++c) {
    const auto counter = static_cast<power::Counter>(c);
    // Refresh runs whatever the kernel does (counted above); the floor is drawn for the whole launch.
    if (counter == power::Counter::kRefreshes || counter == power::Counter::kClockActiveSeconds) continue;
    perLaunchJ += load.perLaunch[c] * power::priceOf(e, counter) * (power::onCoreRail(counter) ? v2 : 1.0);
  }
  const double floorW = e.floorW * v2 * frequencyScale;
  return staticW + refreshW + load.duty * (perLaunchJ / launch + floorW);
}

double meanAbsolutePercent(const std::vector<double>& errors) {
  if (errors.empty()) return 0.0;
  double sum = 0.0;
  for (const double e : errors) sum += std::fabs(e);
  return sum / static_cast<double>(errors.size());
}

namespace {

double* valueOf(power::ChipEnergyConfig& e, const std::string& key) {
  const power::EnergyKey* k = power::findEnergyKey(key);
  double* v = k != nullptr ? k->value(e) : nullptr;
  if (v == nullptr) {
    throw std::invalid_argument(fmt::format("power_fit: the chip's `power` section has no '{}'", key));
  }
  return v;
}

double readBound(const std::string& key, const std::string& text) {
  return config::parseQuantityAs(text, power::findEnergyKey(key)->dimension);
}

}  // namespace

PowerFitResult fitPower(const power::ChipEnergyConfig& energy, double refreshPerS, const std::vector<PowerLoad>& loads,
                        const PowerFitSpec& spec) {
  const std::size_t n = spec.parameters.size();
  PowerFitResult out;
  std::vector<double> lo(n), hi(n), scale(n);
  for (std::size_t k = 0; k < n; ++k) {
    const PowerFitParameter& p = spec.parameters[k];
    lo[k] = readBound(p.key, p.minText);
    hi[k] = readBound(p.key, p.maxText);
    scale[k] = hi[k];  // unknowns of order one
  }
  // The model with the fitted constants set to `x` (and the tied ones with them).
  const auto with = [&](const std::vector<double>& x) {
    power::ChipEnergyConfig e = energy;
    for (std::size_t k = 0; k < n; ++k) *valueOf(e, spec.parameters[k].key) = x[k];
    for (const PowerFitTie& t : spec.tied) {
      for (std::size_t k = 0; k < n; ++k) {
        if (spec.parameters[k].key == t.to) *valueOf(e, t.key) = t.ratio * x[k];
      }
    }
    return e;
  };
  // Power is linear in every constant: a column is the change one unit of it makes.
  std::vector<std::vector<double>> rows;
  std::vector<double> b;
  const power::ChipEnergyConfig zero = with(std::vector<double>(n, 0.0));
  for (const PowerLoad& load : loads) {
    if (std::find(spec.training.begin(), spec.training.end(), load.id) == spec.training.end()) continue;
    const double base = loadPowerW(zero, refreshPerS, load);
    std::vector<double> row(n);
    for (std::size_t k = 0; k < n; ++k) {
      std::vector<double> x(n, 0.0);
      x[k] = scale[k];
      row[k] = (loadPowerW(with(x), refreshPerS, load) - base) / load.measuredW;
    }
    rows.push_back(std::move(row));
    b.push_back((load.measuredW - base) / load.measuredW);
  }
  // The pull towards the middle of each range, in units of the range.
  for (std::size_t k = 0; k < n; ++k) {
    const double range = (hi[k] - lo[k]) / scale[k];
    std::vector<double> row(n, 0.0);
    row[k] = spec.prior / range;
    rows.push_back(std::move(row));
    b.push_back(spec.prior / range * 0.5 * (lo[k] + hi[k]) / scale[k]);
  }
  std::vector<double> zlo(n), zhi(n);
  for (std::size_t k = 0; k < n; ++k) {
    zlo[k] = lo[k] / scale[k];
    zhi[k] = hi[k] / scale[k];
  }
  const BoundedLeastSquares solution = solveBoundedLeastSquares(rows, b, zlo, zhi);
  std::vector<double> x(n);
  for (std::size_t k = 0; k < n; ++k) {
    x[k] = solution.x[k] * scale[k];
    const PowerFitParameter& p = spec.parameters[k];
    out.parameters.push_back(
        PowerFitResult::Parameter{p.key, x[k], lo[k], hi[k], solution.atLower[k], solution.atUpper[k], p.source});
  }
  out.fitted = with(x);
  for (const PowerFitTie& t : spec.tied) out.tied.push_back({t.key, t.to, t.ratio, *valueOf(out.fitted, t.key)});
  std::vector<double> training, predicted, all;
  for (const PowerLoad& load : loads) {
    PowerFitResult::Point point;
    point.id = load.id;
    point.training = std::find(spec.training.begin(), spec.training.end(), load.id) != spec.training.end();
    point.measuredW = load.measuredW;
    point.simulatedW = loadPowerW(out.fitted, refreshPerS, load);
    point.errorPercent = (point.simulatedW - point.measuredW) / point.measuredW * 100.0;
    (point.training ? training : predicted).push_back(point.errorPercent);
    all.push_back(point.errorPercent);
    out.maxAbsErrorPercent = std::max(out.maxAbsErrorPercent, std::fabs(point.errorPercent));
    out.points.push_back(point);
  }
  out.trainingMape = meanAbsolutePercent(training);
  out.predictedMape = meanAbsolutePercent(predicted);
  out.mape = meanAbsolutePercent(all);
  return out;
}

}  // namespace scoville::workload
