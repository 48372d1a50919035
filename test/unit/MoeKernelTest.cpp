// The routed experts' grouped-GEMM kernel (workloads/MoeKernel.h): the tile's rows as the kernels
// choose them from the step's routing, each expert's tokens padded to whole tiles by the step
// planner, and a software stack's kernels chosen by the experts' precision. Pure logic, no SystemC.

#include <gtest/gtest.h>
#include <cstdint>
#include <string>
#include <vector>
#include "config/ConfigError.h"
#include "config/Loader.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Shipped.h"
#include "test/unit/StepPlannerHelpers.h"
#include "workloads/ModelConfig.h"
#include "workloads/MoeKernel.h"
#include "workloads/SoftwareStack.h"
#include "workloads/StepPlan.h"
#include "workloads/StepPlanSizes.h"

namespace scoville::workload::moe_kernel_test {

using namespace planner_test;

MoeKernelConfig kernel(int64_t least, int64_t most) {
  MoeKernelConfig k;
  k.name = "k";
  k.minTileRows = least;
  k.maxTileRows = most;
  return k;
}

// triton_kernels' matmul_ogs: block_m = max(16, min(next_power_of_2(gates // experts), 128));
// trtllm-gen's tile_tokens_dim the same within [8, 64]; one tile size when min = max.
TEST(MoeKernel, TheTileIsTheNextPowerOfTwoOfTheMeanTokensPerExpertWithinItsBounds) {
  const MoeKernelConfig triton = kernel(16, 128);
  EXPECT_EQ(triton.tileRows(16, 128), 16u) << "mean 0 counts as 1: the smallest tile";
  EXPECT_EQ(triton.tileRows(4 * 64, 128), 16u) << "mean 2";
  EXPECT_EQ(triton.tileRows(4 * 1024, 128), 32u) << "mean 32 exactly";
  EXPECT_EQ(triton.tileRows(4 * 1056, 128), 64u) << "mean 33";
  EXPECT_EQ(triton.tileRows(4 * 8192, 128), 128u) << "mean 256: capped";
  const MoeKernelConfig gen = kernel(8, 64);
  EXPECT_EQ(gen.tileRows(4, 128), 8u);
  EXPECT_EQ(gen.tileRows(4 * 1000, 128), 32u) << "mean 31";
  EXPECT_EQ(gen.tileRows(4 * 8192, 128), 64u);
  const MoeKernelConfig fixed = kernel(128, 128);
  for (const uint64_t gates : {1ull, 1000ull, 100000ull}) EXPECT_EQ(fixed.tileRows(gates, 256), 128u);
  EXPECT_EQ(planning::roundUp(1, 16), 16u);
  EXPECT_EQ(planning::roundUp(16, 16), 16u);
  EXPECT_EQ(planning::roundUp(17, 16), 32u);
}

// A kernel that picks from a fixed set of tile shapes (vLLM's Marlin: block_size_m the first of 8,
// 16, 32, 48, 64 with M x topk / E / block_size_m < 0.9, else 64) takes the first tile the mean
// fills to less than tile_fill, the mean counted exactly, not rounded.
TEST(MoeKernel, AKernelWithAFixedSetOfTilesTakesTheFirstTheMeanFillsLessThanItsFill) {
  MoeKernelConfig marlin;
  marlin.tileRowChoices = {8, 16, 32, 48, 64};
  marlin.tileFill = 0.9;
  EXPECT_EQ(marlin.tileRows(4 * 64, 128), 8u) << "mean 2";
  EXPECT_EQ(marlin.tileRows(4 * 230, 128), 8u) << "mean 7.19 fills 8 rows to 0.898";
  EXPECT_EQ(marlin.tileRows(4 * 231, 128), 16u) << "mean 7.22 fills them to 0.902";
  EXPECT_EQ(marlin.tileRows(4 * 922, 128), 48u) << "mean 28.8 fills 32 rows to exactly 0.9, not less";
  EXPECT_EQ(marlin.tileRows(4 * 921, 128), 32u) << "mean 28.78";
  EXPECT_EQ(marlin.tileRows(4 * 1106, 128), 48u) << "mean 34.6 fills 48 rows to 0.72";
  EXPECT_EQ(marlin.tileRows(4 * 1408, 128), 64u) << "mean 44 fills them to 0.92";
  EXPECT_EQ(marlin.tileRows(4 * 7373, 128), 64u) << "mean 230: none, so the largest";
  EXPECT_EQ(marlin.tileRows(0, 128), 8u);
  MoeKernelConfig whole = marlin;
  whole.tileFill = 1.0;
  EXPECT_EQ(whole.tileRows(4 * 1024, 128), 48u) << "mean 32 fills 32 rows: not less than 1";
  EXPECT_EQ(whole.tileRows(4 * 1000, 128), 32u);
}

// Each expert's GEMMs compute its tokens padded to whole tiles; the weights it reads and the
// tokens it counts do not change.
TEST(MoeKernel, ThePlannerPadsEachExpertsTokensToWholeTiles) {
  const ModelConfig m = shippedModel("tiny-moe");
  ASSERT_EQ(m.routedExperts, 16);
  // 16 gates over 16 experts: mean 1.
  const std::vector<uint64_t> tokens = {0, 3, 0, 0, 0, 7, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0};
  const Routing routed = routing(m, [&](int, int e) { return tokens[u(e)]; });
  const StepBatch batch = decodes(4, 100, &routed);
  const StepPlanner exact(m, jalapeno(), ModelShard{});
  StepPlanner tiled(m, jalapeno(), ModelShard{});
  const MoeKernelConfig small = kernel(4, 128);
  tiled.setMoeKernel(&small);
  EXPECT_FALSE(tiled.plansLike(exact)) << "the kernel is part of what a plan depends on";
  const double perToken = 2.0 * static_cast<double>(m.expertParams());
  const StepPlan a = exact.plan(batch);
  const StepPlan b = tiled.plan(batch);
  EXPECT_DOUBLE_EQ(flopsOf(a, "experts", 0), 16 * perToken);
  EXPECT_DOUBLE_EQ(flopsOf(b, "experts", 0), (4 + 8 + 4 + 4) * perToken) << "3, 7, 2, 4 in tiles of 4";
  EXPECT_EQ(bytesOf(b, "experts", 0, tlm::OpKind::kRead), bytesOf(a, "experts", 0, tlm::OpKind::kRead));
  EXPECT_DOUBLE_EQ(b.expertTokens, a.expertTokens);
  const MoeKernelConfig wide = kernel(16, 128);
  tiled.setMoeKernel(&wide);
  EXPECT_DOUBLE_EQ(flopsOf(tiled.plan(batch), "experts", 0), 4 * 16 * perToken) << "every expert one 16-row tile";
  tiled.setMoeKernel(nullptr);
  EXPECT_DOUBLE_EQ(flopsOf(tiled.plan(batch), "experts", 0), 16 * perToken);
}

// A kernel that needs whole tiles in its GEMMs' dimensions stores the experts padded (vLLM's
// Marlin: hidden to 256, inner to 128; gpt-oss's 720-wide slice at tp 4 is 768): the padding is
// held in HBM, streamed and multiplied like weights. Hand-computed for an expert of hidden 960 and
// inner 720 stored as 1024 x 768; taking the kernel off lays the weights out as before.
TEST(MoeKernel, AKernelThatPadsTheExpertsHoldsStreamsAndMultipliesThePadding) {
  ModelConfig m = shippedModel("tiny-moe");
  m.hidden = 960;
  m.moeIntermediate = 720;
  const std::vector<uint64_t> tokens = {0, 3, 0, 0, 0, 7, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0};
  const Routing routed = routing(m, [&](int, int e) { return tokens[u(e)]; });
  const StepBatch batch = decodes(4, 100, &routed);
  MoeKernelConfig exactRows = kernel(1, 1);
  StepPlanner plain(m, jalapeno(), ModelShard{});
  plain.setMoeKernel(&exactRows);
  MoeKernelConfig marlin = exactRows;
  marlin.hiddenAlign = 256;
  marlin.innerAlign = 128;
  StepPlanner padded(m, jalapeno(), ModelShard{});
  padded.setMoeKernel(&marlin);
  EXPECT_FALSE(padded.plansLike(plain));

  const double bits = m.expertFormat().bitsPerElement();
  const auto expertBytes = [&](uint64_t hidden, uint64_t inner) {
    return planning::aligned(planning::bytesOf(hidden * 2 * inner, bits)) + planning::bytesOf(inner * hidden, bits);
  };
  const auto heldBytes = [&](uint64_t hidden, uint64_t inner) {
    return planning::bytesOf(hidden * 2 * inner, bits) + planning::bytesOf(inner * hidden, bits);
  };
  const uint64_t moeLayers = 4 * 16;  // every layer's 16 experts
  EXPECT_DOUBLE_EQ(padded.weightBytes() - plain.weightBytes(),
                   static_cast<double>(moeLayers * (heldBytes(1024, 768) - heldBytes(960, 720))));
  // Four experts received tokens: each streams its padded slice, and its GEMMs multiply it.
  const StepPlan a = plain.plan(batch);
  const StepPlan b = padded.plan(batch);
  EXPECT_EQ(bytesOf(a, "experts", 0, tlm::OpKind::kRead), 4 * expertBytes(960, 720));
  EXPECT_EQ(bytesOf(b, "experts", 0, tlm::OpKind::kRead), 4 * expertBytes(1024, 768));
  EXPECT_DOUBLE_EQ(flopsOf(a, "experts", 0), 16.0 * 2 * 3 * 960 * 720);
  EXPECT_DOUBLE_EQ(flopsOf(b, "experts", 0), 16.0 * 2 * 3 * 1024 * 768);
  EXPECT_DOUBLE_EQ(b.expertTokens, a.expertTokens) << "the tokens are the same";
  // A tensor-parallel rank pads its own slice: 360 of tp 2 is stored as 384.
  StepPlanner rank(m, jalapeno(), ModelShard(2, 0));
  rank.setMoeKernel(&marlin);
  EXPECT_EQ(bytesOf(rank.plan(batch), "experts", 0, tlm::OpKind::kRead), 4 * expertBytes(1024, 384));
  // Off again: the layout is the plain one, address for address.
  padded.setMoeKernel(&exactRows);
  EXPECT_TRUE(padded.plansLike(plain));
  EXPECT_DOUBLE_EQ(padded.weightBytes(), plain.weightBytes());
  EXPECT_EQ(padded.kvBase(), plain.kvBase());
}

double vectorOpsOf(const StepPlan& plan, const std::string& name, uint32_t layer) {
  double ops = 0.0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name == name && op.layer == layer) ops += op.vectorOps;
  }
  return ops;
}

// MXFP4 experts computed in BF16 are converted by every tile of rows that multiplies them:
// convert_ops per weight element per tile, on the vector unit; experts as wide as the compute
// are not converted.
TEST(MoeKernel, MixedInputExpertsAreConvertedOncePerTileOfRows) {
  ModelConfig m = shippedModel("tiny-moe");
  m.computePrecision = tlm::Precision::kBf16;
  const std::vector<uint64_t> tokens = {0, 3, 0, 0, 0, 7, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0};
  const Routing routed = routing(m, [&](int, int e) { return tokens[u(e)]; });
  const StepBatch batch = decodes(4, 100, &routed);
  StepPlanner planner(m, jalapeno(), ModelShard{});
  MoeKernelConfig k = kernel(4, 4);
  planner.setMoeKernel(&k);
  const double without = vectorOpsOf(planner.plan(batch), "experts", 0);
  k.convertOps = 4.0;
  planner.setMoeKernel(&k);
  const double with = vectorOpsOf(planner.plan(batch), "experts", 0);
  const double tiles = 1 + 2 + 1 + 1;  // 3, 7, 2 and 4 tokens in tiles of 4
  EXPECT_DOUBLE_EQ(with - without, 4.0 * tiles * static_cast<double>(m.expertParams()));
  m.computePrecision = tlm::Precision::kFp4;  // no conversion: the experts' own precision
  StepPlanner native(m, jalapeno(), ModelShard{});
  native.setMoeKernel(&k);
  MoeKernelConfig plain = kernel(4, 4);
  StepPlanner nativePlain(m, jalapeno(), ModelShard{});
  nativePlain.setMoeKernel(&plain);
  EXPECT_DOUBLE_EQ(vectorOpsOf(native.plan(batch), "experts", 0), vectorOpsOf(nativePlain.plan(batch), "experts", 0));
}

// A kernel issued as warp-level mma.sync (Marlin) marks its experts' GEMMs so: the tensor core
// runs them at the chip's warp_mma_rate. The router and the attention's GEMMs keep the array rate.
TEST(MoeKernel, AWarpMmaKernelMarksItsExpertGemmsAndNothingElse) {
  const ModelConfig m = shippedModel("tiny-moe");
  const std::vector<uint64_t> tokens = {0, 3, 0, 0, 0, 7, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0};
  const Routing routed = routing(m, [&](int, int e) { return tokens[u(e)]; });
  const StepBatch batch = decodes(4, 100, &routed);
  StepPlanner planner(m, jalapeno(), ModelShard{});
  MoeKernelConfig k = kernel(8, 64);
  const auto warp = [&] {
    planner.setMoeKernel(&k);
    int experts = 0;
    int others = 0;
    for (const PlannedOp& op : planner.plan(batch).ops) {
      if (!op.warpMma) continue;
      (op.name == "experts" ? experts : others) += 1;
    }
    return std::make_pair(experts, others);
  };
  EXPECT_EQ(warp(), std::make_pair(0, 0)) << "warpgroup, the default";
  k.mma = MmaKind::kWarp;
  const auto [experts, others] = warp();
  EXPECT_EQ(experts, m.layers) << "one experts op a layer, each marked";
  EXPECT_EQ(others, 0);
  hw::TensorCoreConfig tc = jalapeno().tensorCore;
  tc.warpMmaRate = 0.667;
  const tlm::GemmShape g{4096, 4096, 4096, 1};  // large enough that the array's fill is negligible
  EXPECT_NEAR(static_cast<double>(tc.gemmCycles(g, tlm::Precision::kBf16, true)) /
                  static_cast<double>(tc.gemmCycles(g, tlm::Precision::kBf16, false)),
              1.0 / 0.667, 0.01);
}

SoftwareStackConfig stack(const std::string& kernels) {
  return SoftwareStackConfig::schema().parse(config::loadConfigText(
      "software_stack", "name: s\ndescription: d\nframework: f\nhardware: h\nmoe_kernels:\n" + kernels, "s.yaml"));
}

TEST(MoeKernel, AStackRunsEachExpertPrecisionWithItsFirstKernelThatServesIt) {
  const SoftwareStackConfig s = stack(
      "- {name: triton, expert_precisions: [fp4], min_tile_rows: 16}\n"
      "- {name: grouped, expert_precisions: [fp8, fp4]}\n");
  ASSERT_NE(s.moeKernelFor(tlm::Precision::kFp4), nullptr);
  EXPECT_EQ(s.moeKernelFor(tlm::Precision::kFp4)->name, "triton");
  EXPECT_EQ(s.moeKernelFor(tlm::Precision::kFp4)->minTileRows, 16);
  EXPECT_EQ(s.moeKernelFor(tlm::Precision::kFp4)->maxTileRows, 128);
  EXPECT_EQ(s.moeKernelFor(tlm::Precision::kFp8)->name, "grouped");
  EXPECT_EQ(s.moeKernelFor(tlm::Precision::kBf16), nullptr);
  EXPECT_FALSE(s.ideal());
  EXPECT_EQ(stack("- {name: any}\n").moeKernelFor(tlm::Precision::kBf16)->name, "any");
  EXPECT_EQ(stack("- {name: marlin, mma: warp}\n").moeKernelFor(tlm::Precision::kFp4)->mma, MmaKind::kWarp);
  const SoftwareStackConfig marlin = stack("- {name: marlin, tile_rows: [8, 16, 32, 48, 64], tile_fill: 0.9}\n");
  const MoeKernelConfig* listed = marlin.moeKernelFor(tlm::Precision::kFp4);
  ASSERT_NE(listed, nullptr);
  EXPECT_EQ(listed->tileRowChoices, (std::vector<int>{8, 16, 32, 48, 64}));
  EXPECT_DOUBLE_EQ(listed->tileFill, 0.9);
}

TEST(MoeKernel, ABadKernelIsRefusedNamingItsKey) {
  const auto refused = [](const std::string& kernels, const std::string& key) {
    EXPECT_TRUE(test::mentions(test::configErrorOf([&] { stack(kernels); }, kernels), {key})) << kernels;
  };
  refused("- {name: k, min_tile_rows: 64, max_tile_rows: 32}\n", "max_tile_rows");
  refused("- {name: k, expert_precisions: [mxfp4]}\n", "expert_precisions");
  refused("- {name: k, min_tile_rows: 0}\n", "min_tile_rows");
  refused("- {name: k, tile_row: 16}\n", "tile_row");
  refused("- {name: k, convert_ops: -1}\n", "convert_ops");
  refused("- {min_tile_rows: 16}\n", "name");
  refused("- {name: k, mma: wgmma}\n", "mma");
  refused("- {name: k, tile_rows: [16, 8]}\n", "tile_rows");
  refused("- {name: k, tile_rows: [8, 8]}\n", "tile_rows");
  refused("- {name: k, tile_rows: [8, 16], min_tile_rows: 8}\n", "min_tile_rows");
  refused("- {name: k, tile_rows: [8, 16], max_tile_rows: 16}\n", "max_tile_rows");
  refused("- {name: k, tile_fill: 0.9}\n", "tile_fill");
  refused("- {name: k, tile_rows: [8], tile_fill: 1.5}\n", "tile_fill");
  refused("- {name: k, tile_rows: [0, 8]}\n", "tile_rows");
  refused("- {name: k, hidden_align: 0}\n", "hidden_align");
  refused("- {name: k, inner_align: 1.5}\n", "inner_align");
}

}  // namespace scoville::workload::moe_kernel_test
