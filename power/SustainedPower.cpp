#include "power/SustainedPower.h"

#include <algorithm>
#include <numeric>

namespace scoville::power {

SustainedPower sustainedPower(const std::vector<double>& binPowerW, double intervalS, std::size_t windowBins,
                              double limitW) {
  SustainedPower s;
  windowBins = std::max<std::size_t>(1, windowBins);
  s.windowS = static_cast<double>(windowBins) * intervalS;
  if (binPowerW.size() < windowBins) return s;
  s.fits = true;
  const auto n = static_cast<double>(windowBins);
  double sum = std::accumulate(binPowerW.begin(), binPowerW.begin() + static_cast<std::ptrdiff_t>(windowBins), 0.0);
  bool inViolation = false;
  for (std::size_t i = 0;; ++i) {
    // Window [i, i + windowBins): a running sum, re-summed every 4096 slides against drift.
    const double power = sum / n;
    if (power > s.maxW || i == 0) {
      s.maxW = power;
      s.maxAtS = static_cast<double>(i) * intervalS;
    }
    if (power > limitW) {
      if (!inViolation) {
        ++s.violations;
        if (s.firstViolations.size() < SustainedPower::kListedViolations) {
          s.firstViolations.push_back({static_cast<double>(i) * intervalS, 0.0, power});
        }
      }
      inViolation = true;
      if (s.violations <= SustainedPower::kListedViolations) {
        SustainedPower::Violation& v = s.firstViolations.back();
        v.endS = static_cast<double>(i + windowBins) * intervalS;
        v.maxW = std::max(v.maxW, power);
      }
    } else {
      inViolation = false;
    }
    if (i + windowBins >= binPowerW.size()) break;
    if ((i + 1) % 4096 == 0) {
      sum = std::accumulate(binPowerW.begin() + static_cast<std::ptrdiff_t>(i + 1),
                            binPowerW.begin() + static_cast<std::ptrdiff_t>(i + 1 + windowBins), 0.0);
    } else {
      sum += binPowerW[i + windowBins] - binPowerW[i];
    }
  }
  return s;
}

}  // namespace scoville::power
