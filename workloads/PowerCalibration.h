#pragma once
// The power side of a kernel dataset (KernelBench.h): each measured load priced with a chip type's
// energy model, and the fit of the model's constants on the loads the dataset names
// (`scoville calibrate-power`, docs/power.md#calibration).
//
// A load is priced from what the simulator counted over one launch of its kernel at the nominal
// operating point (power/EnergyLevels.h), at the rate and operating point the board ran it:
//
//   P = static(V) + refresh + duty x [energy of one launch at V / launch time + floor x (V/Vn)^2 f/fn]
//
// with the core-rail counts scaled by (V/Vn)^2 and the core's leakage by the chip's law. The
// launch time is the measured one (the energy model is judged on its own, not through the timing
// model's error); the simulated one gives the power a whole simulation would report.

#include <string>
#include <vector>

#include "power/EnergyLevels.h"
#include "power/PowerConfig.h"
#include "workloads/KernelBench.h"

namespace scoville::workload {

/// One measured power point as the simulator saw it.
struct PowerLoad {
  std::string id;
  std::string kernel;  ///< empty: idle
  double measuredW = 0.0;
  double duty = 1.0;
  double launchS = 0.0;           ///< time per launch under the load (measured)
  double simulatedLaunchS = 0.0;  ///< the simulator's time per launch
  double voltageScale = 1.0;      ///< core V / V nominal at the load's clock
  double frequencyScale = 1.0;    ///< core f / f nominal
  power::Counts perLaunch{};      ///< effective counts of one launch at the nominal point
};

/// The core frequency and voltage a load ran at, relative to the nominal point: `smClockHz`
/// relative to the dataset's nominal clock, on the chip's dvfs curve (1, 1 when either is not given).
struct OperatingPoint {
  double frequencyScale = 1.0;
  double voltageScale = 1.0;
};
OperatingPoint operatingPointOf(const power::ChipEnergyConfig& energy, double smClockHz, double nominalSmClockHz);

/// Board power of `load` with `energy`; `refreshPerS`: all-bank refreshes per second of all the
/// chip's channels (drawn whatever runs). `atSimulatedRate`: as the simulator ran it, at its launch
/// time and the nominal point.
double loadPowerW(const power::ChipEnergyConfig& energy, double refreshPerS, const PowerLoad& load,
                  bool atSimulatedRate = false);

/// What the fit found.
struct PowerFitResult {
  struct Parameter {
    std::string key;
    double value = 0.0;  ///< SI
    double min = 0.0, max = 0.0;
    bool atLower = false, atUpper = false;
    std::string source;
  };
  struct Tied {
    std::string key;
    std::string to;
    double ratio = 1.0;
    double value = 0.0;
  };
  struct Point {
    std::string id;
    bool training = false;
    double measuredW = 0.0;
    double simulatedW = 0.0;  ///< at the measured launch rate
    double errorPercent = 0.0;
  };
  std::vector<Parameter> parameters;
  std::vector<Tied> tied;
  std::vector<Point> points;
  double trainingMape = 0.0;
  double predictedMape = 0.0;
  double mape = 0.0;
  double maxAbsErrorPercent = 0.0;
  power::ChipEnergyConfig fitted;  ///< the chip's energy model with the fitted constants
};

/// Fits `spec`'s constants of `energy` on its training loads by bounded least squares on the
/// relative errors, each constant pulled weakly (spec.prior) towards the middle of its range, and
/// prices every load with the result.
PowerFitResult fitPower(const power::ChipEnergyConfig& energy, double refreshPerS, const std::vector<PowerLoad>& loads,
                        const PowerFitSpec& spec);

/// `errors` as a MAPE (0 for none).
double meanAbsolutePercent(const std::vector<double>& errors);

}  // namespace scoville::workload
