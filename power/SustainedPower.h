#pragma once
// Sustained power: the largest average over a sliding window of whole bins, and the runs of
// windows above a limit.

#include <cstddef>
#include <vector>

namespace scoville::power {

/// Sustained power over one window length, and the runs of windows above a limit.
struct SustainedPower {
  struct Violation {
    double startS = 0.0;  ///< start of the first window above the limit
    double endS = 0.0;    ///< end of the last one
    double maxW = 0.0;
  };
  double windowS = 0.0;  ///< the window as used: whole bins
  bool fits = false;     ///< false: the run is shorter than the window
  double maxW = 0.0;     ///< highest average over any window position
  double maxAtS = 0.0;   ///< start of that window
  std::size_t violations = 0;
  std::vector<Violation> firstViolations;  ///< at most kListedViolations
  static constexpr std::size_t kListedViolations = 10;
};

/// Sliding-window maxima of `binPowerW` (power of each bin) over `windowBins` bins.
SustainedPower sustainedPower(const std::vector<double>& binPowerW, double intervalS, std::size_t windowBins,
                              double limitW);

}  // namespace scoville::power
