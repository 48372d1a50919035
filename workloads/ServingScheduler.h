#pragma once
// The serving scheduler of one data-parallel replica (pure C++, no simulated time): a vLLM-style
// continuous-batching policy with chunked prefill, KV admission control and preemption.
//
// Requests wait in arrival order until admitted; admission reserves KV blocks for the whole
// prompt (KvBlockAllocator::admit never preempts, so a request that does not fit waits). Each
// step is composed oldest request first, up to max_batch sequences and max_tokens_per_step tokens:
//   1. every decoding request feeds one token; its KV grows by one token first, and when the
//      cache is full the allocator preempts the newest resident requests (see below);
//   2. requests part-way through their prompt take the next chunk (at most prefill_chunk tokens);
//   3. swapped-out requests are resumed, oldest first, when no request was preempted while
//      composing this step and their blocks (plus the block a decode may grow into, plus the
//      watermark while others run) fit: their blocks are swapped back in and they take their
//      decode or next prompt chunk in this very step;
//   4. waiting requests are admitted and start their prompt while the budget lasts, nothing is
//      swapped out (swapped requests go first: they were admitted earlier), and the cache keeps a
//      watermark of free blocks (kv_watermark, by default 1%) for the running requests to grow
//      into; with nothing running a request only has to fit. Under `admission: reserve`
//      (TensorRT-LLM's GUARANTEED_NO_EVICT) a request is admitted only when the free blocks, less
//      what the running requests still need to reach their last token, hold all it will ever
//      hold (KvBlockAllocator::peakSlotsFor): decodes then always find room and nothing is
//      preempted.
// The last chunk of a prompt samples the request's first output token; each decode step one more.
//
// Asynchronous scheduling (scheduler.async_scheduling, vLLM's --async-scheduling): the engine
// composes step k + 1 as soon as it has launched step k, one step ahead of the GPU. A request that
// arrives while step k runs is first seen when step k + 2 is composed. submit() then holds new
// requests apart (arriving()) until whoever runs the steps calls admitArrivals(): right after
// composing a step (the arrivals until that step starts), and when next() finds nothing to run
// while requests are arriving (an idle engine composes at once).
//
// Preemption (placement.kv_cache.preemption, applied by the allocator): recompute drops the
// victim's blocks and sends it to the front of the queue to re-run its prompt and the tokens
// generated so far; swap moves its blocks to host memory and it keeps its progress (falling back
// to recompute when the host has no room). The block copies of a step (swap-outs of this step's
// victims, then swap-ins of the requests it resumes) are listed by swaps(); whoever runs the step
// must perform them before it.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/Speculative.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {

/// A request handed to the scheduler.
struct ServingRequest {
  uint64_t id = 0;  ///< unique, > 0
  uint64_t inputTokens = 0;
  uint64_t outputTokens = 0;
  /// Prefilled elsewhere (disaggregation): its prompt's KV arrives with it and its first output
  /// token is already produced; once admitted it decodes.
  bool prefilled = false;
  /// Prefix caching: the prompt's first prefixTokens tokens are those of prefix `prefixId` (a
  /// conversation's earlier turns; 0: none). The cached full blocks of it skip their prefill.
  uint64_t prefixId = 0;
  uint64_t prefixTokens = 0;
  /// Of those, the first sharedTokens are the same in every conversation (a system prompt):
  /// prefix caching shares them across conversations too.
  uint64_t sharedTokens = 0;
};

/// The prefix id every conversation's shared first tokens are cached under.
inline constexpr uint64_t kSharedPrefixId = ~uint64_t{0};

/// KV tokens a request holds at most: its prompt and every output token but the last (never fed
/// back).
inline uint64_t finalKvTokens(const ServingRequest& r) {
  return r.inputTokens + (r.outputTokens > 0 ? r.outputTokens : 1) - 1;
}

/// Block copies a step needs before it runs: one request's KV swapped out to host or back in, or
/// prefix-cache blocks offloaded to host or restored from it.
struct KvSwap {
  uint64_t request = 0;                ///< the request swapped, or the one whose step needed the cache's copies
  bool toHost = true;                  ///< swap-out (preempted) or offload; false: swap-in (resumed) or restore
  std::vector<hw::KvBlockMove> moves;  ///< from the source block to the destination block
  bool cache = false;                  ///< prefix-cache offload (KvCacheConfig::prefixCacheOffload), not a swap
};

/// What a finished step did to a request.
struct StepOutcome {
  uint64_t request = 0;
  bool producedToken = false;  ///< the step produced one of its output tokens (or more)
  bool finished = false;       ///< its last token among them: it has left the scheduler
  int preemptions = 0;         ///< times it was preempted so far (recomputed or swapped)
  uint32_t tokens = 0;         ///< output tokens produced: 1, or accepted drafts + 1 (speculative decoding)
};

/// Speculative decoding's counts, as vLLM's spec_decode metrics name them.
struct SpeculationCounts {
  uint64_t drafts = 0;                        ///< verifications of at least one draft token (num_drafts)
  uint64_t draftTokens = 0;                   ///< draft tokens verified (num_draft_tokens)
  uint64_t acceptedTokens = 0;                ///< of them, accepted (num_accepted_tokens)
  uint64_t verifySteps = 0;                   ///< steps that verified drafts
  std::vector<uint64_t> acceptedPerPosition;  ///< accepted drafts by position (num_accepted_tokens_per_pos)
};

class ServingScheduler {
 public:
  /// `kv` holds the replica's cache (its capacity is the smallest of the replica's chips).
  /// `maxResident`: requests admitted at once (running or swapped out); 0: no limit but the cache.
  ServingScheduler(const SchedulerConfig& config, std::unique_ptr<hw::KvBlockAllocator> kv,
                   std::size_t maxResident = 0);

  /// Speculative decoding: each decoding sequence verifies up to `draftTokens` drafts per step
  /// (fewer near its last token, or when the token budget is short), `acceptance` drawing how
  /// many are accepted; the rejected ones' KV is rolled back when the step completes. The KV
  /// space holds `draftLayers` layer regions of the draft's after the target's.
  void speculate(int draftTokens, std::unique_ptr<AcceptanceModel> acceptance, uint32_t draftLayers);
  const SpeculationCounts& speculation() const { return m_speculation; }

  /// Prefix caching (the allocator's KvCacheConfig::prefixCaching): prompt tokens admitted, and
  /// those found cached, whose prefill was skipped.
  uint64_t promptTokensAdmitted() const { return m_promptTokens; }
  uint64_t cachedPromptTokens() const { return m_cachedTokens; }

  /// Queues a request (under asynchronous scheduling, among the arriving ones until
  /// admitArrivals()). Throws std::invalid_argument when it could never fit the KV cache alone.
  void submit(const ServingRequest& request);
  /// Asynchronous scheduling: makes the requests submitted so far visible to the next composition.
  /// Without it, a no-op (submit() queues them at once).
  void admitArrivals();
  /// Requests submitted and not yet visible to a composition (asynchronous scheduling).
  std::size_t arriving() const { return m_arriving.size(); }
  /// True when some request is arriving, waiting, running or swapped out.
  bool busy() const { return !m_arriving.empty() || !m_waiting.empty() || !m_running.empty() || !m_swapped.empty(); }

  /// Composes the next step: sequence i of the result is request ids()[i]. Empty when nothing can
  /// run (then busy() is false: a waiting request always fits an empty cache).
  StepBatch next();
  /// The requests of the step next() composed, in its sequence order.
  const std::vector<uint64_t>& ids() const { return m_stepIds; }
  /// The block copies the step next() composed needs first, in the order they must run: swap-outs
  /// in preemption order, then swap-ins in resume order, each allocation's prefix-cache offloads
  /// and restores before its own swap. May be non-empty when the step itself is empty.
  const std::vector<KvSwap>& swaps() const { return m_swaps; }
  /// Applies the step next() composed once it has run: prompt progress, tokens produced, finished
  /// requests (their KV blocks freed).
  std::vector<StepOutcome> complete();

  const hw::KvBlockAllocator& kv() const { return *m_kv; }
  /// Preemptions so far, of either kind (each one a recompute or a swap-out).
  uint64_t preemptions() const { return m_preemptions; }
  /// Requests sent back to re-run their prefill: recompute preemptions, and swapped requests that
  /// could not come back with nothing else resident (never expected; see resumeSwapped).
  uint64_t recomputes() const { return m_recomputes; }
  /// Preemptions that moved the victim's blocks to host, and resumptions that moved them back.
  uint64_t swapOuts() const { return m_swapOuts; }
  uint64_t swapIns() const { return m_swapIns; }
  /// Blocks (of kv().blockBytes()) copied to host and back so far.
  uint64_t swappedOutBlocks() const { return m_swappedOutBlocks; }
  uint64_t swappedInBlocks() const { return m_swappedInBlocks; }
  /// Prefix-cache offload: blocks offloaded to host, and restored from it, so far.
  uint64_t offloadedBlocks() const { return m_kv->offloadedBlocks(); }
  uint64_t restoredBlocks() const { return m_kv->restoredBlocks(); }
  /// Preemptions of one request so far, and those of them that recomputed it.
  int preemptionsOf(uint64_t request) const;
  int recomputesOf(uint64_t request) const;
  std::size_t waiting() const { return m_waiting.size(); }
  std::size_t running() const { return m_running.size(); }
  std::size_t swapped() const { return m_swapped.size(); }

 private:
  /// One composition of next(): admits, plans and lays out the step.
  StepBatch compose();

  struct Sequence {
    ServingRequest request;
    uint64_t prefillTarget = 0;  ///< tokens its current prefill computes: the prompt, or all it held when preempted
    uint64_t kv = 0;             ///< tokens in its KV cache
    uint64_t generated = 0;      ///< output tokens produced
    bool samplesAtPrefillEnd = true;
    int preemptions = 0;
    int recomputes = 0;
    uint64_t admitted = 0;  ///< admission order (the allocator's victim order), kept while swapped
    bool decoding() const { return kv >= prefillTarget; }
  };
  struct Planned {
    uint64_t id;
    uint64_t tokens;
    uint32_t verify = 0;    ///< drafts it verifies (tokens = 1 + verify)
    uint32_t accepted = 0;  ///< of them, accepted
  };

  void preempt(const std::vector<hw::KvPreempted>& victims);
  /// queue_policy longest_prefix: orders the waiting queue by cached prompt blocks, most first.
  void orderByCachedPrefix();
  /// Lists the prefix-cache copies the allocator made for request `id`'s allocation in m_swaps.
  void takeCacheMoves(uint64_t id);
  /// Sends `id` (holding no blocks) to the front of the queue to re-run what it held.
  void recompute(uint64_t id);
  /// Step 3: swaps in the oldest swapped requests that fit and plans their step.
  void resumeSwapped(std::size_t maxBatch, uint64_t& budget);
  /// Drafts decoding request `id` verifies in a step with `budget` tokens left (0 without speculation).
  uint32_t draftsFor(uint64_t id, uint64_t budget) const;
  /// Drafts the draft proposes after the step for `s`'s next verification, once it has `generated` tokens.
  uint32_t proposals(const Sequence& s, uint64_t generated) const;
  /// Plans decoding request `id` verifying `verify` drafts (its KV already grown by 1 + verify).
  void planDecode(uint64_t id, uint32_t verify, uint64_t& budget);
  /// Plans request `id`'s next prompt chunk within `budget`.
  void planChunk(uint64_t id, uint64_t& budget);
  /// Inserts `id` into `list` (ordered by admission) at its admission order.
  void insertByAdmission(std::vector<uint64_t>& list, uint64_t id) const;
  /// Blocks of the tiers the cache may use for running requests (hw::KvBlockAllocator::placedCapacityBlocks).
  uint64_t capacityBlocks() const;
  uint64_t freeBlocks() const;
  /// Free blocks admission leaves for running requests to grow into: kv_watermark of the cache
  /// (at least one block when above zero).
  uint64_t watermark() const;
  /// Reserve admission: slots running request `id` may still allocate before its last token.
  uint64_t stillNeeded(uint64_t id) const;

  SchedulerConfig m_config;
  std::size_t m_maxResident = 0;
  std::unique_ptr<hw::KvBlockAllocator> m_kv;
  std::deque<uint64_t> m_arriving;           // async scheduling: submitted, not yet seen, oldest first
  std::deque<uint64_t> m_waiting;            // not admitted, oldest first
  std::map<uint64_t, Sequence> m_sequences;  // waiting and running, by id
  std::vector<uint64_t> m_running;           // admitted and resident, in admission order
  std::vector<uint64_t> m_swapped;           // swapped out to host, in admission order
  std::vector<Planned> m_step;
  std::vector<uint64_t> m_stepIds;
  std::vector<KvSwap> m_swaps;
  std::vector<hw::KvCacheMove> m_cacheMoves;                 ///< scratch of takeCacheMoves
  std::vector<std::pair<uint64_t, uint64_t>> m_cachedOrder;  ///< scratch of orderByCachedPrefix: (blocks, id)
  bool m_preemptedThisStep = false;
  uint64_t m_nextAdmission = 0;
  uint64_t m_preemptions = 0;
  uint64_t m_recomputes = 0;
  uint64_t m_swapOuts = 0;
  uint64_t m_swapIns = 0;
  uint64_t m_swappedOutBlocks = 0;
  uint64_t m_swappedInBlocks = 0;
  int m_draftTokens = 0;
  uint32_t m_draftLayers = 0;
  std::unique_ptr<AcceptanceModel> m_acceptance;
  SpeculationCounts m_speculation;
  uint64_t m_promptTokens = 0;
  uint64_t m_cachedTokens = 0;
};

}  // namespace scoville::workload
