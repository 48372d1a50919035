// The power limiter's steady state under a sustained load (power/PowerLimit.h), against its closed
// form: the nominal point when that is under the cap, the time share between the two points around
// the cap that averages it, the lowest point when every one is above it, and bad input refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "power/PowerLimit.h"

namespace scoville::power {
namespace {

TEST(PowerLimit, UnderTheCapTheNominalPointHolds) {
  const SustainedLoad s = sustainedUnderCap({{1.0, 10e-6, 650.0}}, 700.0);
  EXPECT_FALSE(s.limited);
  EXPECT_DOUBLE_EQ(s.launchS, 10e-6);
  EXPECT_DOUBLE_EQ(s.frequencyScale, 1.0);
  EXPECT_DOUBLE_EQ(s.powerW, 650.0);
  EXPECT_EQ(s.upper, 0u);
  EXPECT_EQ(s.lower, 0u);
}

TEST(PowerLimit, AboveTheCapItAlternatesBetweenThePointsAroundItAveragingTheCap) {
  // 1000 W at 1.0 (1 ms), 800 W at 0.8 (1.25 ms), 600 W at 0.6 (1/0.6 ms): the cap of 700 W lies
  // between the last two; half the time at each averages it.
  const SustainedLoad s =
      sustainedUnderCap({{1.0, 1e-3, 1000.0}, {0.8, 1.25e-3, 800.0}, {0.6, 1e-3 / 0.6, 600.0}}, 700.0);
  EXPECT_TRUE(s.limited);
  EXPECT_EQ(s.upper, 1u);
  EXPECT_EQ(s.lower, 2u);
  EXPECT_DOUBLE_EQ(s.upperShare, 0.5);
  EXPECT_DOUBLE_EQ(s.powerW, 700.0);
  EXPECT_DOUBLE_EQ(s.frequencyScale, 0.7);
  // Launches per second: 0.5 / 1.25 ms + 0.5 / 1.667 ms = 400 + 300 = 700 per second.
  EXPECT_NEAR(s.launchS, 1.0 / 700.0, 1e-15);
}

TEST(PowerLimit, AtACapMetExactlyByAPointThatPointHoldsAlone) {
  const SustainedLoad s = sustainedUnderCap({{1.0, 1e-3, 900.0}, {0.8, 1.2e-3, 700.0}}, 700.0);
  EXPECT_TRUE(s.limited);
  EXPECT_DOUBLE_EQ(s.upperShare, 0.0);
  EXPECT_DOUBLE_EQ(s.launchS, 1.2e-3);
  EXPECT_DOUBLE_EQ(s.frequencyScale, 0.8);
}

TEST(PowerLimit, WhenEveryPointIsAboveTheCapTheLowestHolds) {
  const SustainedLoad s = sustainedUnderCap({{1.0, 1e-3, 1500.0}, {0.5, 2e-3, 900.0}}, 700.0);
  EXPECT_TRUE(s.limited);
  EXPECT_EQ(s.upper, 1u);
  EXPECT_EQ(s.lower, 1u);
  EXPECT_DOUBLE_EQ(s.launchS, 2e-3);
  EXPECT_DOUBLE_EQ(s.powerW, 900.0);
}

TEST(PowerLimit, AMemoryBoundLoadLosesLittleTimeWhereAComputeBoundOneLosesItsClock) {
  // Compute-bound: time ~ 1 / f. Memory-bound: time barely moves with the clock. Both pinned by
  // the same power at each point: the compute-bound one slows by the clock's share.
  const SustainedLoad compute = sustainedUnderCap({{1.0, 1e-3, 800.0}, {0.8, 1.25e-3, 600.0}}, 700.0);
  const SustainedLoad memory = sustainedUnderCap({{1.0, 1e-3, 800.0}, {0.8, 1.01e-3, 600.0}}, 700.0);
  EXPECT_NEAR(compute.launchS, 1.0 / (0.5 / 1e-3 + 0.5 / 1.25e-3), 1e-15);
  EXPECT_NEAR(memory.launchS / 1e-3, 1.005, 1e-3);
  EXPECT_GT(compute.launchS, memory.launchS);
}

TEST(PowerLimit, RefusesNoPointsAndNonPositiveTimes) {
  EXPECT_THROW(sustainedUnderCap({}, 700.0), std::invalid_argument);
  EXPECT_THROW(sustainedUnderCap({{1.0, 0.0, 900.0}}, 700.0), std::invalid_argument);
}

}  // namespace
}  // namespace scoville::power
