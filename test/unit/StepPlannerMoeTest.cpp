// The step planner's mixture-of-experts layers: the experts a step reads, expert parallelism and
// dispatch across replicas, mixed-input tiles. Pure logic, no SystemC.

#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include "config/ConfigError.h"
#include "config/Loader.h"
#include "hw/chip/ChipConfig.h"
#include "hw/kv/KvBlockAllocator.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Shipped.h"
#include "test/unit/StepPlannerHelpers.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {
namespace {

using namespace planner_test;

TEST(StepPlanner, MoeDecodeReadsExactlyTheExpertsThatReceivedTokens) {
  const ModelConfig m = shippedModel("tiny-moe");
  ASSERT_EQ(m.routedExperts, 16);
  const StepPlanner planner(m, jalapeno(), ModelShard{});
  const uint64_t expert = expertBytes(m);
  EXPECT_EQ(expert, 3ull * 1024 * 1024 * 17 / 32) << "3 x 1024 x 1024 elements at 4.25 bits (MXFP4)";
  // Four decodes x top-4 = 16 expert-tokens per layer, spread differently in each layer.
  const std::vector<std::vector<uint64_t>> perLayer = {
      {0, 3, 0, 0, 0, 7, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0},   // 4 experts, not adjacent
      {4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},   // 4 adjacent experts
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // all 16
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16},  // one
  };
  const Routing routed = routing(m, [&](int l, int e) { return perLayer[u(l)][u(e)]; });
  const StepPlan plan = planner.plan(decodes(4, 100, &routed));
  const uint64_t hidden = u(m.hidden);
  for (uint32_t l = 0; l < 4; ++l) {
    SCOPED_TRACE(l);
    const auto withTokens =
        static_cast<uint64_t>(std::count_if(perLayer[l].begin(), perLayer[l].end(), [](uint64_t n) { return n > 0; }));
    const uint64_t read = bytesOf(plan, "experts", l, tlm::OpKind::kRead);
    EXPECT_GE(read, withTokens * expert);
    EXPECT_LE(read, withTokens * (expert + kAlignment));
    // Each expert computes its own tokens: 2 FLOPs per expert weight per token.
    EXPECT_DOUBLE_EQ(flopsOf(plan, "experts", l), 2.0 * 16 * static_cast<double>(m.expertParams()));
    // The router scores every token against every expert.
    EXPECT_DOUBLE_EQ(flopsOf(plan, "router", l), 2.0 * 4 * hidden * 16);
  }
  EXPECT_DOUBLE_EQ(plan.expertTokens, 4.0 * 16);
}

// Weights stored narrower than the compute precision (MXFP4 experts computed in BF16 or FP8) mark
// their GEMM tiles mixed-input, which a software stack may run less efficiently; the same
// experts computed in FP4, and BF16 weights computed in BF16 or FP8, are not.
TEST(StepPlanner, WeightsNarrowerThanTheComputePrecisionMarkTheirTilesMixedInput) {
  for (const auto& [compute, expertsMixed, denseMixed] :
       std::vector<std::tuple<tlm::Precision, bool, bool>>{{tlm::Precision::kBf16, true, false},
                                                           {tlm::Precision::kFp8, true, false},
                                                           {tlm::Precision::kFp4, false, false}}) {
    SCOPED_TRACE(tlm::precisionName(compute));
    ModelConfig m = shippedModel("tiny-moe");
    m.computePrecision = compute;
    const StepPlanner planner(m, jalapeno(), ModelShard{});
    const Routing routed = routing(m, [](int, int e) { return e < 4 ? 1 : 0; });
    const StepPlan plan = planner.plan(decodes(4, 100, &routed));
    int experts = 0;
    int dense = 0;
    for (const PlannedOp& op : plan.ops) {
      if (op.name == "experts") {
        ++experts;
        EXPECT_EQ(op.mixedInput, expertsMixed) << "layer " << op.layer;
      } else if (op.name == "qkv_proj" || op.name == "o_proj") {
        ++dense;
        EXPECT_EQ(op.mixedInput, denseMixed) << op.name << " of layer " << op.layer;
      } else {
        EXPECT_FALSE(op.mixedInput) << op.name << " (no weights, or as wide as the compute)";
      }
    }
    EXPECT_GT(experts, 0);
    EXPECT_GT(dense, 0);
  }
}

TEST(StepPlanner, MoeTokensSpreadOverAllExpertsReadMoreThanTokensOnOneExpert) {
  const ModelConfig m = shippedModel("tiny-moe");
  const StepPlanner planner(m, jalapeno(), ModelShard{});
  const Routing one = routing(m, [](int, int e) { return e == 3 ? 16u : 0u; });
  const Routing spread = routing(m, [](int, int) { return 1u; });
  const StepPlan concentrated = planner.plan(decodes(4, 100, &one));
  const StepPlan everywhere = planner.plan(decodes(4, 100, &spread));
  const uint64_t expert = expertBytes(m);
  uint64_t concentratedBytes = 0, spreadBytes = 0;
  for (uint32_t l = 0; l < 4; ++l) {
    concentratedBytes += bytesOf(concentrated, "experts", l, tlm::OpKind::kRead);
    spreadBytes += bytesOf(everywhere, "experts", l, tlm::OpKind::kRead);
  }
  EXPECT_GE(concentratedBytes, 4 * expert);
  EXPECT_LE(concentratedBytes, 4 * (expert + kAlignment));
  EXPECT_GE(spreadBytes, 4 * 16 * expert);
  EXPECT_GT(spreadBytes, concentratedBytes);
  EXPECT_GT(everywhere.bytesMoved, concentrated.bytesMoved);
  // Same work either way.
  EXPECT_DOUBLE_EQ(everywhere.expertTokens, concentrated.expertTokens);
  EXPECT_DOUBLE_EQ(everywhere.flops, concentrated.flops);
}

ModelShard expertParallel(int rank, int experts) {
  ModelShard s;
  s.tp = 2;
  s.rank = rank;
  s.ep = 2;
  for (int e = 0; e < experts; ++e) s.expertOwner.push_back(e % 2);
  return s;
}

TEST(StepPlanner, ExpertParallelRanksReadOnlyTheExpertsTheyOwn) {
  const ModelConfig m = shippedModel("tiny-moe");
  const uint64_t expert = expertBytes(m);
  // Experts with tokens per layer; owners alternate (even experts on rank 0, odd on rank 1).
  const std::vector<std::set<int>> perLayer = {{1, 3, 5}, {0, 1, 2, 4, 6}, {}, {0}};
  const Routing routed = routing(m, [&](int l, int e) { return perLayer[u(l)].count(e) != 0 ? 2u : 0u; });
  double heldEp = 0.0;
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    const StepPlanner planner(m, jalapeno(), expertParallel(rank, m.routedExperts));
    heldEp += planner.weightBytes();
    const StepPlan plan = planner.plan(decodes(4, 100, &routed));
    uint64_t ownedTokens = 0;
    for (uint32_t l = 0; l < 4; ++l) {
      uint64_t owned = 0;
      for (int e : perLayer[l]) owned += e % 2 == rank ? 1 : 0;
      ownedTokens += 2 * owned;
      const uint64_t read = bytesOf(plan, "experts", l, tlm::OpKind::kRead);
      EXPECT_GE(read, owned * expert) << "layer " << l << ": whole experts";
      EXPECT_LE(read, owned * (expert + kAlignment)) << "layer " << l;
      EXPECT_DOUBLE_EQ(flopsOf(plan, "experts", l), 2.0 * 2 * static_cast<double>(owned * m.expertParams()))
          << "layer " << l;
    }
    EXPECT_DOUBLE_EQ(plan.expertTokens, static_cast<double>(ownedTokens));
  }
  // The ranks hold every expert once between them, as the tensor-sliced layout does.
  const double heldTp = StepPlanner(m, jalapeno(), ModelShard{2, 0}).weightBytes() +
                        StepPlanner(m, jalapeno(), ModelShard{2, 1}).weightBytes();
  EXPECT_NEAR(heldEp, heldTp, 16.0 * 4 * 2);
}

TEST(StepPlanner, ExpertsAcrossReplicasDispatchAndCombineAroundTheExpertsEvenWithoutTokens) {
  const ModelConfig m = shippedModel("tiny-moe");
  ModelShard shard;  // tp 1, member 1 of 2 expert-parallel replicas: the odd experts
  shard.ep = 2;
  shard.expertsAcrossReplicas = true;
  shard.epRank = 1;
  for (int e = 0; e < m.routedExperts; ++e) shard.expertOwner.push_back(e % 2);
  const StepPlanner planner(m, jalapeno(), shard);
  const Routing received = routing(m, [](int, int e) { return e == 3 ? 5u : 0u; });
  const std::vector<std::vector<uint64_t>> dispatch(4, std::vector<uint64_t>{4096, 0});
  const std::vector<std::vector<uint64_t>> combine(4, std::vector<uint64_t>{2048, 0});
  // No request of its own: only the experts for the tokens it receives, between the all-to-alls.
  StepBatch idle;
  idle.expertTokens = &received;
  idle.dispatchBytes = &dispatch;
  idle.combineBytes = &combine;
  const StepPlan plan = planner.plan(idle);
  std::vector<std::string> names;
  for (const PlannedOp& op : plan.ops) names.push_back(op.name);
  const std::vector<std::string> layer = {"dispatch", "experts", "combine"};
  std::vector<std::string> expected;
  for (int l = 0; l < 4; ++l) expected.insert(expected.end(), layer.begin(), layer.end());
  EXPECT_EQ(names, expected);
  for (const PlannedOp& op : plan.ops) {
    if (op.name == "experts") {
      EXPECT_EQ(op.gemms.front().m, 5u) << "the tokens routed to expert 3";
      continue;
    }
    EXPECT_EQ(op.after.kind, PlannedCollective::Kind::kAllToAll);
    EXPECT_EQ(op.after.sendBytes, op.name == "dispatch" ? dispatch[0] : combine[0]);
    EXPECT_TRUE(op.accesses.empty());
  }
  EXPECT_DOUBLE_EQ(plan.expertTokens, 4 * 5.0);
  // Without the all-to-all bytes the step cannot be planned.
  StepBatch missing;
  missing.expertTokens = &received;
  missing.sequences.push_back(StepSequence{1, 0, 1, true, planner.kvBase()});
  EXPECT_THROW(planner.plan(missing), std::invalid_argument);
}

TEST(StepPlanner, ExpertParallelismMustBeOneOrTheTensorParallelWidth) {
  const ModelConfig m = shippedModel("tiny-moe");
  struct Shape {
    int tp;
    int ep;
  };
  for (const Shape& s : {Shape{2, 4}, Shape{4, 2}, Shape{1, 2}, Shape{2, 3}}) {
    SCOPED_TRACE(testing::Message() << "tp " << s.tp << " ep " << s.ep);
    ModelShard shard;
    shard.tp = s.tp;
    shard.ep = s.ep;
    for (int e = 0; e < m.routedExperts; ++e) shard.expertOwner.push_back(e % s.tp);
    const std::optional<config::ConfigError> e =
        test::configErrorOf([&] { StepPlanner(m, jalapeno(), shard); }, "the shard");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), config::ErrorKind::kInvalidConfig) << e->what();
    EXPECT_TRUE(test::mentions(e, {"ep"}));
  }
  ModelShard ok;
  ok.tp = 4;
  ok.ep = 4;
  for (int e = 0; e < m.routedExperts; ++e) ok.expertOwner.push_back(e % 4);
  EXPECT_NO_THROW(StepPlanner(m, jalapeno(), ok));
}

TEST(StepPlanner, MoeStepWithoutRoutingThrows) {
  for (const char* name : {"tiny-moe", "tiny-mla"}) {
    SCOPED_TRACE(name);
    const ModelConfig m = shippedModel(name);
    const StepPlanner planner(m, jalapeno(), ModelShard{});
    EXPECT_THROW(planner.plan(decodes(2, 10)), std::invalid_argument);
  }
  // A dense model needs none.
  const StepPlanner dense(shippedModel("tiny-dense"), jalapeno(), ModelShard{});
  EXPECT_NO_THROW(dense.plan(decodes(2, 10)));
}

}  // namespace
}  // namespace scoville::workload
