// The attention kernel's mechanisms (workloads/AttentionKernel.h): a fused kernel's thread blocks on
// the compute units (hw/GridSchedule.h), warp-level MMA, the softmax's exp on special-function lanes,
// FlashAttention 2's split heuristic, and the planner's layout of its tiles. Closed forms, no
// simulation; test/golden/KernelsGoldenTest.cpp holds the H200 measurements against all of it.
#include <gtest/gtest.h>

#include <string>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "hw/GridSchedule.h"
#include "hw/TensorCoreConfig.h"
#include "hw/VectorUnitConfig.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Shipped.h"
#include "workloads/AttentionKernel.h"
#include "workloads/KernelBench.h"
#include "workloads/StepPlan.h"
#include "workloads/StepPlanAttention.h"

namespace scoville::workload::attention_kernel_test {
namespace {

tlm::WorkGrid grid(std::initializer_list<tlm::WorkGrid::Run> runs, int slots) {
  tlm::WorkGrid g;
  g.runs = runs;
  g.slotsPerUnit = slots;
  return g;
}

TEST(GridSchedule, AnEvenGridTakesItsWorkOverTheUnits) {
  // 8 blocks of 5 iterations on 4 units, one at a time: two waves of 5.
  EXPECT_DOUBLE_EQ(hw::gridMakespan(grid({{8, 5}}, 1), 4), 10.0);
  EXPECT_DOUBLE_EQ(hw::gridStretch(grid({{8, 5}}, 1), 4), 1.0);
  // Two resident blocks share a unit: the same 10.
  EXPECT_DOUBLE_EQ(hw::gridMakespan(grid({{8, 5}}, 2), 4), 10.0);
}

TEST(GridSchedule, ALastPartialWaveLeavesUnitsIdle) {
  // 5 blocks of 1 iteration on 4 units: the fifth runs alone, 2 instead of 5 / 4.
  EXPECT_DOUBLE_EQ(hw::gridMakespan(grid({{5, 1}}, 1), 4), 2.0);
  EXPECT_DOUBLE_EQ(hw::gridStretch(grid({{5, 1}}, 1), 4), 2.0 / (5.0 / 4.0));
  // Fewer blocks than units: one block's time.
  EXPECT_DOUBLE_EQ(hw::gridMakespan(grid({{3, 7}}, 1), 4), 7.0);
}

TEST(GridSchedule, FreedSlotsTakeTheNextBlockInLaunchOrder) {
  // Blocks 1, 2, 3, 4 on 2 units: unit 0 runs 1 then 3 (ends at 4), unit 1 runs 2 then 4 (ends at
  // 6); evenly it would be 5.
  const tlm::WorkGrid g = grid({{1, 1}, {1, 2}, {1, 3}, {1, 4}}, 1);
  EXPECT_DOUBLE_EQ(hw::gridMakespan(g, 2), 6.0);
  EXPECT_DOUBLE_EQ(hw::gridStretch(g, 2), 6.0 / 5.0);
}

TEST(GridSchedule, ResidentBlocksShareTheirUnitAndALoneBlockIssuesAtItsShare) {
  // Blocks of 4 and 8 on one unit with two slots: each at half the unit's rate until the first is
  // done at 8; the second's last 4 then run alone, still at half: 8 more, 16.
  EXPECT_DOUBLE_EQ(hw::gridMakespan(grid({{1, 4}, {1, 8}}, 2), 1), 16.0);
  // One slot: a lone block has the whole unit, 4 then 8.
  EXPECT_DOUBLE_EQ(hw::gridMakespan(grid({{1, 4}, {1, 8}}, 1), 1), 12.0);
  // Three blocks of 6 on one unit with two slots: two at half speed to 12, the third alone at half
  // to 24; the unit's work evenly would be 18.
  EXPECT_DOUBLE_EQ(hw::gridMakespan(grid({{3, 6}}, 2), 1), 24.0);
  // A causal grid, 8 row blocks of 2, 4, ..., 16 iterations on 4 units with two slots: the first
  // wave fills slot 0 with 2, 4, 6, 8 and slot 1 with 10, 12, 14, 16, so unit 3 holds 8 and 16:
  // 8 done at 16, the 16's other 8 alone at half speed, 32 (the even spread: 18).
  tlm::WorkGrid causal;
  causal.slotsPerUnit = 2;
  for (uint32_t j = 1; j <= 8; ++j) causal.add(1, 2 * j);
  EXPECT_DOUBLE_EQ(hw::gridMakespan(causal, 4), 32.0);
  EXPECT_DOUBLE_EQ(hw::gridStretch(causal, 4), 32.0 / (72.0 / 4.0));
}

TEST(GridSchedule, AnEmptyGridOrNoUnitsStretchesNothing) {
  EXPECT_DOUBLE_EQ(hw::gridStretch(tlm::WorkGrid{}, 4), 1.0);
  EXPECT_DOUBLE_EQ(hw::gridStretch(grid({{5, 1}}, 1), 0), 1.0);
  tlm::WorkGrid g;
  g.add(0, 3);
  g.add(2, 0);
  EXPECT_TRUE(g.runs.empty()) << "blocks without work are no blocks";
}

TEST(SpecialFunctionLanes, ExpsRunBesideTheElementLanes) {
  hw::VectorUnitConfig v;
  v.lanes = 100;
  v.clockHz = 1e9;
  v.pipelineLatencyCycles = 5;
  // Without special-function lanes every op takes the lanes: 5000 / 100.
  EXPECT_EQ(v.cycles(5000, 1000), 50u + 5u);
  // With 10: the 4000 others take 40 cycles, the 1000 exps 100 beside them; the slower sets it.
  v.specialFunctionLanes = 10;
  EXPECT_EQ(v.cycles(5000, 1000), 100u + 5u);
  v.specialFunctionLanes = 50;
  EXPECT_EQ(v.cycles(5000, 1000), 40u + 5u);
  EXPECT_EQ(v.cycles(5000, 0), 50u + 5u) << "no exps: the lanes alone";
  EXPECT_EQ(v.cycles(0, 0), 0u);
}

TEST(WarpMma, RunsAtItsShareOfTheArrayRate) {
  hw::TensorCoreConfig c;
  c.count = 4;
  c.clockHz = 1e9;
  c.arrayRows = 16;
  c.arrayCols = 32;
  c.macsPerCell = hw::MacRates{0.0, 1.0, 2.0, 0.0};
  c.pipelineLatencyCycles = 0;
  c.operandBuffers = 2;
  c.warpMmaRate = 0.5;
  const tlm::GemmShape g{4096, 4096, 4096, 1};
  const auto fixed = static_cast<uint64_t>(c.arrayRows + c.arrayCols);
  const uint64_t array = c.gemmCycles(g, tlm::Precision::kBf16) - fixed;
  const uint64_t warp = c.gemmCycles(g, tlm::Precision::kBf16, true) - fixed;
  EXPECT_EQ(warp, 2 * array);
  EXPECT_EQ(c.computeUnits(), 4) << "units 0: every array is a unit";
  c.units = 2;
  EXPECT_EQ(c.computeUnits(), 2);
}

TEST(WarpMma, UnitsMustDivideTheArrays) {
  const auto parse = [](const std::string& extra) {
    return hw::TensorCoreConfig::schema().parse(config::loadConfigText(
        "tensor_core",
        "count: 528\nclock: 1.83 GHz\narray_rows: 16\narray_cols: 32\nmacs_per_cell_per_cycle: {bf16: 1}\n"
        "pipeline_latency_cycles: 32\n" +
            extra,
        "t.yaml"));
  };
  EXPECT_EQ(parse("units: 132\nwarp_mma_rate: 0.667\n").units, 132);
  EXPECT_THROW(parse("units: 100\n"), config::ConfigError);
  EXPECT_THROW(parse("warp_mma_rate: 1.5\n"), config::ConfigError);
  EXPECT_THROW(parse("warp_mma_rat: 0.5\n"), config::ConfigError);
}

AttentionKernelConfig flashAttention2() {
  return AttentionKernelConfig::schema().parse(config::loadConfigFile(
      "attention_kernel", config::dataDirectory() + "/workloads/validation/flash-attention-2-sm90.yaml"));
}

TEST(AttentionKernelSplits, FlashAttention2sHeuristic) {
  const AttentionKernelConfig fa2 = flashAttention2();
  // 264 slots (132 SMs x 2). A full grid is not split.
  EXPECT_EQ(fa2.splits(512, 132, 32), 1);
  EXPECT_EQ(fa2.splits(212, 132, 32), 1) << "0.8 x 264 = 211.2";
  // 8 blocks (one sequence, 8 KV heads), 32 KV blocks: of the eligible counts (those that change
  // the blocks per split: 1-8, 11, 16, 32) only 32 splits (256 blocks) reach 0.85 of the best.
  EXPECT_EQ(fa2.splits(8, 132, 32), 32);
  // 8 KV blocks: at most 8 splits.
  EXPECT_EQ(fa2.splits(8, 132, 8), 8);
  // 64 blocks (8 sequences): 4 splits fill 256 of 264 slots.
  EXPECT_EQ(fa2.splits(64, 132, 256), 4);
  AttentionKernelConfig noSplit = fa2;
  noSplit.splitKv.reset();
  EXPECT_EQ(noSplit.splits(8, 132, 32), 1);
}

const hw::ChipConfig& h200() {
  static const platform::PlatformConfig p = test::shippedPlatform("h200-hgx8");
  return p.chipConfig(0);
}

MeasuredKernel attention(const std::string& yaml) {
  const std::string text =
      "name: t\ndescription: d\nhardware: H200\nplatform: h200-hgx8\ndate: '2026-12-04'\nsource: s\nmethod: m\n"
      "kernels:\n" +
      yaml;
  return KernelDataset::schema().parse(config::loadConfigText("kernels", text, "k.yaml")).kernels.at(0);
}

double sum(const StepPlan& plan, const char* name, double PlannedOp::*member) {
  double s = 0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name == name) s += op.*member;
  }
  return s;
}

TEST(AttentionKernelPlan, SplitDecodePadsTheRowsAndCombines) {
  // One sequence of 4096 cached tokens, 64 query heads over 8 KV heads: 8 rows per KV head, padded
  // to the split kernel's 64; 4097 KV tokens in 33 blocks of 128, one per split: 33 splits of the
  // 8 blocks fill all 264 slots (132 SMs x 2), the first count within 0.85 of that.
  const StepPlan plan = planKernel(
      attention("- {id: a, kind: attention_decode, batch: 1, context: 4096, heads: 64, kv_heads: 8, head_dim: 128, "
                "time: 18 us}\n"),
      h200(), flashAttention2());
  const PlannedOp* first = nullptr;
  int combines = 0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name == "attention" && first == nullptr) first = &op;
    combines += op.name == "attention_combine";
  }
  ASSERT_NE(first, nullptr);
  ASSERT_NE(first->grid, nullptr);
  EXPECT_TRUE(first->warpMma);
  EXPECT_EQ(first->gemms.at(0).m, 64u) << "8 rows padded to the split kernel's block";
  EXPECT_EQ(first->grid->slotsPerUnit, 2);
  const uint64_t splits = first->grid->blocks() / 8;
  EXPECT_EQ(splits, 33u);
  EXPECT_EQ(first->grid->iterations(), 8u * 33u) << "one 128-token block per split";
  EXPECT_EQ(combines, 1);
  // Combine: per real row (8 per KV head) and split, the partial's 128 elements scaled and summed
  // plus the softmax ops of its log-sum-exp; one exp each.
  EXPECT_DOUBLE_EQ(sum(plan, "attention_combine", &PlannedOp::vectorOps), 64.0 * 33 * (2 * 128 + 5));
  EXPECT_DOUBLE_EQ(sum(plan, "attention_combine", &PlannedOp::specialOps), 64.0 * 33);
  // The softmax: one exp in five ops of every padded score.
  EXPECT_DOUBLE_EQ(sum(plan, "attention", &PlannedOp::vectorOps), 5.0 * 64 * 33 * 128 * 8);
  EXPECT_DOUBLE_EQ(sum(plan, "attention", &PlannedOp::specialOps), 64.0 * 33 * 128 * 8);
}

TEST(AttentionKernelPlan, AFullDecodeGridIsNotSplitAndUsesTheMainTiles) {
  // 64 sequences x 8 KV heads = 512 blocks: not split; rows padded to 128, KV to blocks of 64.
  const StepPlan plan =
      planKernel(attention("- {id: a, kind: attention_decode, batch: 64, context: 4096, heads: 64, kv_heads: 8, "
                           "head_dim: 128, time: 444 us}\n"),
                 h200(), flashAttention2());
  for (const PlannedOp& op : plan.ops) EXPECT_NE(op.name, "attention_combine");
  const PlannedOp& op = plan.ops.front();
  ASSERT_NE(op.grid, nullptr);
  EXPECT_EQ(op.gemms.at(0).m, 128u);
  EXPECT_EQ(op.grid->blocks(), 512u);
  EXPECT_EQ(op.grid->iterations(), 512u * 65u) << "4097 tokens in 65 blocks of 64";
}

TEST(AttentionKernelPlan, CausalPrefillRowBlocksSeeTheirOwnKv) {
  // 1024 tokens, 32 heads: 8 row blocks of 128 per head, block j seeing 128 (j + 1) tokens in
  // 2 (j + 1) KV blocks of 64: 72 iterations per head.
  const StepPlan plan = planKernel(
      attention("- {id: p, kind: attention_prefill, context: 1024, heads: 32, head_dim: 128, time: 56 us}\n"), h200(),
      flashAttention2());
  const PlannedOp& last = plan.ops.back();
  ASSERT_NE(last.grid, nullptr);
  EXPECT_EQ(last.grid->blocks(), 32u * 8u);
  EXPECT_EQ(last.grid->iterations(), 32u * 72u);
  EXPECT_EQ(last.grid->runs.front().iterations, 2u);
  EXPECT_EQ(last.grid->runs.at(7).iterations, 16u);
  // Scores and values over the padded blocks: 2 GEMMs of 128 x (72 x 64) x 128 per head.
  EXPECT_DOUBLE_EQ(plan.flops, 2.0 * 2.0 * 128 * 72 * 64 * 128 * 32);
  // Against the exact GEMMs: more FLOPs (the diagonal blocks' masked half), the same bytes.
  const StepPlan exact = planKernel(
      attention("- {id: p, kind: attention_prefill, context: 1024, heads: 32, head_dim: 128, time: 56 us}\n"), h200());
  EXPECT_GT(plan.flops, exact.flops);
  EXPECT_DOUBLE_EQ(plan.bytesMoved, exact.bytesMoved);
  EXPECT_EQ(exact.ops.back().grid, nullptr);
}

TEST(AttentionKernelLayout, AStepWithAPrefillIsNotSplitAndAWindowBoundsTheKv) {
  const AttentionKernelConfig fa2 = flashAttention2();
  StepSequence decode;
  decode.context = 4095;  // 4096 KV tokens after its token
  StepSequence chunk;
  chunk.context = 0;
  chunk.tokens = 256;
  // Decode alone: 8 blocks (8 KV heads), split 32 ways over 32 KV blocks of 128.
  const KernelAttentionLayout alone = layOutKernelAttention(fa2, {decode}, 8, 8, 128, 0, false, 132);
  EXPECT_EQ(alone.splits, 32);
  // With a prefill chunk in the step: one kernel, not split, the main tiles (128 rows, 64 tokens).
  const KernelAttentionLayout mixed = layOutKernelAttention(fa2, {decode, chunk}, 8, 8, 128, 0, false, 132);
  EXPECT_EQ(mixed.splits, 1);
  ASSERT_EQ(mixed.decodeSpans.entries.size(), 1u);
  EXPECT_EQ(mixed.decodeSpans.entries[0], std::make_pair(uint64_t{128}, uint64_t{4096}));
  // The chunk's 2 row blocks of 128 see 128 and 256 tokens: 2 and 4 KV blocks, for 64 query heads.
  ASSERT_EQ(mixed.prefillGemms.size(), 2u);
  EXPECT_EQ(mixed.prefillGemms[0].n, 6u * 64u);
  EXPECT_EQ(mixed.grid->blocks(), 8u + 64u * 2u);
  EXPECT_EQ(mixed.grid->iterations(), 8u * 64u + 64u * 6u);
  // A 128-token window: the decode reads its last 128 tokens. Of 4096 they are two whole blocks
  // of 64; of 4001 (tokens 3873 to 4000) they straddle three.
  EXPECT_EQ(layOutKernelAttention(fa2, {decode, chunk}, 8, 8, 128, 128, false, 132).decodeSpans.entries[0].second,
            2u * 64u);
  StepSequence offset = decode;
  offset.context = 4000;
  EXPECT_EQ(layOutKernelAttention(fa2, {offset, chunk}, 8, 8, 128, 128, false, 132).decodeSpans.entries[0].second,
            3u * 64u);
  // Sinks: one more logit per real query row and head.
  const KernelAttentionLayout sinks = layOutKernelAttention(fa2, {decode}, 8, 8, 128, 0, true, 132);
  EXPECT_DOUBLE_EQ(sinks.decodeScores - alone.decodeScores, 64.0);
}

TEST(AttentionKernelPlan, ADatasetsKernelAndAKernelsQueryBlockConflict) {
  const std::string head =
      "name: t\ndescription: d\nhardware: H200\nplatform: h200-hgx8\ndate: '2026-12-04'\nsource: s\nmethod: m\n"
      "attention_kernel: {name: fa2, mma: warp}\nkernels:\n";
  const std::optional<config::ConfigError> e = test::configErrorOf(
      [&] {
        KernelDataset::schema().parse(config::loadConfigText(
            "kernels",
            head + "- {id: a, kind: attention_decode, context: 8, heads: 8, kv_heads: 8, head_dim: 8, query_block: 64, "
                   "time: 1 us}\n",
            "k.yaml"));
      },
      "a query_block beside the dataset's attention_kernel");
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("query_block"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find("attention_kernel"), std::string::npos) << e->what();
  EXPECT_THROW(KernelDataset::schema().parse(config::loadConfigText(
                   "kernels",
                   "name: t\ndescription: d\nhardware: H\nplatform: h200-hgx8\ndate: d\nsource: s\nmethod: m\n"
                   "attention_kernel: {name: fa2, mma: wrap}\nkernels:\n- {id: r, kind: hbm_read, bytes: 1 GiB, "
                   "time: 1 us}\n",
                   "k.yaml")),
               config::ConfigError);
}

}  // namespace
}  // namespace scoville::workload::attention_kernel_test
