// The roofline bound (workloads/Roofline.h): its closed form on a chip, a plan without FLOPs, and
// the violation test's slack.
#include <gtest/gtest.h>

#include "test/support/Shipped.h"
#include "workloads/Roofline.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {
namespace {

StepPlan planOf(double bytes, double flops) {
  StepPlan plan;
  plan.bytesMoved = bytes;
  plan.flops = flops;
  plan.computePrecision = tlm::Precision::kBf16;
  return plan;
}

TEST(Roofline, IsTheLargerOfBytesOverBandwidthAndFlopsOverPeak) {
  const hw::ChipConfig chip = test::shippedPlatform("jalapeno").chipConfig(0);
  const double bandwidth = chip.hbm.bandwidthBytesPerS;
  const double peak = chip.tensorCore.peakFlops(tlm::Precision::kBf16);
  ASSERT_GT(bandwidth, 0.0);
  ASSERT_GT(peak, 0.0);
  // Memory-bound: 1 GB and a FLOP per byte.
  EXPECT_DOUBLE_EQ(rooflineBoundS(planOf(1e9, 1e9), chip), 1e9 / bandwidth);
  // Compute-bound: a thousand times the FLOPs the peak needs to match the bytes' time.
  const double flops = 1000.0 * 1e9 / bandwidth * peak;
  EXPECT_DOUBLE_EQ(rooflineBoundS(planOf(1e9, flops), chip), flops / peak);
  // Without FLOPs the bytes alone bind; an empty plan is bound by nothing.
  EXPECT_DOUBLE_EQ(rooflineBoundS(planOf(4096, 0), chip), 4096 / bandwidth);
  EXPECT_DOUBLE_EQ(rooflineBoundS(planOf(0, 0), chip), 0.0);
}

TEST(Roofline, AStepBeatsItsBoundOnlyBeyondRounding) {
  EXPECT_FALSE(beatsRoofline(1.0, 1.0));
  EXPECT_FALSE(beatsRoofline(2.0, 1.0));
  EXPECT_FALSE(beatsRoofline(1.0 - kRooflineSlackS / 2, 1.0));
  EXPECT_TRUE(beatsRoofline(1.0 - 2 * kRooflineSlackS, 1.0));
}

}  // namespace
}  // namespace scoville::workload
