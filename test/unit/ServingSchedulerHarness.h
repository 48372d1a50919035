#pragma once
// Helpers of the serving scheduler's tests: small KV caches, step limits, readable views of a
// step and its outcomes, and drive(), which runs a scheduler to the end checking every contract of
// every step. Pure logic, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "hw/kv/KvCacheConfig.h"
#include "hw/kv/KvPlacementPolicy.h"
#include "workloads/Random.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ServingScheduler.h"

namespace scoville::workload::schedulertest {

inline constexpr uint64_t kBlockTokens = 16;
inline constexpr hw::KvModelShape kShape{2, 64};  // 2 layers, 64 B per token per layer
inline constexpr uint64_t kBlockBytes = kBlockTokens * kShape.bytesPerTokenPerLayer * kShape.layers;  // 2 KiB

/// A local-HBM cache of `blocks` blocks of 16 tokens, recompute on preemption; or swap, with
/// `hostBlocks` blocks of host memory to swap to.
inline std::unique_ptr<hw::KvBlockAllocator> cacheOf(uint64_t blocks,
                                                     hw::KvPreemption preemption = hw::KvPreemption::kRecompute,
                                                     uint64_t hostBlocks = 0) {
  hw::KvCacheConfig c;
  c.blockTokens = static_cast<int>(kBlockTokens);
  c.placement = "local_first";
  c.preemption = preemption;
  hw::KvTierCapacities capacities;
  capacities.localHbmBytes = blocks * kBlockBytes;
  capacities.hostBytes = hostBlocks * kBlockBytes;
  return std::make_unique<hw::KvBlockAllocator>(c, kShape, capacities, hw::makeKvPlacementPolicy(c.placement));
}

/// Limits without an admission watermark: the hand-built cases fill the cache to the last block
/// (ServingScheduler.AdmissionLeavesTheWatermarkFree tests the watermark).
inline SchedulerConfig limits(int maxBatch, int maxTokensPerStep, int prefillChunk, double watermark = 0.0) {
  SchedulerConfig c;
  c.maxBatch = maxBatch;
  c.maxTokensPerStep = maxTokensPerStep;
  c.prefillChunk = prefillChunk;
  c.kvWatermark = watermark;
  return c;
}

inline uint64_t usedBlocks(const ServingScheduler& s) {
  uint64_t used = 0;
  for (hw::KvTier tier : hw::kKvTiers) used += s.kv().usedBlocks(tier);
  return used;
}

/// What one step of the scheduler fed, in a form that compares and prints well.
struct Fed {
  uint64_t request;
  uint64_t context;
  uint64_t tokens;
  bool samples;
  bool operator==(const Fed& o) const {
    return request == o.request && context == o.context && tokens == o.tokens && samples == o.samples;
  }
};
inline std::ostream& operator<<(std::ostream& os, const Fed& f) {
  return os << "{req " << f.request << ", ctx " << f.context << ", tokens " << f.tokens << ", samples " << f.samples
            << "}";
}

inline std::vector<Fed> fed(const StepBatch& batch) {
  std::vector<Fed> out;
  for (const StepSequence& s : batch.sequences) out.push_back(Fed{s.request, s.context, s.tokens, s.samples});
  return out;
}

struct Outcome {
  uint64_t request;
  bool produced;
  bool finished;
  bool operator==(const Outcome& o) const {
    return request == o.request && produced == o.produced && finished == o.finished;
  }
};
inline std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{req " << o.request << ", produced " << o.produced << ", finished " << o.finished << "}";
}

inline std::vector<Outcome> outcomes(const std::vector<StepOutcome>& in) {
  std::vector<Outcome> out;
  for (const StepOutcome& o : in) out.push_back(Outcome{o.request, o.producedToken, o.finished});
  return out;
}

/// Result of driving a scheduler until it is idle.
struct Driven {
  std::map<uint64_t, uint64_t> produced;  ///< output tokens produced per request
  std::set<uint64_t> finished;
  uint64_t steps = 0;
  uint64_t swapOuts = 0;  ///< swaps() entries seen, each direction
  uint64_t swapIns = 0;
  uint64_t prefillTokens = 0;  ///< prompt tokens fed, recomputes included
};

/// Drives next()/complete() until !busy(), checking every contract of each step on the way:
/// limits, sequence order, context = tokens computed so far (0 again after a recompute, kept
/// across a swap), which steps sample, that every decoding request not swapped out is in each step
/// the limits allow, that swaps() moves blocks off the chip for requests now swapped out and back
/// for requests in the step, and that each request finishes exactly on its last output token.
inline Driven drive(ServingScheduler& s, const SchedulerConfig& config, const std::vector<ServingRequest>& requests,
                    uint64_t maxSteps = 200000) {
  Driven d;
  std::map<uint64_t, ServingRequest> byId;
  for (const ServingRequest& r : requests) byId[r.id] = r;
  std::map<uint64_t, uint64_t> kvAfter;     // tokens computed into its cache by the steps so far
  std::map<uint64_t, int> preemptionsSeen;  // preemptionsOf() when it last ran
  std::map<uint64_t, int> recomputesSeen;   // recomputesOf() when it last ran
  std::set<uint64_t> decoding;              // requests whose next step must be a decode
  std::set<uint64_t> broken;                // requests already reported
  while (s.busy()) {
    if (d.steps >= maxSteps) {
      ADD_FAILURE() << "scheduler still busy after " << maxSteps << " steps";
      break;
    }
    const StepBatch batch = s.next();
    ++d.steps;
    SCOPED_TRACE(testing::Message() << "step " << d.steps);
    EXPECT_FALSE(batch.sequences.empty()) << "busy but nothing to run";
    EXPECT_LE(batch.sequences.size(), static_cast<std::size_t>(config.maxBatch));
    EXPECT_LE(batch.tokens(), static_cast<uint64_t>(config.maxTokensPerStep));
    if (s.ids().size() != batch.sequences.size()) {
      ADD_FAILURE() << "ids() has " << s.ids().size() << " entries for " << batch.sequences.size() << " sequences";
      return d;
    }

    // Requests recomputed by this next() left the decoding set (swapped ones keep their progress).
    for (auto it = decoding.begin(); it != decoding.end();) {
      it = s.recomputesOf(*it) > recomputesSeen[*it] ? decoding.erase(it) : std::next(it);
    }
    std::set<uint64_t> inStep(s.ids().begin(), s.ids().end());
    bool swappingIn = false;
    for (const KvSwap& swap : s.swaps()) {
      swappingIn = swappingIn || !swap.toHost;
      EXPECT_FALSE(swap.toHost && swappingIn) << "a swap-out after a swap-in";
      (swap.toHost ? d.swapOuts : d.swapIns) += 1;
      EXPECT_EQ(swap.toHost, s.kv().isSwapped(swap.request)) << "request " << swap.request;
      EXPECT_EQ(!swap.toHost, inStep.count(swap.request) == 1) << "request " << swap.request;
      for (const hw::KvBlockMove& m : swap.moves) {
        EXPECT_EQ(m.from.tier == hw::KvTier::kHost, !swap.toHost) << "request " << swap.request;
        EXPECT_EQ(m.to.tier == hw::KvTier::kHost, swap.toHost) << "request " << swap.request;
      }
    }
    inStep.clear();
    for (std::size_t i = 0; i < batch.sequences.size(); ++i) {
      const StepSequence& q = batch.sequences[i];
      const uint64_t id = q.request;
      EXPECT_EQ(s.ids()[i], id);
      if (byId.count(id) != 1) {
        ADD_FAILURE() << "unknown request " << id;
        return d;
      }
      EXPECT_TRUE(inStep.insert(id).second) << "request " << id << " twice in one step";
      EXPECT_EQ(d.finished.count(id), 0u) << "request " << id << " runs after it finished";
      EXPECT_GE(q.tokens, 1u);
      if (decoding.count(id) == 0) d.prefillTokens += q.tokens;
      const int preemptions = s.preemptionsOf(id);
      const bool restarted = s.recomputesOf(id) > recomputesSeen[id];
      preemptionsSeen[id] = preemptions;
      recomputesSeen[id] = s.recomputesOf(id);
      const ServingRequest& r = byId[id];
      const uint64_t made = d.produced[id];
      // The first prefill samples at the end of the prompt; a recompute re-runs the prompt and all
      // tokens fed so far (every output but the newest) and does not sample.
      const uint64_t target = made == 0 ? r.inputTokens : r.inputTokens + made - 1;
      std::string problem;
      if (restarted && q.context != 0) {
        problem = "does not recompute from an empty cache after its preemption";
      } else if (!restarted && q.context != kvAfter[id]) {
        problem = "context is not the tokens its earlier steps computed (" + std::to_string(kvAfter[id]) + ")";
      } else if (decoding.count(id) != 0 && (q.tokens != 1 || !q.samples)) {
        problem = "a decoding request feeds one token and samples";
      } else if (decoding.count(id) == 0 && q.tokens > static_cast<uint64_t>(config.prefillChunk)) {
        problem = "prompt chunk larger than prefill_chunk";
      } else if (decoding.count(id) == 0 && q.context + q.tokens > target) {
        problem = "prefill past its target of " + std::to_string(target) + " tokens";
      } else if (decoding.count(id) == 0 && made > 0 && q.samples) {
        problem = "decodes before its recompute restored all " + std::to_string(target) + " tokens it held";
      } else if (decoding.count(id) == 0 && q.samples != (made == 0 && q.context + q.tokens == target)) {
        problem = "samples must be set exactly on the last chunk of its first prefill (target " +
                  std::to_string(target) + ")";
      }
      // Reported once per request: later steps of a request that went wrong would repeat it.
      if (!problem.empty() && broken.insert(id).second) {
        ADD_FAILURE() << "request " << id << " (prompt " << r.inputTokens << ", " << made << " of " << r.outputTokens
                      << " produced, " << preemptions << " preemptions) fed " << q.tokens << " tokens after "
                      << q.context << ": " << problem;
      }
    }
    // Every decoding request on the chip feeds its token when the limits leave room for all of them.
    std::set<uint64_t> resident;
    for (uint64_t id : decoding) {
      if (!s.kv().isSwapped(id)) resident.insert(id);
    }
    if (resident.size() <= static_cast<std::size_t>(std::min(config.maxBatch, config.maxTokensPerStep))) {
      for (uint64_t id : resident) EXPECT_EQ(inStep.count(id), 1u) << "decoding request " << id << " skipped";
    }

    const std::vector<StepOutcome> done = s.complete();
    EXPECT_TRUE(s.ids().empty());
    if (done.size() != batch.sequences.size()) {
      ADD_FAILURE() << "complete() returned " << done.size() << " outcomes for " << batch.sequences.size()
                    << " sequences";
      return d;
    }
    for (std::size_t i = 0; i < done.size(); ++i) {
      const StepSequence& q = batch.sequences[i];
      const StepOutcome& o = done[i];
      const uint64_t id = q.request;
      EXPECT_EQ(o.request, id);
      EXPECT_EQ(o.producedToken, q.samples) << "request " << id << ": a sampling step produces one token";
      EXPECT_EQ(o.preemptions, preemptionsSeen[id]) << "request " << id;
      kvAfter[id] = q.context + q.tokens;
      if (o.producedToken) ++d.produced[id];
      const uint64_t made = d.produced[id];
      const ServingRequest& r = byId[id];
      EXPECT_EQ(o.finished, made == r.outputTokens) << "request " << id << " after " << made << " tokens";
      if (o.finished) {
        d.finished.insert(id);
        decoding.erase(id);
      } else if (made > 0 && kvAfter[id] == r.inputTokens + made - 1) {
        decoding.insert(id);
      }
    }
  }
  return d;
}

/// A cache too small for a load under some batch, token and chunk limits (the overflow tests of
/// both preemption modes run the same cases).
struct OverflowCase {
  int maxBatch;
  int maxTokens;
  int chunk;
  uint64_t blocks;
};

inline std::vector<OverflowCase> overflowCases() {
  return {OverflowCase{256, 8192, 8192, 16}, OverflowCase{8, 256, 64, 12}, OverflowCase{4, 64, 32, 24},
          OverflowCase{256, 4096, 100, 40}, OverflowCase{3, 5, 5, 9}};
}

inline std::ostream& operator<<(std::ostream& os, const OverflowCase& k) {
  return os << "batch " << k.maxBatch << " tokens " << k.maxTokens << " chunk " << k.chunk << " blocks " << k.blocks;
}

/// 40 random requests of a case (seeded by it): each fits the cache alone (prompt + output),
/// together they overflow it many times.
inline std::vector<ServingRequest> overflowLoad(const OverflowCase& k) {
  const uint64_t capacityTokens = k.blocks * kBlockTokens;
  Rng rng(k.blocks * 7919 + static_cast<uint64_t>(k.chunk));
  std::vector<ServingRequest> requests;
  for (uint64_t id = 1; id <= 40; ++id) {
    const uint64_t input = 1 + rng.below(capacityTokens / 2);
    const uint64_t output = 1 + rng.below(capacityTokens - input);
    requests.push_back(ServingRequest{id, input, output});
  }
  return requests;
}

}  // namespace scoville::workload::schedulertest
