// KV-cache block allocation, placement policies and configuration: pure logic, no SystemC.
#include <gtest/gtest.h>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "hw/kv/KvBlockAllocator.h"
#include "hw/kv/KvCacheConfig.h"
#include "hw/kv/KvPlacementPolicy.h"
#include "test/support/ConfigErrors.h"

namespace scoville::hw {
namespace {

constexpr KvModelShape kShape{2, 64};       // 128 B per token over both layers
constexpr uint64_t kBlockBytes = 16 * 128;  // block_tokens 16

KvCacheConfig kvConfig(const std::string& placement, KvPreemption preemption = KvPreemption::kRecompute,
                       bool prefixSharing = false) {
  KvCacheConfig c;
  c.blockTokens = 16;
  c.placement = placement;
  c.preemption = preemption;
  c.prefixSharing = prefixSharing;
  return c;
}

KvTierCapacities blocks(uint64_t sram, uint64_t local, uint64_t remote, uint64_t host) {
  return KvTierCapacities{sram * kBlockBytes, local * kBlockBytes, remote * kBlockBytes, host * kBlockBytes};
}

KvBlockAllocator make(const KvCacheConfig& config, const KvTierCapacities& capacities) {
  return KvBlockAllocator(config, kShape, capacities, makeKvPlacementPolicy(config.placement));
}

std::optional<KvTier> place(const std::string& policy, KvTierBlocks free) {
  return makeKvPlacementPolicy(policy)->place(free, KvPlacementQuery{1, 0});
}

TEST(KvPlacement, FactoryBuildsEveryRegisteredPolicyAndRejectsUnknownNames) {
  EXPECT_EQ(kvPlacementPolicyNames(), (std::vector<std::string>{"local_first", "spill_to_remote", "offload_to_host"}));
  for (const std::string& name : kvPlacementPolicyNames()) EXPECT_EQ(makeKvPlacementPolicy(name)->name(), name);
  EXPECT_THROW(makeKvPlacementPolicy("local-first"), std::invalid_argument);
}

TEST(KvPlacement, LocalFirstFillsSramThenLocalHbmAndNeverLeavesTheChip) {
  EXPECT_EQ(place("local_first", {1, 1, 1, 1}), KvTier::kSram);
  EXPECT_EQ(place("local_first", {0, 1, 1, 1}), KvTier::kLocalHbm);
  EXPECT_EQ(place("local_first", {0, 0, 9, 9}), std::nullopt);
  const auto policy = makeKvPlacementPolicy("local_first");
  EXPECT_FALSE(policy->mayUse(KvTier::kRemoteHbm));
  EXPECT_FALSE(policy->mayUse(KvTier::kHost));
}

TEST(KvPlacement, SpillToRemoteUsesRemoteHbmOnlyWhenTheChipIsFull) {
  EXPECT_EQ(place("spill_to_remote", {0, 1, 1, 1}), KvTier::kLocalHbm);
  EXPECT_EQ(place("spill_to_remote", {0, 0, 1, 1}), KvTier::kRemoteHbm);
  EXPECT_EQ(place("spill_to_remote", {0, 0, 0, 9}), std::nullopt);
}

TEST(KvPlacement, OffloadToHostUsesHostOnlyWhenTheChipIsFull) {
  EXPECT_EQ(place("offload_to_host", {1, 0, 1, 1}), KvTier::kSram);
  EXPECT_EQ(place("offload_to_host", {0, 0, 1, 1}), KvTier::kHost);
  EXPECT_EQ(place("offload_to_host", {0, 0, 9, 0}), std::nullopt);
}

TEST(KvCacheConfig, ParsesEveryKeyAndHasDocumentedDefaults) {
  const KvCacheConfig c = KvCacheConfig::schema().parse(config::loadConfigText(
      "kv_cache", "block_tokens: 32\nplacement: {impl: spill_to_remote}\npreemption: swap\nprefix_sharing: true\n",
      "kv.yaml"));
  EXPECT_EQ(c.blockTokens, 32);
  EXPECT_EQ(c.placement, "spill_to_remote");
  EXPECT_EQ(c.preemption, KvPreemption::kSwap);
  EXPECT_TRUE(c.prefixSharing);
  const KvCacheConfig d = KvCacheConfig::schema().parse(config::loadConfigText("kv_cache", "{}", "kv.yaml"));
  EXPECT_EQ(d.blockTokens, 16);
  EXPECT_EQ(d.placement, "local_first");
  EXPECT_EQ(d.preemption, KvPreemption::kRecompute);
  EXPECT_FALSE(d.prefixSharing);
}

TEST(KvCacheConfig, RejectsUnknownPolicyZeroBlockTokensAndUnknownKeys) {
  auto kindOf = [](const std::string& yaml) {
    const std::optional<config::ConfigError> e = test::configErrorOf(
        [&] { KvCacheConfig::schema().parse(config::loadConfigText("kv_cache", yaml, "kv.yaml")); }, yaml);
    return e ? e->kind() : config::ErrorKind::kInvalidConfig;
  };
  EXPECT_EQ(kindOf("placement: {impl: spill_to_host}\n"), config::ErrorKind::kOutOfRange);
  EXPECT_EQ(kindOf("placement: {iml: local_first}\n"), config::ErrorKind::kUnknownKey);
  EXPECT_EQ(kindOf("placement: local_first\n"), config::ErrorKind::kWrongType) << "a policy is a map {impl: name}";
  EXPECT_EQ(kindOf("block_tokens: 0\n"), config::ErrorKind::kOutOfRange);
  EXPECT_EQ(kindOf("preemption: evict\n"), config::ErrorKind::kOutOfRange);
  EXPECT_EQ(kindOf("capacity: 1 GB\n"), config::ErrorKind::kUnknownKey);
}

TEST(KvAllocator, BlocksGrowToExactlyCeilTokensOverBlockTokens) {
  KvBlockAllocator kv = make(kvConfig("local_first"), blocks(0, 100, 0, 0));
  ASSERT_TRUE(kv.admit(1, 1).ok);
  for (uint64_t tokens = 1; tokens <= 200; ++tokens) {
    if (tokens > 1) {
      ASSERT_TRUE(kv.append(1, 1).ok);
    }
    EXPECT_EQ(kv.tokens(1), tokens);
    EXPECT_EQ(kv.blocks(1).size(), (tokens + 15) / 16) << tokens;
    EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), (tokens + 15) / 16) << tokens;
  }
  kv.release(1);
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 0u);
  EXPECT_EQ(kv.peakBlocks(KvTier::kLocalHbm), 13u);
}

// gpt-oss-like: slots hold the layers that keep every token; the as many sliding-window layers
// keep a 40-token window (with 16-token blocks, the last 3 or 4 blocks), one window slot per block.
constexpr KvModelShape kWindowShape{2, 64, 1, 40};

KvBlockAllocator makeWindowed(const KvCacheConfig& config, const KvTierCapacities& capacities) {
  return KvBlockAllocator(config, kWindowShape, capacities, makeKvPlacementPolicy(config.placement));
}

// A request holds its blocks plus one window slot per block that overlaps its last 40 tokens;
// the window's slots are freed as it slides, so a long request costs half as much as without.
TEST(KvAllocator, SlidingWindowLayersHoldOnlyTheBlocksTheirWindowSpans) {
  KvBlockAllocator kv = makeWindowed(kvConfig("local_first"), blocks(0, 100, 0, 0));
  EXPECT_EQ(kv.slotsFor(0), 0u);
  EXPECT_EQ(kv.slotsFor(1), 2u);
  EXPECT_EQ(kv.slotsFor(40), 3u + 3u);     // window [0, 40): blocks 0-2
  EXPECT_EQ(kv.slotsFor(41), 3u + 3u);     // window [1, 41): still blocks 0-2
  EXPECT_EQ(kv.slotsFor(49), 4u + 4u);     // window [9, 49): blocks 0-3
  EXPECT_EQ(kv.slotsFor(56), 4u + 3u);     // window [16, 56): blocks 1-3
  EXPECT_EQ(kv.slotsFor(1000), 63u + 3u);  // window [960, 1000): blocks 60-62
  EXPECT_EQ(kv.slotsAdded(48, 1), 2u) << "block 3 and its window slot";
  EXPECT_EQ(kv.slotsAdded(49, 1), 0u);
  ASSERT_TRUE(kv.admit(1, 1).ok);
  for (uint64_t tokens = 1; tokens <= 300; ++tokens) {
    if (tokens > 1) {
      const uint64_t before = kv.usedBlocks(KvTier::kLocalHbm);
      const uint64_t added = kv.slotsAdded(tokens - 1, 1);
      ASSERT_TRUE(kv.append(1, 1).ok);
      EXPECT_LE(kv.usedBlocks(KvTier::kLocalHbm), before + added) << tokens;
    }
    EXPECT_EQ(kv.blocks(1).size(), (tokens + 15) / 16) << tokens;
    EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), kv.slotsFor(tokens)) << tokens;
    EXPECT_EQ(kv.slotsOn(1, KvTier::kLocalHbm), kv.slotsFor(tokens)) << tokens;
  }
  // A prompt is admitted with its window at its end.
  ASSERT_TRUE(kv.admit(2, 300).ok);
  EXPECT_EQ(kv.slotsOn(2, KvTier::kLocalHbm), 19u + 3u);
  kv.release(1);
  kv.release(2);
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 0u);
  // The model without the window saving holds twice the blocks: 19 x 2 slots for 300 tokens.
  EXPECT_LT(kv.peakBlocks(KvTier::kLocalHbm), 2u * 2u * 19u);
}

// Window slots are the request's own: a full chip preempts for them, swap moves them to host and
// back, and a request whose window does not fit is refused.
TEST(KvAllocator, WindowSlotsArePreemptedSwappedAndRestoredWithTheirRequest) {
  KvBlockAllocator kv = makeWindowed(kvConfig("local_first", KvPreemption::kSwap), blocks(0, 10, 0, 20));
  ASSERT_TRUE(kv.admit(1, 32).ok);  // blocks 0-1, window [0, 32): 2 + 2
  ASSERT_TRUE(kv.admit(2, 48).ok);  // blocks 0-2, window [8, 48): 3 + 3; the chip is full
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 10u);
  EXPECT_FALSE(kv.admit(3, 1).ok) << "two slots, none free";
  // Request 1 grows into block 2 (2 slots): request 2, the newest, is swapped out whole.
  const KvAllocation grown = kv.append(1, 1);
  ASSERT_TRUE(grown.ok);
  ASSERT_EQ(grown.preempted.size(), 1u);
  EXPECT_EQ(grown.preempted[0].requestId, 2u);
  EXPECT_EQ(grown.preempted[0].moves.size(), 6u) << "its blocks and its window slots";
  EXPECT_EQ(kv.usedBlocks(KvTier::kHost), 6u);
  EXPECT_EQ(kv.slotsOn(1, KvTier::kLocalHbm), kv.slotsFor(33));
  kv.release(1);
  std::vector<KvBlockMove> moves;
  ASSERT_TRUE(kv.swapIn(2, moves));
  EXPECT_EQ(moves.size(), 6u);
  EXPECT_EQ(kv.slotsOn(2, KvTier::kLocalHbm), 6u);
  EXPECT_EQ(kv.usedBlocks(KvTier::kHost), 0u);
  // It goes on growing and sliding as before it left.
  ASSERT_TRUE(kv.append(2, 9).ok);  // 57 tokens: blocks 0-3, window [17, 57): blocks 1-3
  EXPECT_EQ(kv.slotsOn(2, KvTier::kLocalHbm), kv.slotsFor(57));
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 7u);
}

// 1 SRAM + 3 local-HBM blocks, filled by A (16 tokens), B (16) and C (32), admitted in that order.
struct FullChip {
  explicit FullChip(const std::string& policy, KvPreemption preemption = KvPreemption::kRecompute)
      : kv(make(kvConfig(policy, preemption), blocks(1, 3, 10, 10))) {
    EXPECT_TRUE(kv.admit(kA, 16).ok);
    EXPECT_TRUE(kv.admit(kB, 16).ok);
    EXPECT_TRUE(kv.admit(kC, 32).ok);
    EXPECT_EQ(kv.freeBlocks()[kvTierIndex(KvTier::kSram)] + kv.freeBlocks()[kvTierIndex(KvTier::kLocalHbm)], 0u);
  }
  static constexpr uint64_t kA = 1, kB = 2, kC = 3;
  KvBlockAllocator kv;
};

TEST(KvAllocator, LocalFirstPreemptsTheNewestRequestWhenTheChipIsFull) {
  FullChip f("local_first");
  EXPECT_EQ(f.kv.blocks(FullChip::kA)[0].tier, KvTier::kSram);
  const KvAllocation r = f.kv.append(FullChip::kA, 1);
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.preempted.size(), 1u);
  EXPECT_EQ(r.preempted[0].requestId, FullChip::kC);
  EXPECT_EQ(r.preempted[0].mode, KvPreemption::kRecompute);
  EXPECT_EQ(r.preempted[0].tokens, 32u);
  EXPECT_FALSE(f.kv.isResident(FullChip::kC));
  EXPECT_THROW(f.kv.tokens(FullChip::kC), std::invalid_argument);
  EXPECT_EQ(f.kv.blocks(FullChip::kA)[1].tier, KvTier::kLocalHbm);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kLocalHbm), 2u);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kRemoteHbm) + f.kv.usedBlocks(KvTier::kHost), 0u);
  EXPECT_EQ(f.kv.stats().value("preemptions"), 1.0);
  EXPECT_EQ(f.kv.stats().value("recomputes"), 1.0);
}

TEST(KvAllocator, SpillToRemotePlacesTheOverflowOnRemoteHbm) {
  FullChip f("spill_to_remote");
  const KvAllocation r = f.kv.append(FullChip::kA, 1);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.preempted.empty());
  EXPECT_EQ(f.kv.blocks(FullChip::kA)[1].tier, KvTier::kRemoteHbm);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kRemoteHbm), 1u);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kHost), 0u);
}

TEST(KvAllocator, OffloadToHostPlacesTheOverflowOnHost) {
  FullChip f("offload_to_host");
  const KvAllocation r = f.kv.append(FullChip::kA, 1);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.preempted.empty());
  EXPECT_EQ(f.kv.blocks(FullChip::kA)[1].tier, KvTier::kHost);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kHost), 1u);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kRemoteHbm), 0u);
}

TEST(KvAllocator, AdmissionThatDoesNotFitIsRefusedWithoutPreemptingAnyone) {
  FullChip f("local_first");
  const KvAllocation r = f.kv.admit(4, 1);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.preempted.empty());
  EXPECT_THROW(f.kv.tokens(4), std::invalid_argument);
  for (uint64_t id : {FullChip::kA, FullChip::kB, FullChip::kC}) EXPECT_TRUE(f.kv.isResident(id));
  EXPECT_EQ(f.kv.stats().value("preemptions"), 0.0);
}

TEST(KvAllocator, TheNewestRequestGrowingIntoAFullChipPreemptsItself) {
  FullChip f("local_first");
  const KvAllocation r = f.kv.append(FullChip::kC, 1);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.preempted.size(), 1u);
  EXPECT_EQ(r.preempted[0].requestId, FullChip::kC);
  EXPECT_EQ(r.preempted[0].tokens, 32u);
  EXPECT_TRUE(f.kv.isResident(FullChip::kA));
  EXPECT_TRUE(f.kv.isResident(FullChip::kB));
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kLocalHbm), 1u);
}

TEST(KvAllocator, SwapMovesTheVictimsBlocksToHostAndBackCountingBytes) {
  FullChip f("local_first", KvPreemption::kSwap);
  const KvAllocation r = f.kv.append(FullChip::kA, 1);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.preempted.size(), 1u);
  EXPECT_EQ(r.preempted[0].mode, KvPreemption::kSwap);
  ASSERT_EQ(r.preempted[0].moves.size(), 2u);
  for (const KvBlockMove& m : r.preempted[0].moves) {
    EXPECT_EQ(m.from.tier, KvTier::kLocalHbm);
    EXPECT_EQ(m.to.tier, KvTier::kHost);
  }
  EXPECT_TRUE(f.kv.isSwapped(FullChip::kC));
  EXPECT_EQ(f.kv.tokens(FullChip::kC), 32u);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kHost), 2u);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kLocalHbm), 2u);
  EXPECT_EQ(f.kv.stats().value("swap_out_bytes"), 2.0 * kBlockBytes);
  EXPECT_EQ(f.kv.stats().value("recomputes"), 0.0);
  EXPECT_THROW(f.kv.append(FullChip::kC, 1), std::invalid_argument);

  std::vector<KvBlockMove> moves;
  EXPECT_FALSE(f.kv.swapIn(FullChip::kC, moves)) << "only one local block is free";
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kLocalHbm), 2u);
  f.kv.release(FullChip::kB);
  ASSERT_TRUE(f.kv.swapIn(FullChip::kC, moves));
  EXPECT_EQ(moves.size(), 2u);
  EXPECT_TRUE(f.kv.isResident(FullChip::kC));
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kHost), 0u);
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kLocalHbm), 3u);
  EXPECT_EQ(f.kv.stats().value("swap_in_bytes"), 2.0 * kBlockBytes);
}

TEST(KvAllocator, RecomputeDropsTheVictimsBlocksAndMovesNothing) {
  FullChip f("local_first", KvPreemption::kRecompute);
  const KvAllocation r = f.kv.append(FullChip::kA, 1);
  ASSERT_EQ(r.preempted.size(), 1u);
  EXPECT_TRUE(r.preempted[0].moves.empty());
  EXPECT_FALSE(f.kv.isSwapped(FullChip::kC));
  EXPECT_EQ(f.kv.usedBlocks(KvTier::kHost), 0u);
  EXPECT_EQ(f.kv.stats().value("swap_out_bytes"), 0.0);
  EXPECT_EQ(f.kv.stats().value("swap_outs"), 0.0);
}

TEST(KvAllocator, SwapFallsBackToRecomputeWhenTheHostCannotTakeTheBlocks) {
  KvBlockAllocator kv = make(kvConfig("local_first", KvPreemption::kSwap), blocks(0, 3, 0, 1));
  ASSERT_TRUE(kv.admit(1, 16).ok);
  ASSERT_TRUE(kv.admit(2, 32).ok);
  const KvAllocation r = kv.append(1, 1);
  ASSERT_EQ(r.preempted.size(), 1u);
  EXPECT_EQ(r.preempted[0].mode, KvPreemption::kRecompute);
  EXPECT_FALSE(kv.isSwapped(2));
  EXPECT_EQ(kv.usedBlocks(KvTier::kHost), 0u);
  EXPECT_EQ(kv.stats().value("recomputes"), 1.0);
}

TEST(KvAllocator, PrefixSharingSavesTheSharedFullBlocksAndFreesThemWithTheLastUser) {
  KvBlockAllocator kv = make(kvConfig("local_first", KvPreemption::kRecompute, true), blocks(0, 20, 0, 0));
  ASSERT_TRUE(kv.admit(1, 40, 7, 40).ok);  // 3 blocks, the first 2 full
  const KvAllocation b = kv.admit(2, 40, 7, 40);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.sharedBlocks, 2u);
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 4u) << "3 + 3 blocks minus 2 shared";
  EXPECT_EQ(kv.blocks(2)[0], kv.blocks(1)[0]);
  EXPECT_EQ(kv.blocks(2)[1], kv.blocks(1)[1]);
  EXPECT_FALSE(kv.blocks(2)[2] == kv.blocks(1)[2]) << "the partly filled block is private";
  const KvAllocation c = kv.admit(3, 50, 7, 20);  // its prefix covers one full block only
  EXPECT_EQ(c.sharedBlocks, 1u);
  EXPECT_EQ(kv.stats().value("shared_block_hits"), 3.0);

  kv.release(1);
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 3u + 3u) << "B keeps the shared blocks alive";
  kv.release(2);
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 4u);
  kv.release(3);
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 0u);
  EXPECT_EQ(kv.admit(4, 40, 7, 40).sharedBlocks, 0u) << "nobody holds prefix 7 any more";
}

TEST(KvAllocator, PrefixIdsAreIgnoredWhenSharingIsOff) {
  KvBlockAllocator kv = make(kvConfig("local_first"), blocks(0, 20, 0, 0));
  ASSERT_TRUE(kv.admit(1, 40, 7, 40).ok);
  EXPECT_EQ(kv.admit(2, 40, 7, 40).sharedBlocks, 0u);
  EXPECT_EQ(kv.usedBlocks(KvTier::kLocalHbm), 6u);
}

TEST(KvAllocator, SwapLeavesBlocksSharedWithOthersInPlace) {
  KvBlockAllocator kv = make(kvConfig("local_first", KvPreemption::kSwap, true), blocks(0, 3, 0, 4));
  ASSERT_TRUE(kv.admit(1, 32, 5, 32).ok);
  ASSERT_TRUE(kv.admit(2, 48, 5, 32).ok);
  const KvAllocation r = kv.append(1, 16);
  ASSERT_EQ(r.preempted.size(), 1u);
  ASSERT_EQ(r.preempted[0].moves.size(), 1u) << "only request 2's private third block moves";
  EXPECT_EQ(kv.blocks(2)[0], kv.blocks(1)[0]);
  EXPECT_EQ(kv.blocks(2)[2].tier, KvTier::kHost);
  EXPECT_EQ(kv.stats().value("swap_out_bytes"), 1.0 * kBlockBytes);
}

TEST(KvAllocator, AddressesAreDisjointLayerBlockAlignedAndWithinEachTier) {
  const KvModelShape shape{3, 64};
  const uint64_t blockBytes = 16 * 3 * 64;
  const KvTierCapacities caps{2 * blockBytes + 100, 5 * blockBytes + 1, 0, 0};
  KvBlockAllocator kv(kvConfig("local_first"), shape, caps, makeKvPlacementPolicy("local_first"));
  EXPECT_EQ(kv.capacityBlocks(KvTier::kSram), 2u);
  EXPECT_EQ(kv.capacityBlocks(KvTier::kLocalHbm), 5u);
  ASSERT_TRUE(kv.admit(1, 50).ok);
  ASSERT_TRUE(kv.admit(2, 48).ok);
  EXPECT_FALSE(kv.admit(3, 1).ok);
  std::set<std::tuple<KvTier, uint64_t>> seen;
  for (uint64_t id : {1u, 2u}) {
    for (const KvBlock& b : kv.blocks(id)) {
      for (uint32_t layer = 0; layer < shape.layers; ++layer) {
        const uint64_t a = kv.address(b, layer);
        EXPECT_EQ(a % kv.layerBlockBytes(), 0u);
        EXPECT_LE(a + kv.layerBlockBytes(), caps.of(b.tier));
        EXPECT_TRUE(seen.emplace(b.tier, a).second) << "address " << a << " used twice on " << kvTierName(b.tier);
      }
    }
  }
  EXPECT_EQ(seen.size(), 7u * shape.layers);
}

}  // namespace
}  // namespace scoville::hw
