// The serving scheduler under swap preemption: victims move to host with their progress, come
// back before anything newer is admitted, oldest first, and every request still completes with
// exactly its tokens; the host running out falls back to recompute. Pure logic, no SystemC.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "hw/kv/KvCacheConfig.h"
#include "test/unit/ServingSchedulerHarness.h"
#include "workloads/Random.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ServingScheduler.h"

namespace scoville::workload {
namespace {

using namespace schedulertest;
using hw::KvPreemption;

/// The swaps() of the step just composed, as (request, to host, blocks moved).
struct Swapped {
  uint64_t request;
  bool toHost;
  std::size_t blocks;
  bool operator==(const Swapped& o) const { return request == o.request && toHost == o.toHost && blocks == o.blocks; }
};
std::ostream& operator<<(std::ostream& os, const Swapped& s) {
  return os << "{req " << s.request << (s.toHost ? " out, " : " in, ") << s.blocks << " blocks}";
}
std::vector<Swapped> swapsOf(const ServingScheduler& s) {
  std::vector<Swapped> out;
  for (const KvSwap& swap : s.swaps()) out.push_back(Swapped{swap.request, swap.toHost, swap.moves.size()});
  return out;
}

TEST(ServingSchedulerSwap, VictimKeepsItsProgressOnTheHostAndResumesBeforeANewerRequest) {
  // 4 blocks = 64 tokens, 8 host blocks. A and B (prompts of 16) each grow to 55 tokens: at step
  // 18 A's 33rd token needs a third block and B, the newest, is swapped out with its 2 blocks.
  // C arrives meanwhile: it would fit beside A for a while, but B was admitted first.
  const SchedulerConfig c = limits(256, 8192, 8192);
  ServingScheduler s(c, cacheOf(4, KvPreemption::kSwap, 8));
  const uint64_t kA = 1, kB = 2, kC = 3;
  s.submit(ServingRequest{kA, 16, 40});
  s.submit(ServingRequest{kB, 16, 40});
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 0, 16, true}, {kB, 0, 16, true}}));
  s.complete();
  for (uint64_t step = 2; step <= 17; ++step) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 14 + step, 1, true}, {kB, 14 + step, 1, true}})) << step;
    EXPECT_TRUE(s.swaps().empty());
    s.complete();
  }
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 32, 1, true}}));
  EXPECT_EQ(swapsOf(s), (std::vector<Swapped>{{kB, true, 2}})) << "B's two blocks go to host";
  EXPECT_TRUE(s.kv().isSwapped(kB));
  EXPECT_EQ(s.kv().usedBlocks(hw::KvTier::kHost), 2u);
  EXPECT_EQ(s.preemptions(), 1u);
  EXPECT_EQ(s.swapOuts(), 1u);
  EXPECT_EQ(s.recomputes(), 0u) << "a swapped request is not recomputed";
  EXPECT_EQ(s.preemptionsOf(kB), 1);
  EXPECT_EQ(s.recomputesOf(kB), 0);
  EXPECT_EQ(s.swapped(), 1u);
  EXPECT_EQ(s.waiting(), 0u);
  EXPECT_TRUE(s.busy());
  s.complete();
  s.submit(ServingRequest{kC, 16, 1});
  // A runs to its end (step 40) alone: B needs its 2 blocks and one to grow into, and C, though
  // it would fit, must not overtake B.
  for (uint64_t step = 19; step <= 40; ++step) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 14 + step, 1, true}})) << step;
    EXPECT_TRUE(s.swaps().empty()) << step;
    const std::vector<StepOutcome> out = s.complete();
    EXPECT_EQ(out.at(0).finished, step == 40);
  }
  // B comes back with its 32 tokens and decodes at once (no recompute, no resampling), then C.
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 32, 1, true}, {kC, 0, 16, true}}));
  EXPECT_EQ(swapsOf(s), (std::vector<Swapped>{{kB, false, 2}}));
  EXPECT_FALSE(s.kv().isSwapped(kB));
  EXPECT_EQ(s.kv().usedBlocks(hw::KvTier::kHost), 0u);
  EXPECT_EQ(s.swapIns(), 1u);
  EXPECT_EQ(s.swappedOutBlocks(), 2u);
  EXPECT_EQ(s.swappedInBlocks(), 2u);
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kB, true, false}, {kC, true, true}}));
  uint64_t produced = 18;
  while (s.busy()) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 16 + produced - 1, 1, true}}));
    const std::vector<StepOutcome> out = s.complete();
    ASSERT_EQ(out.size(), 1u);
    ++produced;
    EXPECT_EQ(out[0].finished, produced == 40);
    EXPECT_EQ(out[0].preemptions, 1);
    ASSERT_LE(produced, 40u);
  }
  EXPECT_EQ(produced, 40u);
  EXPECT_EQ(usedBlocks(s), 0u);
}

TEST(ServingSchedulerSwap, SwappedRequestsResumeOldestFirst) {
  // 6 blocks. A, B, C (prompts of 16) grow together: C is swapped out when A reaches a third
  // block, B when A reaches a fourth. Both come back after A, B (admitted first) before C.
  const SchedulerConfig c = limits(256, 8192, 8192);
  ServingScheduler s(c, cacheOf(6, KvPreemption::kSwap, 16));
  const std::vector<ServingRequest> requests = {{1, 16, 60}, {2, 16, 60}, {3, 16, 60}};
  for (const ServingRequest& r : requests) s.submit(r);
  std::vector<Swapped> history;
  while (s.busy()) {
    s.next();
    for (const Swapped& w : swapsOf(s)) history.push_back(w);
    s.complete();
  }
  EXPECT_EQ(history, (std::vector<Swapped>{{3, true, 2}, {2, true, 3}, {2, false, 3}, {3, false, 2}}));
  EXPECT_EQ(s.recomputes(), 0u);
  ServingScheduler again(c, cacheOf(6, KvPreemption::kSwap, 16));
  for (const ServingRequest& r : requests) again.submit(r);
  const Driven d = drive(again, c, requests);
  for (const ServingRequest& r : requests) EXPECT_EQ(d.produced.at(r.id), r.outputTokens);
}

TEST(ServingSchedulerSwap, CacheTooSmallForAllRequestsSwapsAndStillCompletesEveryRequestExactly) {
  for (const OverflowCase& k : overflowCases()) {
    SCOPED_TRACE(testing::Message() << k);
    const SchedulerConfig c = limits(k.maxBatch, k.maxTokens, k.chunk, 0.01);
    const std::vector<ServingRequest> requests = overflowLoad(k);
    uint64_t prompts = 0;
    for (const ServingRequest& r : requests) prompts += r.inputTokens;
    // Host room for everything: every preemption swaps, nothing is computed twice.
    ServingScheduler swap(c, cacheOf(k.blocks, KvPreemption::kSwap, 40 * k.blocks));
    for (const ServingRequest& r : requests) swap.submit(r);
    const Driven d = drive(swap, c, requests);
    EXPECT_GT(swap.swapOuts(), 0u);
    EXPECT_EQ(swap.recomputes(), 0u);
    EXPECT_EQ(swap.preemptions(), swap.swapOuts());
    EXPECT_EQ(swap.swapIns(), swap.swapOuts()) << "every swapped request came back";
    EXPECT_EQ(swap.swappedInBlocks(), swap.swappedOutBlocks());
    EXPECT_EQ(d.swapOuts, swap.swapOuts());
    EXPECT_EQ(d.swapIns, swap.swapIns());
    EXPECT_EQ(d.prefillTokens, prompts) << "swapped requests keep their progress";
    EXPECT_EQ(d.finished.size(), requests.size());
    for (const ServingRequest& r : requests) {
      EXPECT_EQ(d.produced.count(r.id) ? d.produced.at(r.id) : 0, r.outputTokens) << "request " << r.id;
    }
    EXPECT_EQ(usedBlocks(swap), 0u) << "no block left on the chip or the host";

    // The same load under recompute redoes work; with a host of one block, swap falls back to it.
    ServingScheduler recompute(c, cacheOf(k.blocks));
    for (const ServingRequest& r : requests) recompute.submit(r);
    EXPECT_GT(drive(recompute, c, requests).prefillTokens, prompts);
    ServingScheduler cramped(c, cacheOf(k.blocks, KvPreemption::kSwap, 1));
    for (const ServingRequest& r : requests) cramped.submit(r);
    const Driven f = drive(cramped, c, requests);
    EXPECT_GT(cramped.recomputes(), 0u) << "a victim of more than one block does not fit the host";
    EXPECT_EQ(cramped.preemptions(), cramped.recomputes() + cramped.swapOuts());
    EXPECT_EQ(f.finished.size(), requests.size());
    EXPECT_EQ(usedBlocks(cramped), 0u);
  }
}

TEST(ServingSchedulerSwap, RequestSwappedMidPromptContinuesItsPromptAndSamplesOnce) {
  // 3 blocks, chunks of 16. A (16 prompt tokens) and B (32) are admitted together; A's first
  // decode needs a block and B, mid-prompt, is swapped out with the blocks it reserved. Back, it
  // takes its second chunk (no re-run of the first) and samples at its end.
  const SchedulerConfig c = limits(256, 8192, 16);
  ServingScheduler s(c, cacheOf(3, KvPreemption::kSwap, 4));
  const uint64_t kA = 1, kB = 2;
  s.submit(ServingRequest{kA, 16, 30});
  s.submit(ServingRequest{kB, 32, 2});
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 0, 16, true}, {kB, 0, 16, false}}));
  s.complete();
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 16, 1, true}}));
  EXPECT_EQ(swapsOf(s), (std::vector<Swapped>{{kB, true, 2}}));
  s.complete();
  for (uint64_t step = 3; step <= 30; ++step) {
    s.next();
    s.complete();
  }
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 16, 16, true}}));
  EXPECT_EQ(swapsOf(s), (std::vector<Swapped>{{kB, false, 2}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kB, true, false}}));
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 32, 1, true}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kB, true, true}}));
  EXPECT_FALSE(s.busy());
  EXPECT_EQ(s.recomputes(), 0u);
}

}  // namespace
}  // namespace scoville::workload
