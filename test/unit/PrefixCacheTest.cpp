// Prefix caching: a prefix's blocks outlive their users, count as free, are evicted least
// recently used tail first, and a request whose prefix is cached prefills only its suffix; one
// whose prefix was evicted pays the whole prefill again. With offload, evicted blocks move to the
// host and come back for a hit.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "hw/kv/KvCacheConfig.h"
#include "hw/kv/KvPlacementPolicy.h"
#include "workloads/ServingScheduler.h"

namespace scoville {
namespace {

using hw::KvTier;

constexpr hw::KvModelShape kShape{2, 64};
constexpr uint64_t kBlockBytes = 16 * 128;  // block_tokens 16

std::unique_ptr<hw::KvBlockAllocator> cacheOf(uint64_t blocks) {
  hw::KvCacheConfig c;
  c.blockTokens = 16;
  c.placement = "local_first";
  c.prefixCaching = true;
  hw::KvTierCapacities capacities;
  capacities.localHbmBytes = blocks * kBlockBytes;
  return std::make_unique<hw::KvBlockAllocator>(c, kShape, capacities, hw::makeKvPlacementPolicy(c.placement));
}

/// A cache of `blocks` local blocks and `hostBlocks` host blocks that offloads to the host.
std::unique_ptr<hw::KvBlockAllocator> offloadingCacheOf(uint64_t blocks, uint64_t hostBlocks,
                                                        const char* placement = "local_first") {
  hw::KvCacheConfig c;
  c.blockTokens = 16;
  c.placement = placement;
  c.prefixCaching = true;
  c.prefixCacheOffload = true;
  hw::KvTierCapacities capacities;
  capacities.localHbmBytes = blocks * kBlockBytes;
  capacities.hostBytes = hostBlocks * kBlockBytes;
  return std::make_unique<hw::KvBlockAllocator>(c, kShape, capacities, hw::makeKvPlacementPolicy(c.placement));
}

/// Caches prefix `prefixId` with `tokens` tokens through request `id`, which then leaves.
void cachePrefix(hw::KvBlockAllocator& kv, uint64_t id, uint64_t prefixId, uint64_t tokens) {
  ASSERT_TRUE(kv.admit(id, tokens, prefixId, 0).ok);
  kv.publish(id, tokens);
  kv.release(id);
}

TEST(PrefixCache, PublishedBlocksOutliveTheirRequestAndCountAsFree) {
  auto kv = cacheOf(8);
  ASSERT_TRUE(kv->admit(1, 40, 7, 0).ok);  // a conversation's first turn: nothing cached yet
  EXPECT_EQ(kv->cachedBlocks(), 0u);
  kv->publish(1, 40);  // its 40 tokens: two full blocks
  EXPECT_EQ(kv->cachedBlocks(), 2u);
  kv->release(1);
  EXPECT_EQ(kv->usedBlocks(KvTier::kLocalHbm), 2u) << "the cache keeps them";
  EXPECT_EQ(kv->placedFreeBlocks(), 8u) << "but blocks only the cache holds count as free";
  // The next turn's prompt holds the 40 tokens and more: the two full blocks are reused.
  const hw::KvAllocation next = kv->admit(2, 60, 7, 41);
  ASSERT_TRUE(next.ok);
  EXPECT_EQ(next.sharedBlocks, 2u);
  EXPECT_EQ(kv->usedBlocks(KvTier::kLocalHbm), 4u) << "2 reused + 2 new for 60 tokens";
  EXPECT_EQ(kv->placedFreeBlocks(), 4u);
  // Another prefix id shares nothing.
  EXPECT_EQ(kv->admit(3, 60, 8, 60).sharedBlocks, 0u);
}

TEST(PrefixCache, EvictionTakesTheLeastRecentlyUsedPrefixTailFirst) {
  auto kv = cacheOf(6);
  for (uint64_t id : {1, 2}) {  // prefixes 11 then 12, two blocks each
    ASSERT_TRUE(kv->admit(id, 32, 10 + id, 0).ok);
    kv->publish(id, 32);
    kv->release(id);
  }
  ASSERT_EQ(kv->cachedBlocks(), 4u);
  // A request of 48 tokens (3 blocks) with 2 free: one cached block goes, the tail of prefix 11
  // (used least recently).
  ASSERT_TRUE(kv->admit(3, 48).ok);
  EXPECT_EQ(kv->evictedBlocks(), 1u);
  EXPECT_EQ(kv->cachedBlocks(), 3u);
  kv->release(3);
  EXPECT_EQ(kv->admit(4, 40, 12, 32).sharedBlocks, 2u) << "prefix 12 is whole";
  EXPECT_EQ(kv->admit(5, 40, 11, 32).sharedBlocks, 1u) << "prefix 11 kept its first block";
  kv->release(4);
  kv->release(5);
  ASSERT_TRUE(kv->admit(6, 96).ok);  // 6 blocks: every cached block goes
  EXPECT_EQ(kv->cachedBlocks(), 0u);
  kv->release(6);
  EXPECT_EQ(kv->admit(7, 40, 12, 40).sharedBlocks, 0u) << "an evicted prefix is gone";
}

TEST(PrefixCache, TheOrderOfEvictionFollowsUse) {
  auto kv = cacheOf(5);
  for (uint64_t id : {1, 2}) {
    ASSERT_TRUE(kv->admit(id, 32, 10 + id, 0).ok);
    kv->publish(id, 32);
    kv->release(id);
  }
  // Prefix 11 is used again (a hit), so prefix 12 is now the least recently used.
  ASSERT_EQ(kv->admit(3, 40, 11, 32).sharedBlocks, 2u);
  kv->release(3);
  ASSERT_TRUE(kv->admit(4, 48).ok);  // 3 blocks with 1 free: two evictions, both of prefix 12
  EXPECT_EQ(kv->evictedBlocks(), 2u);
  kv->release(4);
  EXPECT_EQ(kv->admit(5, 40, 11, 32).sharedBlocks, 2u);
  kv->release(5);
  const hw::KvAllocation gone = kv->admit(6, 40, 12, 32);
  ASSERT_TRUE(gone.ok);
  EXPECT_EQ(gone.sharedBlocks, 0u);
}

TEST(PrefixCache, ASharedPrefixSeedsEveryNewConversation) {
  auto kv = cacheOf(16);
  constexpr uint64_t kShared = 99;
  // Conversation 1's first turn: 32 shared tokens then 10 of its own. Nothing is cached yet; its
  // first two blocks become the shared prefix's.
  ASSERT_EQ(kv->admit(1, 42, 1, 32, kShared, 32).sharedBlocks, 0u);
  EXPECT_EQ(kv->cachedBlocks(), 2u);
  // Conversation 2 begins with the same 32 tokens: it shares them at once.
  const hw::KvAllocation second = kv->admit(2, 50, 2, 32, kShared, 32);
  EXPECT_EQ(second.sharedBlocks, 2u);
  EXPECT_EQ(kv->blocks(2)[0], kv->blocks(1)[0]);
  EXPECT_EQ(kv->blocks(2)[1], kv->blocks(1)[1]);
  EXPECT_EQ(kv->usedBlocks(KvTier::kLocalHbm), 3u + 2u) << "1's 3 blocks and 2's one block of its own";
  kv->release(1);
  kv->release(2);
  EXPECT_EQ(kv->cachedBlocks(), 2u) << "the shared blocks, counted once";
}

TEST(PrefixCacheOffload, EvictedBlocksMoveToTheHostLastBlockFirstAndComeBackForAHit) {
  auto kv = offloadingCacheOf(4, 4);
  cachePrefix(*kv, 1, 11, 32);  // prefix 11: local blocks 0, 1
  cachePrefix(*kv, 2, 12, 32);  // prefix 12: local blocks 2, 3
  const std::vector<hw::KvBlock> p11 = {{KvTier::kLocalHbm, 0}, {KvTier::kLocalHbm, 1}};
  // Three new blocks, none free: prefix 11's last block, then its first, then prefix 12's last
  // move to the host (least recently used prefix first, each its last block on the chip first).
  ASSERT_TRUE(kv->admit(3, 48).ok);
  std::vector<hw::KvCacheMove> moves;
  kv->takeCacheMoves(moves);
  ASSERT_EQ(moves.size(), 3u);
  EXPECT_EQ(moves[0].move.from, p11[1]);
  EXPECT_EQ(moves[0].move.to, (hw::KvBlock{KvTier::kHost, 0}));
  EXPECT_EQ(moves[1].move.from, p11[0]);
  EXPECT_EQ(moves[2].move.from, (hw::KvBlock{KvTier::kLocalHbm, 3}));
  for (const hw::KvCacheMove& m : moves) EXPECT_TRUE(m.toHost);
  EXPECT_EQ(kv->offloadedBlocks(), 3u);
  EXPECT_EQ(kv->evictedBlocks(), 0u) << "nothing dropped";
  EXPECT_EQ(kv->cachedBlocks(), 4u);
  EXPECT_EQ(kv->cachedBlocksOn(KvTier::kHost), 3u);
  EXPECT_EQ(kv->cachedBlocksOn(KvTier::kLocalHbm), 1u);
  kv->release(3);
  // Prefix 11's next turn: both blocks come back from the host, in order, then it is a hit.
  const hw::KvAllocation hit = kv->admit(4, 40, 11, 32);
  ASSERT_TRUE(hit.ok);
  EXPECT_EQ(hit.sharedBlocks, 2u);
  moves.clear();
  kv->takeCacheMoves(moves);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_FALSE(moves[0].toHost);
  EXPECT_EQ(moves[0].move.from, (hw::KvBlock{KvTier::kHost, 1}));  // block 0 went second
  EXPECT_EQ(moves[1].move.from, (hw::KvBlock{KvTier::kHost, 0}));
  for (const hw::KvBlock& b : kv->blocks(4)) EXPECT_EQ(b.tier, KvTier::kLocalHbm);
  EXPECT_EQ(kv->restoredBlocks(), 2u);
  EXPECT_EQ(kv->cachedBlocksOn(KvTier::kHost), 1u) << "prefix 12's last block is still there";
  moves.clear();
  kv->takeCacheMoves(moves);
  EXPECT_TRUE(moves.empty()) << "each copy is listed once";
}

TEST(PrefixCacheOffload, AFullHostDropsItsLeastRecentlyUsedBlockAndAHitWithoutRoomEndsWhereItsBlocksStayOnTheHost) {
  auto kv = offloadingCacheOf(2, 1);
  cachePrefix(*kv, 1, 11, 32);  // prefix 11 fills the chip
  // Two blocks: prefix 11's last block goes to the host, then its first, which drops the last
  // from the full host (the prefix stays a leading run: block 0, now on the host).
  ASSERT_TRUE(kv->admit(2, 32).ok);
  EXPECT_EQ(kv->offloadedBlocks(), 2u);
  EXPECT_EQ(kv->evictedBlocks(), 1u);
  EXPECT_EQ(kv->cachedBlocks(), 1u);
  EXPECT_EQ(kv->cachedBlocksOn(KvTier::kHost), 1u);
  kv->release(2);
  // Again with room on the host for one block: the hit then finds block 0 on the chip and block 1
  // on the host; with the chip full of a running request, block 1 cannot come back.
  cachePrefix(*kv, 3, 12, 32);
  ASSERT_TRUE(kv->admit(4, 16).ok);  // one block: prefix 12's last block goes to the host
  EXPECT_EQ(kv->cachedBlocksOn(KvTier::kHost), 1u);
  const hw::KvAllocation hit = kv->admit(5, 16 + 16, 12, 32);
  EXPECT_FALSE(hit.ok) << "no room for its second block either";
  const hw::KvAllocation shorter = kv->admit(6, 16, 12, 16);
  ASSERT_TRUE(shorter.ok);
  EXPECT_EQ(shorter.sharedBlocks, 1u) << "block 0 is on the chip";
  kv->release(6);
  kv->release(4);
  const hw::KvAllocation whole = kv->admit(7, 32, 12, 32);
  ASSERT_TRUE(whole.ok);
  EXPECT_EQ(whole.sharedBlocks, 2u) << "with room again, block 1 came back";
  EXPECT_EQ(kv->restoredBlocks(), 1u);
}

TEST(PrefixCacheOffload, APlacementThatReadsTheHostUsesBlocksThatCannotComeBackWhereTheyAre) {
  const auto cache = offloadingCacheOf(2, 4, "offload_to_host");
  hw::KvBlockAllocator& kv = *cache;
  cachePrefix(kv, 1, 11, 32);
  ASSERT_TRUE(kv.admit(2, 32).ok);  // fills the chip: prefix 11's blocks go to the host
  EXPECT_EQ(kv.offloadedBlocks(), 2u);
  const hw::KvAllocation hit = kv.admit(3, 40, 11, 32);
  ASSERT_TRUE(hit.ok);
  EXPECT_EQ(hit.sharedBlocks, 2u) << "read over the host link, not recomputed";
  EXPECT_EQ(kv.restoredBlocks(), 0u);
  for (const hw::KvBlock& b : kv.blocks(3)) EXPECT_EQ(b.tier, KvTier::kHost);
}

workload::SchedulerConfig limits() {
  workload::SchedulerConfig c;
  c.maxBatch = 8;
  c.maxTokensPerStep = 4096;
  c.prefillChunk = 4096;
  c.kvWatermark = 0.0;
  return c;
}

/// Runs `r` alone to its end; returns its first step (the prompt's prefill).
workload::StepSequence serveAlone(workload::ServingScheduler& s, const workload::ServingRequest& r) {
  s.submit(r);
  const workload::StepBatch first = s.next();
  EXPECT_EQ(first.sequences.size(), 1u);
  s.complete();
  while (s.busy()) {
    s.next();
    s.complete();
  }
  return first.sequences.front();
}

TEST(PrefixCacheScheduler, ACachedPrefixCostsOnlyTheSuffixsPrefill) {
  workload::ServingScheduler s(limits(), cacheOf(64));
  // Turn 1: 100 prompt + 20 output tokens; its KV holds 119 tokens at the end: 7 full blocks.
  const workload::StepSequence turn1 = serveAlone(s, {1, 100, 20, false, 5, 0});
  EXPECT_EQ(turn1.context, 0u);
  EXPECT_EQ(turn1.tokens, 100u);
  // Turn 2: the 120 tokens of turn 1 and 50 new ones; 7 x 16 = 112 are cached.
  const workload::StepSequence turn2 = serveAlone(s, {2, 170, 10, false, 5, 120});
  EXPECT_EQ(turn2.context, 112u);
  EXPECT_EQ(turn2.tokens, 58u) << "only the suffix is prefilled";
  EXPECT_EQ(s.promptTokensAdmitted(), 270u);
  EXPECT_EQ(s.cachedPromptTokens(), 112u);
  // A prompt that is all cached still computes its last token (it samples).
  const workload::StepSequence again = serveAlone(s, {3, 160, 4, false, 5, 160});
  EXPECT_EQ(again.context, 159u);
  EXPECT_EQ(again.tokens, 1u);
}

TEST(PrefixCacheScheduler, ANewConversationPrefillsOnlyWhatFollowsTheSharedSystemPrompt) {
  workload::ServingScheduler s(limits(), cacheOf(64));
  // Two conversations begin with the same 64-token system prompt.
  const workload::StepSequence first = serveAlone(s, {1, 100, 4, false, 1, 64, 64});
  EXPECT_EQ(first.context, 0u);
  const workload::StepSequence other = serveAlone(s, {2, 90, 4, false, 2, 64, 64});
  EXPECT_EQ(other.context, 64u);
  EXPECT_EQ(other.tokens, 26u);
}

TEST(PrefixCacheScheduler, ATurnWhosePrefixWasEvictedPaysTheWholePrefillAgain) {
  workload::ServingScheduler s(limits(), cacheOf(10));
  serveAlone(s, {1, 100, 20, false, 5, 0});  // conversation 5 caches 7 blocks
  serveAlone(s, {2, 150, 2, false, 6, 0});   // another conversation needs 10: all of them go
  const workload::StepSequence turn2 = serveAlone(s, {3, 150, 2, false, 5, 120});
  EXPECT_EQ(turn2.context, 0u);
  EXPECT_EQ(turn2.tokens, 150u);
}

TEST(PrefixCacheScheduler, LongestPrefixAdmitsTheMostCachedRequestFirstAndArrivalOrderAmongEquals) {
  for (const bool longest : {false, true}) {
    workload::SchedulerConfig c = limits();
    c.maxBatch = 1;  // one admission per step
    if (longest) c.queuePolicy = workload::SchedulerConfig::QueuePolicy::kLongestPrefix;
    workload::ServingScheduler s(c, cacheOf(64));
    serveAlone(s, {1, 100, 20, false, 5, 0});  // conversation 5 caches 7 blocks
    serveAlone(s, {2, 40, 9, false, 6, 0});    // conversation 6 caches 3 blocks
    s.submit({3, 80, 2, false, 7, 0});         // a new conversation: nothing cached
    s.submit({4, 60, 2, false, 6, 48});        // conversation 6's next turn: 3 blocks cached
    s.submit({5, 150, 2, false, 5, 120});      // conversation 5's next turn: 7 blocks cached
    s.submit({6, 70, 2, false, 8, 0});         // another new conversation
    std::vector<uint64_t> order;
    while (s.busy()) {
      const workload::StepBatch b = s.next();
      for (const workload::StepSequence& q : b.sequences) {
        if (std::find(order.begin(), order.end(), q.request) == order.end()) order.push_back(q.request);
      }
      s.complete();
    }
    EXPECT_EQ(order, longest ? (std::vector<uint64_t>{5, 4, 3, 6}) : (std::vector<uint64_t>{3, 4, 5, 6}))
        << (longest ? "longest_prefix" : "fcfs");
  }
}

TEST(PrefixCacheOffloadScheduler, AStepListsItsOffloadsBeforeAndItsRestoresAsCacheCopies) {
  workload::ServingScheduler s(limits(), offloadingCacheOf(10, 16));
  serveAlone(s, {1, 100, 20, false, 5, 0});  // conversation 5 caches 7 blocks
  // Another conversation of 8 blocks with 3 free: 5 of conversation 5's move to the host.
  s.submit({2, 128, 1, false, 6, 0});
  s.next();
  ASSERT_EQ(s.swaps().size(), 1u);
  EXPECT_TRUE(s.swaps()[0].cache);
  EXPECT_TRUE(s.swaps()[0].toHost);
  EXPECT_EQ(s.swaps()[0].request, 2u);
  EXPECT_EQ(s.swaps()[0].moves.size(), 5u);
  s.complete();
  while (s.busy()) {
    s.next();
    s.complete();
  }
  // Turn 2 of conversation 5 (10 blocks): its 5 blocks on the host come back, each after one of
  // conversation 6's cached blocks went to the host to make room, and 3 more of those go for
  // its new blocks; then it prefills only its suffix.
  s.submit({3, 150, 2, false, 5, 120});
  const workload::StepBatch turn2 = s.next();
  ASSERT_EQ(turn2.sequences.size(), 1u);
  EXPECT_EQ(turn2.sequences[0].context, 112u);
  EXPECT_EQ(turn2.sequences[0].tokens, 38u);
  std::vector<bool> directions;  // per copy: to the host
  for (const workload::KvSwap& swap : s.swaps()) {
    EXPECT_TRUE(swap.cache);
    EXPECT_EQ(swap.request, 3u);
    for (std::size_t i = 0; i < swap.moves.size(); ++i) directions.push_back(swap.toHost);
  }
  EXPECT_EQ(directions,
            (std::vector<bool>{true, false, true, false, true, false, true, false, true, false, true, true, true}));
  EXPECT_EQ(s.restoredBlocks(), 5u);
  EXPECT_EQ(s.offloadedBlocks(), 5u + 8u);
}

}  // namespace
}  // namespace scoville
