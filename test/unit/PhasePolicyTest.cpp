// Phase policies (workloads/PhasePolicy.h): the setting each policy chooses for real planned
// steps of tiny-dense on a jalapeno chip, the prediction it chooses by, and the serving block's
// schema.
#include <gtest/gtest.h>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Shipped.h"
#include "workloads/PhasePolicy.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {
namespace {

const hw::ChipConfig& jalapeno() {
  static const hw::ChipConfig chip = test::shippedPlatform("jalapeno").chipConfig(0);
  return chip;
}

StepPlan plan(uint64_t sequences, uint64_t context, uint64_t tokens) {
  static const ModelConfig model = test::shippedModel("tiny-dense");
  const StepPlanner planner(model, jalapeno(), ModelShard{});
  StepBatch b;
  b.kvLayerStride = 64ull << 20;
  for (uint64_t i = 0; i < sequences; ++i) b.sequences.push_back(StepSequence{i + 1, context, tokens, true, i << 20});
  return planner.plan(b);
}

PhasePolicyConfig policy(PhasePolicyImpl impl, int point = -1, int arrays = 0) {
  PhasePolicyConfig p;
  p.impl = impl;
  p.dvfsPoint = point;
  p.activeArrays = arrays;
  return p;
}

TEST(PhasePolicyTest, ComputeOptAndUniformTakeTheirFixedSettings) {
  const StepPlan decode = plan(8, 1024, 1);
  const int all = jalapeno().tensorCore.count;
  EXPECT_EQ(choosePhaseSetting(policy(PhasePolicyImpl::kComputeOpt), jalapeno(), {&decode}), (PhaseSetting{0, all}));
  EXPECT_EQ(choosePhaseSetting(policy(PhasePolicyImpl::kUniform), jalapeno(), {&decode}), (PhaseSetting{0, all}));
  EXPECT_EQ(choosePhaseSetting(policy(PhasePolicyImpl::kUniform, 2, 8), jalapeno(), {&decode}), (PhaseSetting{2, 8}));
}

// A decode step of a bf16 model is HBM-bound on jalapeno: bandwidth_opt finds a lower setting
// whose predicted core time still fits under the headroom, and no lower one of its kind fits.
TEST(PhasePolicyTest, BandwidthOptTakesTheLeastCoreThatFitsUnderTheMemoryTime) {
  const StepPlan decode = plan(8, 1024, 1);
  const CorePoints points = CorePoints::of(jalapeno());
  ASSERT_EQ(points.frequencyScale.size(), 4u);
  const PhasePolicyConfig bw = policy(PhasePolicyImpl::kBandwidthOpt);
  const double limit = bw.computeHeadroom * decode.memoryBoundS(jalapeno());
  const int all = jalapeno().tensorCore.count;
  ASSERT_LT(predictedCoreS(jalapeno(), points, decode, PhaseSetting{0, all}), limit) << "the step is memory-bound";

  const PhaseSetting s = choosePhaseSetting(bw, jalapeno(), {&decode});
  EXPECT_FALSE(s.fallback);
  EXPECT_TRUE(s.point > 0 || s.arrays < all) << "a memory-bound step leaves core to spare";
  EXPECT_LE(predictedCoreS(jalapeno(), points, decode, s), limit);
  if (s.arrays > 1) {
    EXPECT_GT(predictedCoreS(jalapeno(), points, decode, PhaseSetting{s.point, s.arrays - 1}), limit)
        << "the fewest arrays that fit at its point";
  }
  // Fixing the point fixes that half of the choice; the arrays still adapt.
  const PhaseSetting fixed = choosePhaseSetting(policy(PhasePolicyImpl::kBandwidthOpt, 1), jalapeno(), {&decode});
  EXPECT_EQ(fixed.point, 1u);
  EXPECT_LE(predictedCoreS(jalapeno(), points, decode, fixed), limit);
  // A lower clock needs at least as many arrays.
  const PhaseSetting slow = choosePhaseSetting(policy(PhasePolicyImpl::kBandwidthOpt, 2), jalapeno(), {&decode});
  const bool fitsAtPoint2 = predictedCoreS(jalapeno(), points, decode, PhaseSetting{2, all}) <= limit;
  EXPECT_EQ(slow.fallback, !fitsAtPoint2);
  if (fitsAtPoint2) {
    EXPECT_GE(slow.arrays, fixed.arrays);
  } else {
    EXPECT_EQ(slow, (PhaseSetting{0, all})) << "held to a point that does not fit: nominal";
  }
  // The prediction follows the clock: half the frequency, twice the time.
  const double nominal = predictedCoreS(jalapeno(), points, decode, PhaseSetting{0, all});
  EXPECT_NEAR(predictedCoreS(jalapeno(), points, decode, PhaseSetting{3, all}), nominal / points.frequencyScale[3],
              1e-12);
  // From the nominal setting, powering arrays off costs nothing: the fresh choice is taken.
  const PhaseSetting atNominal{0, all};
  EXPECT_EQ(choosePhaseSetting(bw, jalapeno(), {&decode}, &atNominal), s);
  // A current setting at another point that fits is kept: this small step's saving is far below
  // what a clock switch costs (10 us of the chip's idle power). Free switches take the best.
  const std::size_t other = s.point == 1 ? 0 : 1;
  const PhaseSetting there =
      choosePhaseSetting(policy(PhasePolicyImpl::kBandwidthOpt, static_cast<int>(other)), jalapeno(), {&decode});
  ASSERT_FALSE(there.fallback);
  ASSERT_NE(there, s);
  EXPECT_EQ(choosePhaseSetting(bw, jalapeno(), {&decode}, &there), there);
  hw::ChipConfig freeSwitch = jalapeno();
  freeSwitch.power->transitions = power::PowerTransitions{};
  EXPECT_EQ(choosePhaseSetting(bw, freeSwitch, {&decode}, &there), s);
  // A current setting that no longer fits is left.
  const PhaseSetting tooSmall{3, 1};
  const PhaseSetting left = choosePhaseSetting(bw, jalapeno(), {&decode}, &tooSmall);
  EXPECT_NE(left, tooSmall);
  EXPECT_LE(predictedCoreS(jalapeno(), points, decode, left), limit);
}

// A prefill chunk is compute-bound: bandwidth_opt falls back to the nominal setting.
TEST(PhasePolicyTest, BandwidthOptFallsBackOnAComputeBoundStep) {
  const StepPlan prefill = plan(1, 0, 2048);
  const CorePoints points = CorePoints::of(jalapeno());
  const int all = jalapeno().tensorCore.count;
  ASSERT_GT(predictedCoreS(jalapeno(), points, prefill, PhaseSetting{0, all}), prefill.memoryBoundS(jalapeno()));
  const PhaseSetting s = choosePhaseSetting(policy(PhasePolicyImpl::kBandwidthOpt), jalapeno(), {&prefill});
  EXPECT_TRUE(s.fallback);
  EXPECT_EQ(s, (PhaseSetting{0, all}));
  // Every chip's plan must fit: a decode step paired with a prefill plan does not.
  const StepPlan decode = plan(8, 1024, 1);
  EXPECT_TRUE(choosePhaseSetting(policy(PhasePolicyImpl::kBandwidthOpt), jalapeno(), {&decode, &prefill}).fallback);
}

ServingPolicyConfig parse(const std::string& yaml) {
  return ServingPolicyConfig::schema().parse(config::loadConfigText("serving", yaml, "s.yaml"));
}

// Weight conversions (a MoE kernel's convert_ops) run beside the loads on the vector unit: they
// add to the predicted core time only when the vector unit's whole work outlasts the compute
// stream's.
TEST(PhasePolicyTest, ConversionsCountInTheVectorUnitsTimeNotAfterTheGemms) {
  const StepPlan decode = plan(8, 1024, 1);
  const CorePoints points = CorePoints::of(jalapeno());
  const PhaseSetting nominal{0, jalapeno().tensorCore.count};
  const double base = predictedCoreS(jalapeno(), points, decode, nominal);
  const auto withConversions = [&](double ops) {
    StepPlan p = decode;
    p.ops.front().vectorOps += ops;
    p.ops.front().convertOps += ops;
    p.vectorOps += ops;
    p.convertOps += ops;
    return predictedCoreS(jalapeno(), points, p, nominal);
  };
  const hw::VectorUnitConfig& v = jalapeno().vectorUnit;
  const double lanesPerS = 1e9 * v.clockHz / static_cast<double>(v.cycles(1e9));  // element ops a second
  // A tenth of the step's core time in conversions hides behind the compute stream.
  EXPECT_DOUBLE_EQ(withConversions(0.1 * base * lanesPerS), base);
  // Twice the step's core time of them binds: the vector unit's time is the core's.
  const double heavy = withConversions(2.0 * base * lanesPerS);
  EXPECT_GT(heavy, 1.9 * base);
  EXPECT_LT(heavy, 3.1 * base);
}

TEST(PhasePolicyTest, ServingBlockSchemaNamesTheBadKey) {
  const ServingPolicyConfig ok = parse(
      "{kv_cache_placement: local, prefill_policy: {impl: compute_opt}, decode_policy: {impl: bandwidth_opt, "
      "compute_headroom: 0.7}, max_concurrent_users: 64}");
  EXPECT_EQ(ok.kvPlacementPolicy("spill_to_remote"), "local_first");
  EXPECT_EQ(ServingPolicyConfig{}.kvPlacementPolicy("spill_to_remote"), "spill_to_remote");
  EXPECT_EQ(ok.decode.impl, PhasePolicyImpl::kBandwidthOpt);
  EXPECT_DOUBLE_EQ(ok.decode.computeHeadroom, 0.7);
  EXPECT_EQ(ok.maxConcurrentUsers, 64);
  const auto fails = [](const std::string& yaml, const std::string& key) {
    EXPECT_TRUE(test::mentions(test::configErrorOf([&] { parse(yaml); }, yaml), {key})) << yaml;
  };
  fails("{kv_cache_placement: nearby}", "kv_cache_placement");
  fails("{prefill_policy: {impl: compute_opt, dvfs_point: 2}}", "dvfs_point");
  fails("{decode_policy: {impl: uniform, compute_headroom: 0.5}}", "compute_headroom");
  fails("{decode_policy: {impl: fastest}}", "impl");
  fails("{decode_policy: {impl: bandwidth_opt, compute_headroom: 2}}", "compute_headroom");
  fails("{decode_polcy: {impl: uniform}}", "decode_polcy");
}

}  // namespace
}  // namespace scoville::workload
