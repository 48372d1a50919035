// The step planner: one engine step of a model shard (bytes, GEMMs, collectives). Pure logic, no
// SystemC.
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

#include "hw/ChipConfig.h"
#include "hw/kv/KvBlockAllocator.h"
#include "test/support/Shipped.h"
#include "tlm/config/ConfigError.h"
#include "tlm/config/Loader.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {
namespace {

using test::shippedModel;
using Routing = std::vector<std::vector<uint64_t>>;

constexpr uint64_t kAlignment = 4096;  // weight tensors start on 4 KiB boundaries

const hw::ChipConfig& jalapeno() {
  static const hw::ChipConfig chip = test::shippedPlatform("jalapeno").chipConfig(0);
  return chip;
}

uint64_t u(int v) {
  return static_cast<uint64_t>(v);
}

/// Expert routing of every MoE layer of `m`: tokens(layer, expert); empty rows for dense layers.
Routing routing(const ModelConfig& m, const std::function<uint64_t(int, int)>& tokens) {
  Routing r(u(m.layers));
  for (int l = 0; l < m.layers; ++l) {
    if (!m.isMoeLayer(l)) continue;
    for (int e = 0; e < m.routedExperts; ++e) r[u(l)].push_back(tokens(l, e));
  }
  return r;
}

/// `count` decoding sequences with `context` cached tokens each, KV regions 1 MiB apart.
StepBatch decodes(uint64_t count, uint64_t context, const Routing* routed = nullptr) {
  StepBatch b;
  b.kvLayerStride = 64ull << 20;
  for (uint64_t i = 0; i < count; ++i) {
    b.sequences.push_back(StepSequence{i + 1, context, 1, true, i << 20});
  }
  b.expertTokens = routed;
  return b;
}

/// Bytes of `kind` accesses of the ops named `name` in layer `layer`.
uint64_t bytesOf(const StepPlan& plan, const std::string& name, uint32_t layer, tlm::OpKind kind) {
  uint64_t total = 0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name != name || op.layer != layer) continue;
    for (const MemoryAccess& a : op.accesses) {
      if (a.kind == kind) total += a.bytes;
    }
  }
  return total;
}

double flopsOf(const StepPlan& plan, const std::string& name, uint32_t layer) {
  double total = 0.0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name == name && op.layer == layer) total += op.flops();
  }
  return total;
}

std::size_t countOps(const StepPlan& plan, const std::string& name) {
  return static_cast<std::size_t>(
      std::count_if(plan.ops.begin(), plan.ops.end(), [&](const PlannedOp& op) { return op.name == name; }));
}

/// One routed expert's bytes (gate, up and down) in the model's expert format.
uint64_t expertBytes(const ModelConfig& m) {
  return static_cast<uint64_t>(
      std::ceil(static_cast<double>(m.expertParams()) * m.expertFormat().bitsPerElement() / 8));
}

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
  EXPECT_DOUBLE_EQ(plan.kvBytes, static_cast<double>((1001 + 51 + 128) * perToken * 4));
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
    try {
      StepPlanner(m, jalapeno(), shard);
      ADD_FAILURE() << "accepted";
    } catch (const config::ConfigError& e) {
      EXPECT_EQ(e.kind(), config::ErrorKind::kInvalidConfig) << e.what();
      EXPECT_NE(e.message().find("ep"), std::string::npos) << e.what();
    }
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
