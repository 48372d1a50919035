#pragma once
// What to run, as read from workloads/scenarios/*.yaml: one decode step of a fixed batch, or a
// serving run (requests arriving under a load model, served by a continuous-batching scheduler,
// measured like InferenceX).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/Schema.h"
#include "workloads/Routing.h"
#include "workloads/SoftwareStack.h"
#include "workloads/Speculative.h"

namespace scoville::workload {

enum class ScenarioKind { kDecodeStep, kServing };
enum class LoadKind {
  kClosedLoop,  ///< `concurrency` users, each sending its next request when its last one finished
  kPoisson,     ///< open loop: requests arrive at `rate_per_s` with exponential gaps
  kTrace,       ///< open loop: arrivals and lengths replayed from a CSV file
};

/// How requests arrive (`load: {impl: ...}`).
struct LoadConfig {
  LoadKind impl = LoadKind::kClosedLoop;
  int concurrency = 0;    ///< closed_loop
  double ratePerS = 0.0;  ///< poisson
  /// trace: CSV with header `arrival_s,input_tokens,output_tokens`, one request per row in
  /// arrival order (resolved relative to the scenario file by the loader).
  std::string file;

  static const config::Schema<LoadConfig>& schema();
};

/// The serving engine's batching limits (vLLM-style continuous batching with chunked prefill).
/// How admission keeps running requests from running out of KV blocks (scheduler.admission).
enum class KvAdmission {
  kWatermark,  ///< vLLM: admit a prompt that fits beside a watermark of free blocks; preempt when full
  kReserve,    ///< TensorRT-LLM's GUARANTEED_NO_EVICT: admit only what can finish; never preempt
};

struct SchedulerConfig {
  int maxBatch = 256;           ///< sequences in one step
  int maxTokensPerStep = 8192;  ///< tokens one step feeds (decodes count one each)
  int prefillChunk = 8192;      ///< most prompt tokens of one sequence in one step
  double stepOverheadS = 0.0;   ///< host time between steps (scheduling, launch)
  double kvWatermark = 0.01;    ///< fraction of KV blocks admission leaves free for running requests
  KvAdmission admission = KvAdmission::kWatermark;
  /// Order of admission from the waiting queue: arrival (kFcfs) or the most prompt tokens found in
  /// the prefix cache first (kLongestPrefix, SGLang's `lpm` schedule policy), arrival among equals.
  enum class QueuePolicy { kFcfs, kLongestPrefix };
  QueuePolicy queuePolicy = QueuePolicy::kFcfs;
  /// vLLM's --async-scheduling (ServingScheduler.h): each step is composed as the one before it is
  /// launched, so a request that arrives during a step joins the step after the next.
  bool asyncScheduling = false;

  static const config::Schema<SchedulerConfig>& schema();
};

/// Multi-turn conversations: each closed-loop user's next request continues its conversation, its
/// prompt holding the previous turns (prompts and answers) plus `input_tokens` new ones.
struct MultiTurnConfig {
  int turns = 1;  ///< requests per conversation; then the user starts a new one
  /// Tokens every conversation's first prompt begins with, the same for all (a system prompt and
  /// tool definitions), counted in the prompt before its input_tokens.
  int sharedPrefixTokens = 0;
  double thinkTimeS = 0.0;  ///< a user's pause after a turn before the conversation's next one (tool calls)

  static const config::Schema<MultiTurnConfig>& schema();
};

enum class PhasePolicyImpl { kUniform, kComputeOpt, kBandwidthOpt };
const char* phasePolicyName(PhasePolicyImpl impl);

/// `serving.prefill_policy` and `serving.decode_policy` (the policies: workloads/PhasePolicy.h).
struct PhasePolicyConfig {
  PhasePolicyImpl impl = PhasePolicyImpl::kUniform;
  int dvfsPoint = -1;            ///< uniform: the point (-1: 0); bandwidth_opt: fixed point (-1: chosen per step)
  int activeArrays = 0;          ///< uniform: arrays on (0: all); bandwidth_opt: fixed count (0: chosen per step)
  double computeHeadroom = 0.8;  ///< bandwidth_opt: predicted core time <= this x the step's HBM time bound

  /// Whether the policy may run a step below the nominal clock.
  bool mayLowerClock() const;
  /// Whether the policy may power arrays off.
  bool mayGate() const;
  static const config::Schema<PhasePolicyConfig>& schema();
};

/// The scenario's `serving` block: how the deployment is configured per phase.
struct ServingPolicyConfig {
  enum class KvPlacement { kPlatform, kLocal, kSpillToRemote, kOffloadToHost };
  /// kPlatform: the platform's placement.kv_cache.placement.
  KvPlacement kvCachePlacement = KvPlacement::kPlatform;
  /// spill_to_remote: share of each chip's KV memory lent to the chip before it in its pool
  /// (ReplicaBuilder); the chip's own cache keeps the rest.
  double kvRemoteShare = 0.5;
  PhasePolicyConfig prefill;
  PhasePolicyConfig decode;
  int maxConcurrentUsers = 0;  ///< requests resident (admitted, holding KV) at once, all replicas; 0: no cap
  /// Prefix caching (vLLM's enable_prefix_caching): a conversation's KV stays cached for its next
  /// turn, whose cached full blocks skip their prefill, until evicted least recently used.
  bool prefixCaching = false;
  /// Where cached blocks no request uses go when their tier needs the slot: dropped (kNone) or
  /// moved to the chip's share of host memory over its host link, and back on a hit (kHost).
  enum class PrefixCacheOffload { kNone, kHost };
  PrefixCacheOffload prefixCacheOffload = PrefixCacheOffload::kNone;

  /// The KV placement policy (hw::makeKvPlacementPolicy name) `kv_cache_placement` stands for,
  /// or `platformPolicy` when it is not given.
  std::string kvPlacementPolicy(const std::string& platformPolicy) const;
  static const config::Schema<ServingPolicyConfig>& schema();
};

struct ScenarioConfig {
  std::string name;
  std::string description;
  ScenarioKind kind = ScenarioKind::kDecodeStep;
  // decode_step
  int batch = 0;
  int contextLength = 0;
  // serving
  LoadConfig load;
  int inputTokens = 0;            ///< prompt tokens of a request (the maximum when ranged)
  int outputTokens = 0;           ///< tokens a request generates (the maximum when ranged)
  double randomRangeRatio = 1.0;  ///< lengths drawn uniformly from [ratio x L, L]
  int warmupRequests = -1;        ///< first requests left out of the metrics (-1: closed loop concurrency, else 0)
  int requests = 0;               ///< measured requests
  /// Closed loop: the measured requests start only once every warm-up request has finished, all
  /// users at once, as a benchmark with a warm-up phase runs them (InferenceX's --num-warmups).
  bool warmupBarrier = false;
  SchedulerConfig scheduler;
  RoutingConfig routing;
  MultiTurnConfig multiTurn;
  ServingPolicyConfig serving;
  /// `speculative`: speculative decoding (absent: plain decoding).
  std::optional<SpeculativeConfig> speculative;
  /// Loaded by the CLI (not keys): the separate draft model (method draft_model) and the accepted
  /// counts of an acceptance trace.
  std::optional<ModelConfig> draftModel;
  std::vector<int> acceptanceTrace;
  /// Draft tokens a decoding sequence verifies per step (0: plain decoding).
  int draftTokens() const { return speculative ? speculative->draftTokens : 0; }
  std::string softwareStack;                 ///< `software_stack`: profile name or file ("" : none)
  std::optional<SoftwareStackConfig> stack;  ///< the profile it names, loaded by the CLI (not a key)

  /// Warm-up requests after defaults.
  int warmup() const {
    return warmupRequests >= 0 ? warmupRequests : load.impl == LoadKind::kClosedLoop ? load.concurrency : 0;
  }

  /// Requests a serving run may keep a record of: warm-up, measured, and up to `concurrency`
  /// more still running when the last measured one finishes (closed loop).
  uint64_t recordedRequests() const {
    const uint64_t inFlight = load.impl == LoadKind::kClosedLoop ? static_cast<uint64_t>(load.concurrency) : 0;
    return static_cast<uint64_t>(warmup()) + static_cast<uint64_t>(requests) + inFlight;
  }
  /// The memory those records take at most: a fixed part and the time of every output token.
  double requestRecordBytes() const {
    return static_cast<double>(recordedRequests()) * (kRecordBytes + 8.0 * std::max(outputTokens, 0));
  }
  static constexpr double kRecordBytes = 256.0;  ///< per request, besides its token times
  /// A serving scenario whose request records would exceed this is rejected when loaded, rather
  /// than running out of memory hours later.
  static constexpr double kMaxRequestRecordBytes = 4.0 * 1024 * 1024 * 1024;

  static const config::Schema<ScenarioConfig>& schema();
};

}  // namespace scoville::workload
