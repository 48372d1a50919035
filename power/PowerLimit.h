#pragma once
// The steady state of a chip's power limiter under a sustained load: a kernel launched back to back
// long enough for the board's limiter (the governor's cap, hw/power/DvfsGovernor.h) to settle.
//
// The load is timed at the chip's DVFS points from the nominal one down, each with the sustained
// power it draws there. A limiter holding `capW` keeps the nominal point when that is under the cap;
// otherwise it alternates between the lowest point above the cap and the highest under it, spending
// the share u of the time at the upper one that averages the cap:
//
//   u x P_upper + (1 - u) x P_lower = cap,   launches per second = u / t_upper + (1 - u) / t_lower
//
// (the governor's decisions, averaged over many windows). When even the lowest point draws more, the
// chip stays there (it cannot go lower). Pure C++; scoville kernels uses it (docs/validation.md).

#include <cstddef>
#include <vector>

namespace scoville::power {

/// One DVFS point's run of the load.
struct PointRun {
  double frequencyScale = 1.0;  ///< core f / f nominal at the point
  double launchS = 0.0;         ///< time per launch there (> 0)
  double powerW = 0.0;          ///< sustained power of back-to-back launches there
};

/// Where the limiter settles.
struct SustainedLoad {
  double launchS = 0.0;         ///< mean time per launch
  double frequencyScale = 1.0;  ///< mean core clock over time, relative to nominal
  double powerW = 0.0;          ///< mean power
  std::size_t upper = 0;        ///< the points it alternates between (upper == lower: one point)
  std::size_t lower = 0;
  double upperShare = 1.0;  ///< share of the time at `upper`
  bool limited = false;     ///< false: the nominal point is under the cap
};

/// The steady state of `runs` under `capW`: point 0 nominal, then the lower points in order, down to
/// the first one under the cap or the chip's last (the caller runs them). Throws
/// std::invalid_argument for an empty list or a launch time that is not positive.
SustainedLoad sustainedUnderCap(const std::vector<PointRun>& runs, double capW);

}  // namespace scoville::power
