// The serving scheduler: continuous batching, chunked prefill, KV admission and recompute
// preemption (swap preemption: ServingSchedulerSwapTest.cpp). Pure logic, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "hw/kv/KvCacheConfig.h"
#include "hw/kv/KvPlacementPolicy.h"
#include "test/unit/ServingSchedulerHarness.h"
#include "workloads/Random.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ServingScheduler.h"

namespace scoville::workload {
namespace {

using namespace schedulertest;

TEST(ServingScheduler, StepHoldsEveryDecodePlusPromptChunksWithinTheTokenBudgetAndBatch) {
  // Budget 100 tokens, 3 sequences, chunks of at most 64 tokens.
  const SchedulerConfig c = limits(3, 100, 64);
  ServingScheduler s(c, cacheOf(100));
  for (const ServingRequest& r :
       {ServingRequest{1, 10, 3}, ServingRequest{2, 150, 2}, ServingRequest{3, 30, 1}, ServingRequest{4, 5, 1}}) {
    s.submit(r);
  }
  EXPECT_TRUE(s.busy());
  EXPECT_EQ(s.waiting(), 4u);

  // 1: three admitted (the batch limit): 10 + 64 + 26 = 100 tokens; request 4 waits.
  StepBatch b = s.next();
  EXPECT_EQ(fed(b), (std::vector<Fed>{{1, 0, 10, true}, {2, 0, 64, false}, {3, 0, 26, false}}));
  EXPECT_EQ(s.ids(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(s.running(), 3u);
  EXPECT_EQ(s.waiting(), 1u);
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{1, true, false}, {2, false, false}, {3, false, false}}));

  // 2: the decode of 1 first, then the prompts in progress: 2 takes a whole chunk, 3 its last 4.
  b = s.next();
  EXPECT_EQ(fed(b), (std::vector<Fed>{{1, 10, 1, true}, {2, 64, 64, false}, {3, 26, 4, true}}));
  EXPECT_EQ(s.kv().tokens(1), 11u) << "a decode's KV grows by its token when the step is composed";
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{1, true, false}, {2, false, false}, {3, true, true}}));
  EXPECT_EQ(s.running(), 2u);

  // 3: 1 decodes its last token, 2 finishes its prompt (and samples), 4 is admitted whole.
  b = s.next();
  EXPECT_EQ(fed(b), (std::vector<Fed>{{1, 11, 1, true}, {2, 128, 22, true}, {4, 0, 5, true}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{1, true, true}, {2, true, false}, {4, true, true}}));

  // 4: 2 decodes its second and last token.
  b = s.next();
  EXPECT_EQ(fed(b), (std::vector<Fed>{{2, 150, 1, true}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{2, true, true}}));
  EXPECT_FALSE(s.busy());
  EXPECT_EQ(usedBlocks(s), 0u);
  EXPECT_TRUE(s.next().sequences.empty()) << "nothing left to run";
  EXPECT_TRUE(s.complete().empty());
}

TEST(ServingScheduler, APrefilledRequestOnAnIdleReplicaDecodesInTheFirstStep) {
  // Handed over by a prefill pool (disaggregation): admitted holding its prompt and first token,
  // it decodes from the step after its admission, which next() composes at once when nothing
  // else runs (an empty step would leave its runner waiting for another arrival).
  ServingScheduler s(limits(4, 100, 64), cacheOf(100));
  s.submit(ServingRequest{7, 40, 5, true});
  const StepBatch b = s.next();
  ASSERT_EQ(fed(b).size(), 1u);
  EXPECT_EQ(fed(b).front().request, 7u);
  EXPECT_EQ(fed(b).front().tokens, 1u);
  EXPECT_TRUE(fed(b).front().samples);
  EXPECT_EQ(s.running(), 1u);
}

TEST(ServingScheduler, UnderAsynchronousSchedulingARequestWaitsForTheRunnerToAdmitArrivals) {
  SchedulerConfig c = limits(4, 100, 64);
  c.asyncScheduling = true;
  ServingScheduler s(c, cacheOf(100));
  s.submit(ServingRequest{1, 10, 3});
  EXPECT_EQ(s.arriving(), 1u);
  EXPECT_EQ(s.waiting(), 0u);
  EXPECT_TRUE(s.busy()) << "an arriving request keeps the replica busy";
  EXPECT_TRUE(s.next().sequences.empty()) << "not seen before admitArrivals()";
  s.admitArrivals();
  EXPECT_EQ(s.arriving(), 0u);
  StepBatch b = s.next();
  EXPECT_EQ(fed(b), (std::vector<Fed>{{1, 0, 10, true}}));
  // Request 2 arrives while step 1 runs, after the runner admitted the arrivals as it launched
  // step 1: step 2 is composed without it, and it starts in step 3.
  s.admitArrivals();
  s.submit(ServingRequest{2, 20, 2});
  s.complete();
  b = s.next();
  EXPECT_EQ(fed(b), (std::vector<Fed>{{1, 10, 1, true}}));
  s.admitArrivals();
  s.complete();
  b = s.next();
  EXPECT_EQ(fed(b), (std::vector<Fed>{{1, 11, 1, true}, {2, 0, 20, true}}));
  // Synchronously, the same request is seen by the next composition.
  ServingScheduler sync(limits(4, 100, 64), cacheOf(100));
  sync.submit(ServingRequest{1, 10, 3});
  sync.next();
  sync.submit(ServingRequest{2, 20, 2});
  sync.complete();
  EXPECT_EQ(fed(sync.next()), (std::vector<Fed>{{1, 10, 1, true}, {2, 0, 20, true}}));
  EXPECT_EQ(sync.arriving(), 0u);
  sync.admitArrivals();  // a no-op
  EXPECT_EQ(sync.waiting(), 0u);
}

TEST(ServingScheduler, LongPromptRunsInPrefillChunksAndOnlyItsLastChunkSamples) {
  const SchedulerConfig c = limits(256, 8192, 256);
  ServingScheduler s(c, cacheOf(200));
  s.submit(ServingRequest{7, 1000, 3});
  const std::vector<Fed> expected = {{7, 0, 256, false},  {7, 256, 256, false}, {7, 512, 256, false},
                                     {7, 768, 232, true}, {7, 1000, 1, true},   {7, 1001, 1, true}};
  const std::vector<Outcome> expectedOutcomes = {{7, false, false}, {7, false, false}, {7, false, false},
                                                 {7, true, false},  {7, true, false},  {7, true, true}};
  for (std::size_t step = 0; step < expected.size(); ++step) {
    SCOPED_TRACE(step);
    ASSERT_TRUE(s.busy());
    EXPECT_EQ(fed(s.next()), std::vector<Fed>{expected[step]});
    EXPECT_EQ(outcomes(s.complete()), std::vector<Outcome>{expectedOutcomes[step]});
  }
  EXPECT_FALSE(s.busy());
  EXPECT_EQ(usedBlocks(s), 0u);
}

TEST(ServingScheduler, RequestFinishesAfterExactlyItsOutputTokensAndFreesItsBlocks) {
  for (uint64_t outputTokens : {1u, 2u, 17u, 100u}) {
    SCOPED_TRACE(outputTokens);
    const SchedulerConfig c = limits(8, 512, 64);
    ServingScheduler s(c, cacheOf(64));
    const std::vector<ServingRequest> requests = {{1, 100, outputTokens}, {2, 33, outputTokens + 3}};
    for (const ServingRequest& r : requests) s.submit(r);
    const Driven d = drive(s, c, requests);
    EXPECT_EQ(d.produced.at(1), outputTokens);
    EXPECT_EQ(d.produced.at(2), outputTokens + 3);
    EXPECT_EQ(d.finished, (std::set<uint64_t>{1, 2}));
    EXPECT_EQ(s.preemptions(), 0u);
    EXPECT_EQ(usedBlocks(s), 0u);
    EXPECT_EQ(s.running(), 0u);
    EXPECT_EQ(s.waiting(), 0u);
    // Request 2's prompt (33 tokens) samples in step 1 and each later step adds one of its tokens.
    EXPECT_EQ(d.steps, outputTokens + 3);
  }
}

TEST(ServingScheduler, AdmissionIsFifoAndARequestThatDoesNotFitWaitsWithoutBeingOvertaken) {
  // 10 blocks = 160 tokens. A holds 7 blocks for its prompt and grows to 10; B (5 blocks) does not
  // fit beside it, and C (1 block) would, but must not overtake B.
  const SchedulerConfig c = limits(256, 8192, 8192);
  ServingScheduler s(c, cacheOf(10));
  const uint64_t kA = 1, kB = 2, kC = 3;
  s.submit(ServingRequest{kA, 100, 50});
  s.submit(ServingRequest{kB, 80, 1});
  s.submit(ServingRequest{kC, 16, 1});
  uint64_t produced = 0;
  while (produced < 50) {
    EXPECT_EQ(fed(s.next()),
              (std::vector<Fed>{{kA, produced == 0 ? 0 : 100 + produced - 1, produced == 0 ? 100u : 1u, true}}))
        << "after " << produced << " tokens of A";
    EXPECT_EQ(s.waiting(), 2u);
    const std::vector<StepOutcome> out = s.complete();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].producedToken);
    ++produced;
    EXPECT_EQ(out[0].finished, produced == 50);
  }
  EXPECT_EQ(usedBlocks(s), 0u) << "A's blocks are freed when it finishes";
  // Now both fit, admitted in arrival order.
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 0, 80, true}, {kC, 0, 16, true}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kB, true, true}, {kC, true, true}}));
  EXPECT_FALSE(s.busy());
  EXPECT_EQ(s.preemptions(), 0u);
}

TEST(ServingScheduler, DecodeGrowthPreemptsTheNewestRequestWhichRecomputesWithoutResampling) {
  // 4 blocks = 64 tokens; A and B each grow to 55 tokens (4 blocks): they cannot both stay.
  const SchedulerConfig c = limits(256, 8192, 8192);
  ServingScheduler s(c, cacheOf(4));
  const uint64_t kA = 1, kB = 2;
  s.submit(ServingRequest{kA, 16, 40});
  s.submit(ServingRequest{kB, 16, 40});
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 0, 16, true}, {kB, 0, 16, true}}));
  s.complete();
  // Steps 2..17: both decode; at step 18 A's 33rd token needs a third block and B is preempted.
  for (uint64_t step = 2; step <= 17; ++step) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 14 + step, 1, true}, {kB, 14 + step, 1, true}})) << step;
    s.complete();
  }
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 32, 1, true}}));
  EXPECT_EQ(s.preemptions(), 1u);
  EXPECT_EQ(s.preemptionsOf(kB), 1);
  EXPECT_EQ(s.preemptionsOf(kA), 0);
  EXPECT_EQ(s.waiting(), 1u) << "B waits: its 32 tokens need 2 blocks, 1 is free";
  EXPECT_FALSE(s.kv().isResident(kB));
  s.complete();
  // A runs to its end (step 40) alone.
  for (uint64_t step = 19; step <= 40; ++step) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 14 + step, 1, true}})) << step;
    const std::vector<StepOutcome> out = s.complete();
    EXPECT_EQ(out.at(0).finished, step == 40);
  }
  // B re-runs its prompt and the 16 tokens it had fed (17 produced, the newest not yet fed),
  // without producing a token, then decodes its remaining 23 tokens.
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 0, 32, false}}));
  std::vector<StepOutcome> out = s.complete();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].producedToken);
  EXPECT_EQ(out[0].preemptions, 1);
  uint64_t produced = 17;
  while (s.busy()) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 16 + produced - 1, 1, true}}));
    out = s.complete();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].producedToken);
    ++produced;
    EXPECT_EQ(out[0].finished, produced == 40);
    ASSERT_LE(produced, 40u);
  }
  EXPECT_EQ(produced, 40u);
  EXPECT_EQ(usedBlocks(s), 0u);
}

TEST(ServingScheduler, AdmissionLeavesTheWatermarkFree) {
  // 4 blocks, watermark 25% = 1 block. A (2 blocks of prompt, growing to 3) runs; B (2 blocks)
  // would take the last free blocks and leave A none to grow into, so it waits until A finished.
  ServingScheduler s(limits(256, 8192, 64, 0.25), cacheOf(4));
  s.submit(ServingRequest{1, 32, 16});
  s.submit(ServingRequest{2, 32, 2});
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{1, 0, 32, true}}));
  s.complete();
  for (int step = 0; step < 15; ++step) {
    for (const Fed& f : fed(s.next())) EXPECT_EQ(f.request, 1u) << "B admitted into A's headroom";
    s.complete();
  }
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{2, 0, 32, true}}));
  EXPECT_EQ(s.preemptions(), 0u);
  // Without a watermark B is admitted at once, and A's growth preempts it.
  ServingScheduler tight(limits(256, 8192, 64, 0.0), cacheOf(4));
  tight.submit(ServingRequest{1, 32, 16});
  tight.submit(ServingRequest{2, 32, 2});
  EXPECT_EQ(fed(tight.next()).size(), 2u);
  tight.complete();
  tight.next();
  EXPECT_EQ(tight.preemptions(), 1u);
}

TEST(ServingScheduler, ReserveAdmissionAdmitsOnlyWhatCanFinishAndNeverPreempts) {
  // The case in which watermark admission preempts B (DecodeGrowthPreemptsTheNewestRequest...):
  // 4 blocks, A and B each grow to 55 tokens (4 blocks). Reserving A's 4, B waits until A ends.
  SchedulerConfig c = limits(256, 8192, 8192);
  c.admission = KvAdmission::kReserve;
  ServingScheduler s(c, cacheOf(4));
  s.submit(ServingRequest{1, 16, 40});
  s.submit(ServingRequest{2, 16, 40});
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{1, 0, 16, true}}));
  EXPECT_EQ(s.waiting(), 1u) << "B's 4 blocks are A's reserve, though 3 are free";
  s.complete();
  for (uint64_t step = 2; step <= 40; ++step) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{1, 14 + step, 1, true}})) << step;
    EXPECT_EQ(s.complete().at(0).finished, step == 40);
  }
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{2, 0, 16, true}}));
  s.complete();
  while (s.busy()) {
    s.next();
    s.complete();
  }
  EXPECT_EQ(s.preemptions(), 0u);
  // A request whose prompt and output exceed the cache is refused at once, as under watermark
  // admission; one that fills it exactly is accepted.
  ServingScheduler small(c, cacheOf(4));
  EXPECT_THROW(small.submit(ServingRequest{1, 16, 50}), std::invalid_argument);  // 65 tokens: 5 blocks
  EXPECT_NO_THROW(small.submit(ServingRequest{2, 16, 49}));                      // 64 tokens
}

TEST(ServingScheduler, ReserveAdmissionRunsEveryOverflowingLoadWithoutPreemption) {
  for (const OverflowCase& k : overflowCases()) {
    SCOPED_TRACE(testing::Message() << k);
    SchedulerConfig c = limits(k.maxBatch, k.maxTokens, k.chunk);
    c.admission = KvAdmission::kReserve;
    ServingScheduler s(c, cacheOf(k.blocks));
    const std::vector<ServingRequest> requests = overflowLoad(k);
    for (const ServingRequest& r : requests) s.submit(r);
    const Driven d = drive(s, c, requests);
    EXPECT_EQ(s.preemptions(), 0u);
    EXPECT_EQ(d.finished.size(), requests.size());
    for (const ServingRequest& r : requests) {
      EXPECT_EQ(d.produced.count(r.id) ? d.produced.at(r.id) : 0, r.outputTokens) << "request " << r.id;
    }
    EXPECT_EQ(usedBlocks(s), 0u);
    // Each request's prompt was computed once: no recompute.
    uint64_t prompts = 0;
    for (const ServingRequest& r : requests) prompts += r.inputTokens;
    EXPECT_EQ(d.prefillTokens, prompts);
  }
}

// One layer keeps every token and one a sliding window: each block the window overlaps takes one
// more slot, so a request holds most slots not at its last token but at the first token of its
// last block, when its window reaches furthest back.
std::unique_ptr<hw::KvBlockAllocator> windowCache(uint64_t slots, uint64_t window) {
  hw::KvCacheConfig config;
  config.blockTokens = static_cast<int>(kBlockTokens);
  config.placement = "local_first";
  hw::KvTierCapacities capacities;
  capacities.localHbmBytes = slots * kBlockTokens * 64;
  return std::make_unique<hw::KvBlockAllocator>(config, hw::KvModelShape{1, 64, 1, window}, capacities,
                                                hw::makeKvPlacementPolicy(config.placement));
}

TEST(ServingScheduler, ARequestMustFitTheMostSlotsItsSlidingWindowEverHolds) {
  const auto probe = windowCache(7, 32);
  // 64 tokens: blocks 0-3 and window slots for blocks 2-3 (tokens 32-63); with 49 tokens the
  // window (tokens 17-48) spans blocks 1-3.
  EXPECT_EQ(probe->slotsFor(64), 6u);
  EXPECT_EQ(probe->slotsFor(49), 7u);
  EXPECT_EQ(probe->peakSlotsFor(64), 7u);
  EXPECT_EQ(probe->peakSlotsFor(111), probe->slotsFor(111)) << "blocks 0-6 and 4-6 at its 97th token as at its last";
  for (const KvAdmission admission : {KvAdmission::kWatermark, KvAdmission::kReserve}) {
    SchedulerConfig c = limits(256, 8192, 8192);
    c.admission = admission;
    // 16 + 49 tokens, the last not fed back: 64, whose window needs 7 slots at token 49. A cache
    // of 6 would have it preempt itself there, again after every recompute.
    ServingScheduler six(c, windowCache(6, 32));
    EXPECT_THROW(six.submit(ServingRequest{1, 16, 49}), std::invalid_argument);
    ServingScheduler seven(c, windowCache(7, 32));
    const std::vector<ServingRequest> lone{ServingRequest{1, 16, 49}};
    seven.submit(lone[0]);
    EXPECT_EQ(drive(seven, c, lone).finished.size(), 1u);
    EXPECT_EQ(seven.preemptions(), 0u);
    EXPECT_EQ(seven.kv().peakBlocks(hw::KvTier::kLocalHbm), 7u);
  }
  // A window of 33 tokens (1 more than two blocks): the token that opens a block also moves the
  // window past one, whose slot is freed only after the new block's is placed.
  const auto odd = windowCache(64, 33);
  uint64_t most = 0;
  for (uint64_t t = 1; t <= 200; ++t) most = std::max(most, odd->slotsFor(t));
  EXPECT_EQ(odd->peakSlotsFor(200), most + 1);
  const auto grow = [](uint64_t slots) {
    const auto kv = windowCache(slots, 33);
    EXPECT_TRUE(kv->admit(1, 1).ok);
    for (uint64_t t = 2; t <= 200; ++t) {
      if (!kv->append(1, 1).preempted.empty()) return false;
    }
    return true;
  };
  EXPECT_TRUE(grow(odd->peakSlotsFor(200)));
  EXPECT_FALSE(grow(odd->peakSlotsFor(200) - 1)) << "the transient slot is real";
}

TEST(ServingScheduler, ReserveAdmissionCountsTheSlidingWindowsBlocks) {
  SchedulerConfig c = limits(256, 8192, 8192);
  c.admission = KvAdmission::kReserve;
  std::vector<ServingRequest> requests;
  for (uint64_t id = 1; id <= 12; ++id) requests.push_back(ServingRequest{id, 16 + id, 33 + 11 * (id % 7)});
  ServingScheduler s(c, windowCache(24, 32));
  for (const ServingRequest& r : requests) s.submit(r);
  const Driven d = drive(s, c, requests);
  EXPECT_EQ(s.preemptions(), 0u);
  EXPECT_EQ(d.finished.size(), requests.size());
  ServingScheduler watermark(limits(256, 8192, 8192), windowCache(24, 32));
  for (const ServingRequest& r : requests) watermark.submit(r);
  drive(watermark, limits(256, 8192, 8192), requests);
  EXPECT_GT(watermark.preemptions(), 0u) << "admitting prompts alone overfills the cache";
}

TEST(ServingScheduler, RequestPreemptedBeforeSamplingRerunsItsPromptAndSamplesAtItsEnd) {
  // 3 blocks. A (16 prompt tokens, 1 block) and B (32, 2 blocks) are both admitted at once; A's
  // first decode needs a block, and B, the newest, is preempted mid-prompt.
  const SchedulerConfig c = limits(256, 8192, 16);
  ServingScheduler s(c, cacheOf(3));
  const uint64_t kA = 1, kB = 2;
  s.submit(ServingRequest{kA, 16, 30});
  s.submit(ServingRequest{kB, 32, 2});
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 0, 16, true}, {kB, 0, 16, false}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kA, true, false}, {kB, false, false}}));
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 16, 1, true}}));
  EXPECT_EQ(s.preemptionsOf(kB), 1);
  s.complete();
  for (uint64_t step = 3; step <= 30; ++step) {
    EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kA, 14 + step, 1, true}})) << step;
    EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kA, true, step == 30}}));
  }
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 0, 16, false}}));
  s.complete();
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 16, 16, true}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kB, true, false}}));
  EXPECT_EQ(fed(s.next()), (std::vector<Fed>{{kB, 32, 1, true}}));
  EXPECT_EQ(outcomes(s.complete()), (std::vector<Outcome>{{kB, true, true}}));
  EXPECT_FALSE(s.busy());
  EXPECT_EQ(s.preemptions(), 1u);
}

TEST(ServingScheduler, RequestPreemptedAgainDuringItsRecomputeStillRecomputesItsWholeContext) {
  // 3 blocks, chunks of 2. B (prompt 12) produces 5 tokens, so it holds 12 + 5 - 1 = 16 tokens,
  // then is preempted repeatedly: by its own growth, and finally by C's growth while B is part-way
  // through recomputing those 16 tokens. Whenever it resumes decoding, its context must be 16.
  const SchedulerConfig c = limits(256, 8192, 2);
  const uint64_t kA = 1, kC = 2, kB = 3;
  const std::vector<ServingRequest> requests = {{kA, 4, 10}, {kC, 4, 30}, {kB, 12, 6}};
  std::vector<Fed> ofB;
  {
    ServingScheduler s(c, cacheOf(3));
    for (const ServingRequest& r : requests) s.submit(r);
    for (int step = 0; s.busy() && step < 1000; ++step) {
      for (const Fed& f : fed(s.next())) {
        if (f.request == kB) ofB.push_back(f);
      }
      s.complete();
    }
    EXPECT_FALSE(s.busy());
    EXPECT_GE(s.preemptions(), 2u);
  }
  ASSERT_FALSE(ofB.empty());
  EXPECT_EQ(ofB.back(), (Fed{kB, 16, 1, true})) << "B's 6th token is fed after its 16 tokens";
  // From its last restart: chunks of 2 over all 16 tokens, none sampling, then the decode.
  const auto restart = std::find_if(ofB.rbegin(), ofB.rend(), [](const Fed& f) { return f.context == 0; });
  ASSERT_NE(restart, ofB.rend());
  std::vector<Fed> expected;
  for (uint64_t context = 0; context < 16; context += 2) expected.push_back(Fed{kB, context, 2, false});
  expected.push_back(Fed{kB, 16, 1, true});
  EXPECT_EQ(std::vector<Fed>(restart.base() - 1, ofB.end()), expected);

  // And every contract of every step along the way.
  ServingScheduler again(c, cacheOf(3));
  for (const ServingRequest& r : requests) again.submit(r);
  drive(again, c, requests);
}

TEST(ServingScheduler, CacheTooSmallForAllRequestsPreemptsAndStillCompletesEveryRequestExactly) {
  for (const OverflowCase& k : overflowCases()) {
    SCOPED_TRACE(testing::Message() << k);
    const SchedulerConfig c = limits(k.maxBatch, k.maxTokens, k.chunk);
    ServingScheduler s(c, cacheOf(k.blocks));
    const std::vector<ServingRequest> requests = overflowLoad(k);
    for (const ServingRequest& r : requests) s.submit(r);
    const Driven d = drive(s, c, requests);
    EXPECT_GT(s.preemptions(), 0u);
    EXPECT_FALSE(s.busy());
    EXPECT_EQ(d.finished.size(), requests.size());
    for (const ServingRequest& r : requests) {
      EXPECT_EQ(d.produced.count(r.id) ? d.produced.at(r.id) : 0, r.outputTokens) << "request " << r.id;
    }
    EXPECT_EQ(usedBlocks(s), 0u);
    EXPECT_EQ(s.kv().peakBlocks(hw::KvTier::kLocalHbm), k.blocks) << "the cache was the bottleneck";
  }
}

TEST(ServingScheduler, StreamOfRequestsSubmittedWhileRunningAllComplete) {
  // Requests keep arriving between steps (as the serving engine submits them).
  const SchedulerConfig c = limits(16, 128, 48);
  ServingScheduler s(c, cacheOf(20));
  Rng rng(42);
  std::vector<ServingRequest> requests;
  std::map<uint64_t, uint64_t> produced;
  std::set<uint64_t> finished;
  uint64_t nextId = 1;
  for (int step = 0; step < 100000 && (nextId <= 60 || s.busy()); ++step) {
    if (nextId <= 60 && step % 3 == 0) {
      const uint64_t input = 1 + rng.below(200);
      requests.push_back(ServingRequest{nextId++, input, 1 + rng.below(100)});
      s.submit(requests.back());
    }
    if (!s.busy()) continue;
    const StepBatch b = s.next();
    EXPECT_FALSE(b.sequences.empty());
    for (const StepOutcome& o : s.complete()) {
      EXPECT_EQ(finished.count(o.request), 0u);
      if (o.producedToken) ++produced[o.request];
      if (o.finished) finished.insert(o.request);
    }
  }
  EXPECT_FALSE(s.busy());
  ASSERT_EQ(finished.size(), 60u);
  for (const ServingRequest& r : requests) EXPECT_EQ(produced[r.id], r.outputTokens) << r.id;
  EXPECT_GT(s.preemptions(), 0u) << "the load was meant to overflow the cache";
  EXPECT_EQ(usedBlocks(s), 0u);
}

TEST(ServingScheduler, SubmitRejectsARequestThatCouldNeverFitAndBadIds) {
  // 10 blocks = 160 tokens.
  ServingScheduler s(limits(256, 8192, 8192), cacheOf(10));
  EXPECT_THROW(s.submit(ServingRequest{1, 161, 1}), std::invalid_argument);
  EXPECT_THROW(s.submit(ServingRequest{2, 100, 200}), std::invalid_argument);
  EXPECT_FALSE(s.busy()) << "a rejected request is not queued";
  EXPECT_THROW(s.submit(ServingRequest{0, 10, 10}), std::invalid_argument) << "ids are > 0";
  s.submit(ServingRequest{3, 10, 10});
  EXPECT_THROW(s.submit(ServingRequest{3, 10, 10}), std::invalid_argument) << "ids are unique";
  // Exactly the whole cache: prompt + output = 160 tokens, and it completes alone.
  s.submit(ServingRequest{4, 100, 60});
  EXPECT_EQ(s.waiting(), 2u);
  const Driven d = drive(s, limits(256, 8192, 8192), {{3, 10, 10}, {4, 100, 60}});
  EXPECT_EQ(d.produced.at(4), 60u);
  EXPECT_EQ(d.produced.at(3), 10u);
}

// The last output token is never fed back, so a request holds at most prompt + output - 1 tokens
// of KV: one that needs exactly the whole cache that way fits alone.
TEST(ServingScheduler, SubmitAcceptsARequestWhoseLargestCacheIsExactlyTheCapacity) {
  ServingScheduler s(limits(256, 8192, 8192), cacheOf(10));
  EXPECT_NO_THROW(s.submit(ServingRequest{1, 100, 61})) << "holds at most 100 + 61 - 1 = 160 tokens = 10 blocks";
  if (s.busy()) {
    const Driven d = drive(s, limits(256, 8192, 8192), {{1, 100, 61}});
    EXPECT_EQ(d.produced.at(1), 61u);
    EXPECT_EQ(s.preemptions(), 0u);
  }
}

TEST(ServingScheduler, KvAddressAndLayerStrideMatchTheAllocatorLayout) {
  const SchedulerConfig c = limits(256, 8192, 8192);
  ServingScheduler s(c, cacheOf(20));
  s.submit(ServingRequest{1, 40, 5});
  s.submit(ServingRequest{2, 20, 2});
  s.submit(ServingRequest{3, 70, 4});
  std::set<uint64_t> firstAddresses;
  for (int step = 0; s.busy(); ++step) {
    if (step == 2) s.submit(ServingRequest{4, 33, 3});  // takes slots request 2 freed
    const StepBatch b = s.next();
    EXPECT_EQ(b.kvLayerStride, s.kv().capacityBlocks(hw::KvTier::kLocalHbm) * s.kv().layerBlockBytes());
    EXPECT_EQ(b.kvLayerStride, 20u * kBlockTokens * kShape.bytesPerTokenPerLayer);
    std::set<uint64_t> addresses;
    for (const StepSequence& q : b.sequences) {
      const std::vector<hw::KvBlock>& blocks = s.kv().blocks(q.request);
      ASSERT_FALSE(blocks.empty());
      for (uint32_t layer = 0; layer < kShape.layers; ++layer) {
        EXPECT_EQ(q.kvAddress + layer * b.kvLayerStride, s.kv().address(blocks.front(), layer))
            << "request " << q.request << " layer " << layer;
      }
      EXPECT_TRUE(addresses.insert(q.kvAddress).second) << "two sequences share a first block";
      firstAddresses.insert(q.kvAddress);
    }
    s.complete();
  }
  EXPECT_GE(firstAddresses.size(), 3u) << "requests live in different blocks";
}

}  // namespace
}  // namespace scoville::workload
