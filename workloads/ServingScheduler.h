#pragma once
// The serving scheduler of one data-parallel replica (pure C++, no simulated time): a vLLM-style
// continuous-batching policy with chunked prefill and KV admission control.
//
// Requests wait in arrival order until admitted; admission reserves KV blocks for the whole
// prompt (KvBlockAllocator::admit never preempts, so a request that does not fit waits). Each
// step is composed oldest request first, up to max_batch sequences and max_tokens_per_step tokens:
//   1. every decoding request feeds one token; its KV grows by one token first, and when the
//      cache is full the allocator preempts the newest resident requests (recompute: they go back
//      to the front of the queue and later re-run their prompt and the tokens generated so far);
//   2. requests part-way through their prompt take the next chunk (at most prefill_chunk tokens);
//   3. waiting requests are admitted and start their prompt while the budget lasts and the cache
//      keeps a watermark of free blocks (kv_watermark, by default 1%) for the running requests to
//      grow into; with nothing running a request only has to fit.
// The last chunk of a prompt samples the request's first output token; each decode step one more.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "hw/kv/KvBlockAllocator.h"
#include "workloads/ScenarioConfig.h"
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
};

/// What a finished step did to a request.
struct StepOutcome {
  uint64_t request = 0;
  bool producedToken = false;  ///< the step produced one of its output tokens
  bool finished = false;       ///< that token was its last: it has left the scheduler
  int preemptions = 0;         ///< times it was preempted so far
};

class ServingScheduler {
 public:
  /// `kv` holds the replica's cache (its capacity is the smallest of the replica's chips).
  ServingScheduler(const SchedulerConfig& config, std::unique_ptr<hw::KvBlockAllocator> kv);

  /// Queues a request. Throws std::invalid_argument when it could never fit the KV cache alone.
  void submit(const ServingRequest& request);
  /// True when some request is waiting or running.
  bool busy() const { return !m_waiting.empty() || !m_running.empty(); }

  /// Composes the next step: sequence i of the result is request ids()[i]. Empty when nothing can
  /// run (then busy() is false: a waiting request always fits an empty cache).
  StepBatch next();
  /// The requests of the step next() composed, in its sequence order.
  const std::vector<uint64_t>& ids() const { return m_stepIds; }
  /// Applies the step next() composed once it has run: prompt progress, tokens produced, finished
  /// requests (their KV blocks freed).
  std::vector<StepOutcome> complete();

  const hw::KvBlockAllocator& kv() const { return *m_kv; }
  /// Requests preempted so far (recompute).
  uint64_t preemptions() const { return m_preemptions; }
  /// Preemptions of one request so far.
  int preemptionsOf(uint64_t request) const;
  std::size_t waiting() const { return m_waiting.size(); }
  std::size_t running() const { return m_running.size(); }

 private:
  struct Sequence {
    ServingRequest request;
    uint64_t prefillTarget = 0;  ///< tokens its current prefill computes: the prompt, or all it held when preempted
    uint64_t kv = 0;             ///< tokens in its KV cache
    uint64_t generated = 0;      ///< output tokens produced
    bool samplesAtPrefillEnd = true;
    int preemptions = 0;
    bool decoding() const { return kv >= prefillTarget; }
  };
  struct Planned {
    uint64_t id;
    uint64_t tokens;
  };

  void preempt(const std::vector<hw::KvPreempted>& victims);
  /// Blocks of the tiers the cache may use for running requests (host excluded: swap space).
  uint64_t capacityBlocks() const;
  uint64_t freeBlocks() const;
  /// Free blocks admission leaves for running requests to grow into: kv_watermark of the cache
  /// (at least one block when above zero).
  uint64_t watermark() const;

  SchedulerConfig m_config;
  std::unique_ptr<hw::KvBlockAllocator> m_kv;
  std::deque<uint64_t> m_waiting;            // not admitted, oldest first
  std::map<uint64_t, Sequence> m_sequences;  // waiting and running, by id
  std::vector<uint64_t> m_running;           // admitted, in admission order
  std::vector<Planned> m_step;
  std::vector<uint64_t> m_stepIds;
  uint64_t m_preemptions = 0;
};

}  // namespace scoville::workload
