// The step planner: one engine step of a model shard (bytes, GEMMs, attention, KV, tensor
// parallelism). Pure logic, no SystemC. Mixture-of-experts planning: StepPlannerMoeTest.cpp.

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
#include "hw/chip/ChipConfig.h"
#include "hw/kv/KvBlockAllocator.h"
#include "test/support/Shipped.h"
#include "test/unit/StepPlannerHelpers.h"
#include "config/ConfigError.h"
#include "config/Loader.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {
namespace {

using namespace planner_test;

TEST(StepPlanner, AttendedTokensMatchesABruteForceSum) {
  int checked = 0;
  for (uint64_t window : {0u, 1u, 2u, 7u, 128u, 300u}) {
    for (uint64_t context = 0; context <= 320; context += (context < 10 ? 1 : 13)) {
      for (uint64_t tokens : {0u, 1u, 2u, 5u, 64u, 127u, 128u, 129u, 400u}) {
        uint64_t expected = 0;
        for (uint64_t j = 1; j <= tokens; ++j) expected += window == 0 ? context + j : std::min(context + j, window);
        EXPECT_EQ(attendedTokens(context, tokens, window), expected)
            << "context " << context << " tokens " << tokens << " window " << window;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
  // Large values do not overflow the closed form: 2^20 queries after 2^30 cached tokens.
  EXPECT_EQ(attendedTokens(1ull << 30, 1ull << 20, 0), (1ull << 50) + (1ull << 20) * ((1ull << 20) + 1) / 2);
  EXPECT_EQ(attendedTokens(1ull << 30, 1ull << 20, 4096), (1ull << 20) * 4096);
}

TEST(StepPlanner, SlidingWindowLayersReadAtMostTheWindowOfCachedKvAndFullLayersAllOfIt) {
  const ModelConfig m = shippedModel("tiny-moe");
  ASSERT_EQ(m.slidingWindow, 128);
  ASSERT_TRUE(m.isSlidingLayer(0));
  ASSERT_FALSE(m.isSlidingLayer(1));
  const StepPlanner planner(m, jalapeno(), ModelShard{});
  const uint64_t perToken = 2ull * 4 * 64 * 2;  // K and V of 4 heads of 64, BF16
  EXPECT_EQ(planner.kvBytesPerTokenPerLayer(), perToken);
  EXPECT_DOUBLE_EQ(m.kvBytesPerTokenPerLayer(), static_cast<double>(perToken));
  const Routing routed = routing(m, [](int, int e) { return e < 8 ? 1u : 0u; });
  StepBatch b;
  b.kvLayerStride = 64ull << 20;
  b.sequences = {StepSequence{1, 1000, 1, true, 0}, StepSequence{2, 50, 1, true, 4096},
                 StepSequence{3, 127, 1, true, 8192}};
  b.expertTokens = &routed;
  const StepPlan plan = planner.plan(b);
  for (uint32_t l = 0; l < 4; ++l) {
    SCOPED_TRACE(l);
    // A query sees the window: itself and window - 1 cached tokens.
    const uint64_t cached = m.isSlidingLayer(static_cast<int>(l)) ? 127 + 50 + 127 : 1000 + 50 + 127;
    EXPECT_EQ(bytesOf(plan, "attention", l, tlm::OpKind::kKvRead), cached * perToken);
    EXPECT_EQ(bytesOf(plan, "attention", l, tlm::OpKind::kKvAppend), 3 * perToken);
    for (const PlannedOp& op : plan.ops) {
      if (op.name != "attention" || op.layer != l) continue;
      for (const MemoryAccess& a : op.accesses) {
        EXPECT_GE(a.address, planner.kvBase() + l * b.kvLayerStride) << "KV of layer l is in its region";
        EXPECT_LE(a.address + a.bytes, planner.kvBase() + (l + 1) * b.kvLayerStride);
      }
    }
  }
  // The cache after the step: the window layers keep their last 128 tokens.
  EXPECT_DOUBLE_EQ(plan.kvBytes, static_cast<double>(((1001 + 51 + 128) * 2 + (128 + 51 + 128) * 2) * perToken));
}

TEST(StepPlanner, KvStreamStartingNearTheEndOfItsLayerRegionWrapsInsideIt) {
  // Sequences' KV addresses are offsets into the chip's KV region (past the weights); the step
  // reads the batch's KV as one stream from the first sequence's block, which wraps at the end of
  // the layer's region instead of running into the next layer's (or past the HBM).
  const ModelConfig m = shippedModel("tiny-moe");
  const StepPlanner planner(m, jalapeno(), ModelShard{});
  const uint64_t perToken = planner.kvBytesPerTokenPerLayer();
  StepBatch b;
  b.kvLayerStride = 4000 * perToken;
  b.sequences = {StepSequence{1, 2000, 1, true, b.kvLayerStride - 100 * perToken}};
  const Routing routed = routing(m, [](int, int e) { return e < 8 ? 1u : 0u; });
  b.expertTokens = &routed;
  const StepPlan plan = planner.plan(b);
  const uint32_t full = 1;  // a full-attention layer: reads all 2,000 cached tokens
  ASSERT_FALSE(m.isSlidingLayer(static_cast<int>(full)));
  const uint64_t begin = planner.kvBase() + full * b.kvLayerStride;
  uint64_t read = 0;
  uint64_t wrapped = 0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name != "attention" || op.layer != full) continue;
    for (const MemoryAccess& a : op.accesses) {
      EXPECT_GE(a.address, begin);
      EXPECT_LE(a.address + a.bytes, begin + b.kvLayerStride);
      if (a.kind == tlm::OpKind::kKvRead) read += a.bytes;
      if (a.address == begin) ++wrapped;
    }
  }
  EXPECT_EQ(read, 2000 * perToken);
  EXPECT_EQ(wrapped, 1u) << "the stream continues at the region's start";
}

TEST(StepPlanner, KvBlocksOffTheChipAreReadAndAppendedOnTheirTierAndNotCountedAsHbmBytes) {
  // tiny-moe's sliding layer 0 reads the last 127 cached tokens; its full layers all of them. A
  // cache of 4 local blocks of 16 tokens spills request 2's blocks to remote HBM (spill_to_remote)
  // or host memory (offload_to_host); the plan reads and appends each token on its block's tier.
  const ModelConfig m = shippedModel("tiny-moe");
  const StepPlanner planner(m, jalapeno(), ModelShard{});
  const uint64_t perToken = planner.kvBytesPerTokenPerLayer();
  const Routing routed = routing(m, [](int, int e) { return e < 8 ? 1u : 0u; });
  for (const auto& [policy, tier] :
       {std::pair{"spill_to_remote", hw::KvTier::kRemoteHbm}, std::pair{"offload_to_host", hw::KvTier::kHost}}) {
    SCOPED_TRACE(policy);
    hw::KvCacheConfig config;
    config.blockTokens = 16;
    config.placement = policy;
    const hw::KvModelShape shape{static_cast<uint32_t>(m.layers), perToken};
    const uint64_t block = 16 * perToken * u(m.layers);
    hw::KvTierCapacities capacities;
    capacities.localHbmBytes = 4 * block;
    (tier == hw::KvTier::kRemoteHbm ? capacities.remoteHbmBytes : capacities.hostBytes) = 100 * block;
    hw::KvBlockAllocator kv(config, shape, capacities, hw::makeKvPlacementPolicy(policy));
    ASSERT_TRUE(kv.admit(1, 40).ok);   // 3 local blocks
    ASSERT_TRUE(kv.admit(2, 200).ok);  // 1 local block (tokens 0..15), 12 off the chip (16..199)
    ASSERT_TRUE(kv.append(1, 1).ok);
    ASSERT_TRUE(kv.append(2, 1).ok);  // token 200 joins block 12, off the chip
    StepBatch b;
    b.kvLayerStride = kv.capacityBlocks(hw::KvTier::kLocalHbm) * kv.layerBlockBytes();
    b.sequences = {StepSequence{1, 40, 1, true, kv.address(kv.blocks(1).front(), 0)},
                   StepSequence{2, 200, 1, true, kv.address(kv.blocks(2).front(), 0)}};
    b.expertTokens = &routed;
    const StepPlan local = planner.plan(b);
    b.kv = &kv;
    const StepPlan split = planner.plan(b);
    EXPECT_DOUBLE_EQ(local.remoteKvBytes + local.hostKvBytes, 0.0) << "without block tables all KV is local";
    const uint64_t offTier = tier == hw::KvTier::kRemoteHbm ? 0 : 1;
    const double off[] = {split.remoteKvBytes, split.hostKvBytes};
    uint64_t expectedOff = 0;
    for (uint32_t l = 0; l < 4; ++l) {
      // Request 2's cached tokens 16..199 are off the chip: all 184 on full layers, the last 127
      // (73..199) on the sliding one; request 1's are local. Appends: request 2's only.
      expectedOff += (m.isSlidingLayer(static_cast<int>(l)) ? 127 : 184) * perToken + perToken;
    }
    EXPECT_DOUBLE_EQ(off[offTier], static_cast<double>(expectedOff));
    EXPECT_DOUBLE_EQ(off[1 - offTier], 0.0);
    EXPECT_DOUBLE_EQ(split.bytesMoved + off[offTier], local.bytesMoved) << "every byte moved once, on one tier";
    const uint64_t stride = kv.capacityBlocks(tier) * kv.layerBlockBytes();
    for (const PlannedOp& op : split.ops) {
      for (const MemoryAccess& a : op.accesses) {
        if (a.tier != tier) continue;
        EXPECT_EQ(op.name, "attention");
        const uint32_t l = op.layer - planner.firstLayer();
        EXPECT_GE(a.address, l * stride) << "offsets into the layer's region of the tier's KV space";
        EXPECT_LE(a.address + a.bytes, (l + 1) * stride);
      }
    }
  }
}

TEST(StepPlanner, MlaCachesTheLatentAndRopeKeyOnEveryTensorParallelRank) {
  const ModelConfig m = shippedModel("tiny-mla");
  ASSERT_EQ(m.attention, AttentionKind::kMla);
  const uint64_t perToken = (u(m.kvLoraRank) + u(m.qkRopeHeadDim)) * 2;  // BF16 cache
  EXPECT_EQ(perToken, (256u + 32u) * 2);
  const Routing routed = routing(m, [](int, int e) { return e % 4 == 0 ? 2u : 0u; });
  for (int tp : {1, 2, 4, 8}) {
    for (int rank = 0; rank < tp; ++rank) {
      SCOPED_TRACE(testing::Message() << "tp " << tp << " rank " << rank);
      const StepPlanner planner(m, jalapeno(), ModelShard{tp, rank});
      EXPECT_EQ(planner.kvBytesPerTokenPerLayer(), perToken);
      const StepPlan plan = planner.plan(decodes(2, 300, &routed));
      for (uint32_t l = 0; l < 4; ++l) {
        EXPECT_EQ(bytesOf(plan, "attention", l, tlm::OpKind::kKvRead), 2 * 300 * perToken) << l;
        EXPECT_EQ(bytesOf(plan, "attention", l, tlm::OpKind::kKvAppend), 2 * perToken) << l;
      }
    }
  }
}

TEST(StepPlanner, DecodeAttentionTilesSplitTheContextOfBothGemmsAndKeepTheirOtherDimensionsWhole) {
  // Enough cached KV for many staging-buffer tiles: each tile scores the tokens it holds (q K^T:
  // N = its tokens, K = the head width) and weighs them (p V: K = its tokens, N = the head width).
  // Splitting p V's head width instead would leave each tile a GEMM a few columns wide over the
  // whole context, idling most of the array (a bug until 2026-12-04).
  for (const char* name : {"tiny-dense", "tiny-mla"}) {
    SCOPED_TRACE(name);
    const ModelConfig m = shippedModel(name);
    const bool mla = m.attention == AttentionKind::kMla;
    const StepPlanner planner(m, jalapeno(), ModelShard{});
    const Routing routed = routing(m, [&m](int, int e) { return e < m.expertsPerToken ? 64u : 0u; });
    StepBatch batch = decodes(64, 30000, &routed);
    batch.kvLayerStride = 64 * (30001 * planner.kvBytesPerTokenPerLayer());
    for (uint64_t i = 0; i < 64; ++i) batch.sequences[i].kvAddress = i * 30001 * planner.kvBytesPerTokenPerLayer();
    const StepPlan plan = planner.plan(batch);
    const uint64_t headWidth = mla ? u(m.kvLoraRank) : u(m.headDim);
    uint64_t tiles = 0, scored = 0, weighed = 0;
    for (const PlannedOp& op : plan.ops) {
      if (op.name != "attention" || op.layer != 0) continue;
      ++tiles;
      ASSERT_EQ(op.gemms.size(), 2u);
      const tlm::GemmShape& scores = op.gemms[0];
      const tlm::GemmShape& values = op.gemms[1];
      EXPECT_EQ(values.n, headWidth);
      EXPECT_EQ(values.k, scores.n) << "both GEMMs of a tile cover its tokens";
      EXPECT_EQ(scores.k, mla ? u(m.kvLoraRank) + u(m.qkRopeHeadDim) : u(m.headDim));
      scored += scores.n;
      weighed += values.k;
    }
    EXPECT_GT(tiles, 8u);
    EXPECT_EQ(scored, 64u * 30001);  // every cached token and the new one
    EXPECT_EQ(weighed, 64u * 30001);
  }
}

TEST(StepPlanner, GqaSplitsKvHeadsOverTensorParallelRanks) {
  const ModelConfig dense = shippedModel("tiny-dense");  // 2 KV heads of 128
  EXPECT_EQ(StepPlanner(dense, jalapeno(), ModelShard{1, 0}).kvBytesPerTokenPerLayer(), 2u * 2 * 128 * 2);
  for (int rank = 0; rank < 2; ++rank) {
    const StepPlanner planner(dense, jalapeno(), ModelShard{2, rank});
    EXPECT_EQ(planner.kvBytesPerTokenPerLayer(), 2u * 1 * 128 * 2) << "one KV head per rank";
    const StepPlan plan = planner.plan(decodes(1, 500));
    EXPECT_EQ(bytesOf(plan, "attention", 2, tlm::OpKind::kKvRead), 500u * 2 * 128 * 2);
  }
  const ModelConfig moe = shippedModel("tiny-moe");  // 4 KV heads of 64
  EXPECT_EQ(StepPlanner(moe, jalapeno(), ModelShard{2, 1}).kvBytesPerTokenPerLayer(), 2u * 2 * 64 * 2);
  EXPECT_EQ(StepPlanner(moe, jalapeno(), ModelShard{4, 3}).kvBytesPerTokenPerLayer(), 2u * 1 * 64 * 2);
  // More ranks than KV heads: each rank keeps one head (replicated).
  EXPECT_EQ(StepPlanner(moe, jalapeno(), ModelShard{8, 5}).kvBytesPerTokenPerLayer(), 2u * 1 * 64 * 2);
}

TEST(StepPlanner, PrefillIsComputeBoundAndRunsTheLmHeadOnlyWhenItSamples) {
  const ModelConfig m = shippedModel("tiny-dense");
  const StepPlanner planner(m, jalapeno(), ModelShard{});
  StepBatch b;
  b.kvLayerStride = 64ull << 20;
  b.sequences = {StepSequence{1, 0, 512, true, 0}};
  const StepPlan sampling = planner.plan(b);
  EXPECT_EQ(sampling.tokens, 512u);
  EXPECT_EQ(sampling.batch, 1u);
  const double lowerBound = 2.0 * static_cast<double>(m.totalParams() - m.embeddingParams()) * 512;
  EXPECT_GE(sampling.flops, lowerBound);
  EXPECT_LT(sampling.flops, 1.5 * lowerBound) << "no wildly inflated FLOP count";
  EXPECT_GT(sampling.computeBoundS(jalapeno()), sampling.memoryBoundS(jalapeno()));
  // The LM head runs for the one sampling row over the whole vocabulary.
  ASSERT_GT(countOps(sampling, "lm_head"), 0u);
  uint64_t vocab = 0;
  for (const PlannedOp& op : sampling.ops) {
    if (op.name != "lm_head") continue;
    for (const tlm::GemmShape& g : op.gemms) {
      EXPECT_EQ(g.m, 1u);
      EXPECT_EQ(g.k, u(m.hidden));
      vocab += g.n * g.count;
    }
  }
  EXPECT_EQ(vocab, u(m.vocab));

  // A chunk that does not sample (an earlier chunk, or a recompute's last one): no LM head.
  b.sequences = {StepSequence{1, 0, 512, false, planner.kvBase()}};
  const StepPlan silent = planner.plan(b);
  EXPECT_EQ(countOps(silent, "lm_head"), 0u);
  EXPECT_LT(silent.bytesMoved, sampling.bytesMoved);
  b.sequences = {StepSequence{1, 512, 256, false, planner.kvBase()}};
  EXPECT_EQ(countOps(planner.plan(b), "lm_head"), 0u);
}

TEST(StepPlanner, TensorParallelRanksSplitTheWeightsOfADenseModel) {
  const ModelConfig m = shippedModel("tiny-dense");
  const double single = StepPlanner(m, jalapeno(), ModelShard{}).weightBytes();
  EXPECT_DOUBLE_EQ(single, m.weightBytes());
  // Only the norm weights (two per layer and the final one, BF16) are on both ranks.
  const double norms = (2.0 * m.layers + 1) * m.hidden * 2;
  const double ranks = StepPlanner(m, jalapeno(), ModelShard{2, 0}).weightBytes() +
                       StepPlanner(m, jalapeno(), ModelShard{2, 1}).weightBytes();
  EXPECT_DOUBLE_EQ(ranks, single + norms);
}

TEST(StepPlanner, TensorParallelRanksOfAnMlaModelReplicateOnlyNormsDownProjectionsAndRouter) {
  const ModelConfig m = shippedModel("tiny-mla");
  const double bits = m.mainFormat().bitsPerElement();
  const double single = StepPlanner(m, jalapeno(), ModelShard{}).weightBytes();
  EXPECT_NEAR(single, m.weightBytes(), 512.0) << "only per-tensor rounding of the block scales";
  const uint64_t hidden = u(m.hidden);
  uint64_t replicated = hidden;  // final norm
  for (int l = 0; l < m.layers; ++l) {
    replicated += 2 * hidden;                                                         // norms
    replicated += hidden * u(m.qLoraRank) + u(m.qLoraRank);                           // q_down and its norm
    replicated += hidden * (u(m.kvLoraRank) + u(m.qkRopeHeadDim)) + u(m.kvLoraRank);  // kv_down and its norm
    if (m.isMoeLayer(l)) replicated += hidden * u(m.routedExperts);                   // router
  }
  for (int tp : {2, 4}) {
    SCOPED_TRACE(tp);
    double ranks = 0.0;
    for (int r = 0; r < tp; ++r) ranks += StepPlanner(m, jalapeno(), ModelShard{tp, r}).weightBytes();
    EXPECT_NEAR(ranks - single, (tp - 1) * static_cast<double>(replicated) * bits / 8, 512.0 * tp);
  }
}

TEST(StepPlanner, TensorParallelStepsAllReduceAfterTheOutputProjectionAndTheFfn) {
  const ModelConfig m = shippedModel("tiny-dense");
  const uint64_t tokens = 3;
  const uint64_t activations = tokens * u(m.hidden) * 2;
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    const StepPlanner planner(m, jalapeno(), ModelShard{2, rank});
    const StepPlan plan = planner.plan(decodes(tokens, 50));
    std::size_t allReduces = 0;
    for (uint32_t l = 0; l < 4; ++l) {
      // The last tile of o_proj and of ffn_down of each layer carries the all-reduce.
      const PlannedOp* lastO = nullptr;
      const PlannedOp* lastDown = nullptr;
      std::size_t inLayer = 0;
      for (const PlannedOp& op : plan.ops) {
        if (op.layer != l) continue;
        if (op.name == "o_proj") lastO = &op;
        if (op.name == "ffn_down") lastDown = &op;
        if (op.after.kind == PlannedCollective::Kind::kAllReduce) ++inLayer;
      }
      ASSERT_NE(lastO, nullptr);
      ASSERT_NE(lastDown, nullptr);
      EXPECT_EQ(lastO->after.kind, PlannedCollective::Kind::kAllReduce) << l;
      EXPECT_EQ(lastO->after.bytes, activations) << l;
      EXPECT_EQ(lastDown->after.kind, PlannedCollective::Kind::kAllReduce) << l;
      EXPECT_EQ(lastDown->after.bytes, activations) << l;
      EXPECT_EQ(inLayer, 2u) << l;
      allReduces += inLayer;
    }
    EXPECT_EQ(allReduces, 8u);
    // The embedding lookup is all-reduced too, and the LM head's per-rank best tokens gathered.
    ASSERT_EQ(countOps(plan, "embedding"), 1u);
    EXPECT_EQ(plan.ops.front().name, "embedding");
    EXPECT_EQ(plan.ops.front().after.kind, PlannedCollective::Kind::kAllReduce);
    EXPECT_EQ(plan.ops.front().after.bytes, activations);
    EXPECT_EQ(plan.ops.back().name, "lm_head");
    EXPECT_EQ(plan.ops.back().after.kind, PlannedCollective::Kind::kAllGather);
    EXPECT_GT(plan.collectiveBytes, 9.0 * activations);
  }
  // One chip: no collectives at all.
  const StepPlanner alone(m, jalapeno(), ModelShard{});
  const StepPlan plan = alone.plan(decodes(tokens, 50));
  for (const PlannedOp& op : plan.ops) EXPECT_EQ(op.after.kind, PlannedCollective::Kind::kNone) << op.name;
  EXPECT_EQ(plan.collectiveBytes, 0.0);
}

}  // namespace
}  // namespace scoville::workload
