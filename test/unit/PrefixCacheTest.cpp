// Prefix caching: a prefix's blocks outlive their users, count as free, are evicted least
// recently used tail first, and a request whose prefix is cached prefills only its suffix; one
// whose prefix was evicted pays the whole prefill again.
#include <gtest/gtest.h>

#include <memory>

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

}  // namespace
}  // namespace scoville
