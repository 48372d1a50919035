#include "power/PowerLimit.h"

#include <stdexcept>

namespace scoville::power {

namespace {

SustainedLoad at(const std::vector<PointRun>& runs, std::size_t point, bool limited) {
  const PointRun& r = runs[point];
  return SustainedLoad{r.launchS, r.frequencyScale, r.powerW, point, point, 1.0, limited};
}

}  // namespace

SustainedLoad sustainedUnderCap(const std::vector<PointRun>& runs, double capW) {
  if (runs.empty()) throw std::invalid_argument("sustainedUnderCap: no point was run");
  for (const PointRun& r : runs) {
    if (!(r.launchS > 0.0)) throw std::invalid_argument("sustainedUnderCap: a point's launch time is not positive");
  }
  if (runs.front().powerW <= capW) return at(runs, 0, false);
  for (std::size_t k = 1; k < runs.size(); ++k) {
    const PointRun& hi = runs[k - 1];
    const PointRun& lo = runs[k];
    if (lo.powerW > capW) continue;
    // hi is above the cap and lo at or under it: the share at hi that averages the cap.
    const double u = hi.powerW > lo.powerW ? (capW - lo.powerW) / (hi.powerW - lo.powerW) : 0.0;
    const double perSecond = u / hi.launchS + (1.0 - u) / lo.launchS;
    SustainedLoad s;
    s.launchS = 1.0 / perSecond;
    s.frequencyScale = u * hi.frequencyScale + (1.0 - u) * lo.frequencyScale;
    s.powerW = u * hi.powerW + (1.0 - u) * lo.powerW;
    s.upper = k - 1;
    s.lower = k;
    s.upperShare = u;
    s.limited = true;
    return s;
  }
  // Every point given draws more than the cap: the lowest holds (the caller gave all points).
  return at(runs, runs.size() - 1, true);
}

}  // namespace scoville::power
