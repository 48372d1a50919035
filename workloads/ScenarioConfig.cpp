#include "workloads/ScenarioConfig.h"

#include <fmt/format.h>

namespace scoville::workload {

using namespace scoville::config;

namespace {

/// Rejects keys that belong to another kind or implementation, naming the key.
void rejectUnless(const Node& node, bool allowed, const char* key, const std::string& why) {
  if (!allowed) node.rejectIfGiven(key, why);
}

/// When `needed`, `key` must hold a valid value (`valid`): a value given but invalid (0 where at
/// least 1 is needed) is out of range at the key (a --set included); a key not given is missing.
void requireIf(const Node& node, bool needed, bool valid, const char* key, const std::string& why) {
  if (!needed || valid) return;
  if (const YAML::Node& map = node.yaml(); map.IsMap() && map[key]) {
    const Node given = node.at(key);
    given.fail(ErrorKind::kOutOfRange, fmt::format("'{}' = '{}' is out of range {}", given.path(),
                                                   given.yaml().IsScalar() ? given.yaml().Scalar() : "...", why));
  }
  node.fail(ErrorKind::kMissingKey,
            fmt::format("'{}{}{}' is required {}", node.path(), node.path().empty() ? "" : ".", key, why));
}

}  // namespace

const char* phasePolicyName(PhasePolicyImpl impl) {
  switch (impl) {
    case PhasePolicyImpl::kUniform: return "uniform";
    case PhasePolicyImpl::kComputeOpt: return "compute_opt";
    case PhasePolicyImpl::kBandwidthOpt: return "bandwidth_opt";
  }
  return "?";
}

const Schema<LoadConfig>& LoadConfig::schema() {
  static const Schema<LoadConfig> s =
      Schema<LoadConfig>("load", "How requests arrive.")
          .choice(
              "impl", &LoadConfig::impl,
              {{"closed_loop", LoadKind::kClosedLoop}, {"poisson", LoadKind::kPoisson}, {"trace", LoadKind::kTrace}},
              required(),
              "closed_loop: N users each send the next request when the last one finished (InferenceX); "
              "poisson: open-loop arrivals at a rate; trace: replayed from a file")
          .integer("concurrency", &LoadConfig::concurrency, optional("0"), between(0, 1 << 20), "closed_loop: users")
          .number("rate_per_s", &LoadConfig::ratePerS, optional("0"), nonNegative(), "poisson: requests per second")
          .text("file", &LoadConfig::file, optional("~"),
                "trace: CSV `arrival_s,input_tokens,output_tokens`, relative to the scenario file")
          .check(
              "each key belongs to its impl: concurrency (closed_loop, >= 1), rate_per_s (poisson, > 0), file "
              "(trace)",
              [](const LoadConfig& l, const Node& n) {
                rejectUnless(n, l.impl == LoadKind::kClosedLoop, "concurrency", "is a closed_loop key");
                rejectUnless(n, l.impl == LoadKind::kPoisson, "rate_per_s", "is a poisson key");
                rejectUnless(n, l.impl == LoadKind::kTrace, "file", "is a trace key");
                requireIf(n, l.impl == LoadKind::kClosedLoop, l.concurrency > 0, "concurrency",
                          "(at least 1) for closed_loop");
                requireIf(n, l.impl == LoadKind::kPoisson, l.ratePerS > 0, "rate_per_s", "(above 0) for poisson");
                requireIf(n, l.impl == LoadKind::kTrace, !l.file.empty(), "file", "for trace");
              });
  return s;
}

const Schema<SchedulerConfig>& SchedulerConfig::schema() {
  static const Schema<SchedulerConfig> s =
      Schema<SchedulerConfig>("scheduler",
                              "Continuous batching: each step runs every decoding sequence (one token each) and "
                              "fills the rest of its token budget with prompt chunks, oldest request first.")
          .integer("max_batch", &SchedulerConfig::maxBatch, optional("256"), between(1, 1 << 20),
                   "sequences in one step")
          .integer("max_tokens_per_step", &SchedulerConfig::maxTokensPerStep, optional("8192"), between(1, 1 << 24),
                   "tokens one step feeds, decodes included")
          .integer("prefill_chunk", &SchedulerConfig::prefillChunk, optional("8192"), between(1, 1 << 24),
                   "most prompt tokens of one request in one step (chunked prefill)")
          .quantity("step_overhead", &SchedulerConfig::stepOverheadS, dim::kTime, optional("0 s"), nonNegative(),
                    "host time between steps (scheduling and launch)")
          .number("kv_watermark", &SchedulerConfig::kvWatermark, optional("0.01"), between(0.0, 0.5),
                  "fraction of the KV blocks admission leaves free for running requests to grow into (vLLM's "
                  "1%; at least one block when above 0): a request admitted into the last free blocks would "
                  "preempt itself at its first new block (admission watermark only)")
          .choice("admission", &SchedulerConfig::admission,
                  {{"watermark", KvAdmission::kWatermark}, {"reserve", KvAdmission::kReserve}}, optional("watermark"),
                  "watermark (vLLM): a request is admitted when its prompt's KV fits beside kv_watermark free "
                  "blocks; running requests grow into free blocks and the newest are preempted when none is "
                  "left. reserve (TensorRT-LLM's default capacity policy, GUARANTEED_NO_EVICT): a request is "
                  "admitted only when the free blocks, less those the running requests still need to reach "
                  "their last token, hold its prompt and every output token; no request is preempted")
          .choice("queue_policy", &SchedulerConfig::queuePolicy,
                  {{"fcfs", SchedulerConfig::QueuePolicy::kFcfs},
                   {"longest_prefix", SchedulerConfig::QueuePolicy::kLongestPrefix}},
                  optional("fcfs"),
                  "order in which waiting requests are admitted: fcfs (arrival) or longest_prefix (SGLang's lpm: "
                  "the most prompt tokens found in the prefix cache first, arrival among equals; needs "
                  "serving.prefix_caching)")
          .flag("async_scheduling", &SchedulerConfig::asyncScheduling, optional("false"),
                "vLLM's --async-scheduling: the engine composes each step as it launches the one before, "
                "so a request that arrives while a step runs is first seen when the next one is composed "
                "and joins the step after it (an idle engine composes at once)");
  return s;
}

const Schema<MultiTurnConfig>& MultiTurnConfig::schema() {
  static const Schema<MultiTurnConfig> s =
      Schema<MultiTurnConfig>("multi_turn",
                              "Conversations: a closed-loop user's requests continue one conversation for `turns` "
                              "requests; each prompt is the conversation so far plus input_tokens new tokens.")
          .integer("turns", &MultiTurnConfig::turns, optional("1"), between(1, 1 << 16), "requests per conversation")
          .integer("shared_prefix_tokens", &MultiTurnConfig::sharedPrefixTokens, optional("0"), between(0, 1 << 24),
                   "tokens every conversation's first prompt begins with, the same in all (a system prompt and tool "
                   "definitions), before its input_tokens; prefix caching shares them across conversations")
          .quantity("think_time", &MultiTurnConfig::thinkTimeS, dim::kTime, optional("0 s"), nonNegative(),
                    "a user's pause after a turn's last token before the conversation's next turn (tool calls)");
  return s;
}

bool PhasePolicyConfig::mayLowerClock() const {
  switch (impl) {
    case PhasePolicyImpl::kUniform: return dvfsPoint > 0;
    case PhasePolicyImpl::kComputeOpt: return false;
    case PhasePolicyImpl::kBandwidthOpt: return dvfsPoint != 0;
  }
  return false;
}

bool PhasePolicyConfig::mayGate() const {
  switch (impl) {
    case PhasePolicyImpl::kUniform: return activeArrays > 0;
    case PhasePolicyImpl::kComputeOpt: return false;
    case PhasePolicyImpl::kBandwidthOpt: return true;
  }
  return false;
}

const Schema<PhasePolicyConfig>& PhasePolicyConfig::schema() {
  static const Schema<PhasePolicyConfig> s =
      Schema<PhasePolicyConfig>("phase_policy",
                                "Core operating state of the steps of one phase: DVFS point and powered tensor "
                                "arrays (workloads/PhasePolicy.h).")
          .choice("impl", &PhasePolicyConfig::impl,
                  {{"uniform", PhasePolicyImpl::kUniform},
                   {"compute_opt", PhasePolicyImpl::kComputeOpt},
                   {"bandwidth_opt", PhasePolicyImpl::kBandwidthOpt}},
                  required(),
                  "uniform: one fixed setting; compute_opt: nominal clock, every array; bandwidth_opt: per step, "
                  "of the DVFS points and powered array counts (the rest power-gated) whose predicted core time "
                  "stays within compute_headroom of the step's HBM time bound, the one of least predicted core "
                  "energy (the nominal setting when none fits)")
          .integer("dvfs_point", &PhasePolicyConfig::dvfsPoint, optional("-1"), between(-1, 64),
                   "uniform and bandwidth_opt: index into the chip type's power.dvfs (0: nominal); -1: uniform "
                   "runs at 0, bandwidth_opt chooses per step")
          .integer("active_arrays", &PhasePolicyConfig::activeArrays, optional("0"), between(0, 1 << 20),
                   "uniform and bandwidth_opt: tensor arrays powered on (the rest gated); 0: uniform keeps all, "
                   "bandwidth_opt chooses per step")
          .number("compute_headroom", &PhasePolicyConfig::computeHeadroom, optional("0.8"), between(0.05, 1.0),
                  "bandwidth_opt: largest predicted core time of a step as a fraction of its HBM time bound")
          .check("dvfs_point, active_arrays and compute_headroom belong to their impls", [](const PhasePolicyConfig& p,
                                                                                            const Node& n) {
            rejectUnless(n, p.impl != PhasePolicyImpl::kComputeOpt, "dvfs_point",
                         "is not a compute_opt key (it always runs at the nominal point)");
            rejectUnless(n, p.impl != PhasePolicyImpl::kComputeOpt, "active_arrays",
                         "is not a compute_opt key (it always powers every array)");
            rejectUnless(n, p.impl == PhasePolicyImpl::kBandwidthOpt, "compute_headroom", "is a bandwidth_opt key");
          });
  return s;
}

std::string ServingPolicyConfig::kvPlacementPolicy(const std::string& platformPolicy) const {
  switch (kvCachePlacement) {
    case KvPlacement::kPlatform: return platformPolicy;
    case KvPlacement::kLocal: return "local_first";
    case KvPlacement::kSpillToRemote: return "spill_to_remote";
    case KvPlacement::kOffloadToHost: return "offload_to_host";
  }
  return platformPolicy;
}

const Schema<ServingPolicyConfig>& ServingPolicyConfig::schema() {
  static const Schema<ServingPolicyConfig> s =
      Schema<ServingPolicyConfig>("serving",
                                  "How the deployment runs each phase: KV-cache placement, the core operating "
                                  "state of prefill and of decode steps, and how many users it serves at once.")
          .choice("kv_cache_placement", &ServingPolicyConfig::kvCachePlacement,
                  {{"platform", ServingPolicyConfig::KvPlacement::kPlatform},
                   {"local", ServingPolicyConfig::KvPlacement::kLocal},
                   {"spill_to_remote", ServingPolicyConfig::KvPlacement::kSpillToRemote},
                   {"offload_to_host", ServingPolicyConfig::KvPlacement::kOffloadToHost}},
                  optional("platform"),
                  "local (the replica's own chips: SRAM then HBM; preempt when full), spill_to_remote (then "
                  "the HBM a neighbouring chip lends, read over the fabric; see kv_remote_share) or "
                  "offload_to_host (then the chip's share of host memory, read over the host link); platform: "
                  "the platform's placement.kv_cache.placement")
          .number("kv_remote_share", &ServingPolicyConfig::kvRemoteShare, optional("0.5"), between(0.01, 0.99),
                  "spill_to_remote: share of each chip's KV memory (HBM left after weights and activations) it "
                  "lends to the previous chip of its pool; its own cache keeps the rest, so the cache spills "
                  "once that is full")
          .child("prefill_policy", &ServingPolicyConfig::prefill, PhasePolicyConfig::schema(),
                 optional("{impl: uniform}"), "steps that feed prompt tokens (alone or with decodes)")
          .child("decode_policy", &ServingPolicyConfig::decode, PhasePolicyConfig::schema(),
                 optional("{impl: uniform}"), "steps of decodes only")
          .integer("max_concurrent_users", &ServingPolicyConfig::maxConcurrentUsers, optional("0"), between(0, 1 << 24),
                   "requests admitted at once over all replicas (each replica takes its share, rounded up); "
                   "the rest wait; 0: only scheduler.max_batch limits")
          .flag("prefix_caching", &ServingPolicyConfig::prefixCaching, optional("false"),
                "keep each conversation's KV blocks cached after its turn (vLLM's automatic prefix caching): "
                "the next turn's prompt skips the prefill of its cached full blocks; cached blocks no request "
                "uses are evicted least recently used when a tier has no free block (docs/serving.md#prefix-caching)")
          .choice("prefix_cache_offload", &ServingPolicyConfig::prefixCacheOffload,
                  {{"none", ServingPolicyConfig::PrefixCacheOffload::kNone},
                   {"host", ServingPolicyConfig::PrefixCacheOffload::kHost}},
                  optional("none"),
                  "prefix caching: what eviction does with a cached block no request uses when HBM needs its slot: "
                  "none drops it; host copies it to the chip's share of host memory over its host link (the "
                  "least recently used block there is dropped when that is full) and copies it back before a "
                  "turn that reuses it (LMCache, SGLang's HiCache)")
          .check("prefix_cache_offload needs prefix_caching",
                 [](const ServingPolicyConfig& c, const Node& n) {
                   rejectUnless(
                       n, c.prefixCaching || c.prefixCacheOffload == ServingPolicyConfig::PrefixCacheOffload::kNone,
                       "prefix_cache_offload", "offloads the prefix cache: set prefix_caching: true with it");
                 })
          .check("kv_remote_share needs kv_cache_placement: spill_to_remote", [](const ServingPolicyConfig& c,
                                                                                 const Node& n) {
            rejectUnless(n, c.kvCachePlacement == ServingPolicyConfig::KvPlacement::kSpillToRemote, "kv_remote_share",
                         "is a spill_to_remote key (the share of HBM lent to a neighbour): set "
                         "kv_cache_placement: spill_to_remote with it");
          });
  return s;
}

const Schema<ScenarioConfig>& ScenarioConfig::schema() {
  static const Schema<ScenarioConfig> s =
      Schema<ScenarioConfig>("scenario", "Root of a scenario file (workloads/scenarios/*.yaml).")
          .text("name", &ScenarioConfig::name, required(), "scenario name, used in reports")
          .text("description", &ScenarioConfig::description, required(), "one line on what is measured")
          .choice("kind", &ScenarioConfig::kind,
                  {{"decode_step", ScenarioKind::kDecodeStep}, {"serving", ScenarioKind::kServing}}, required(),
                  "decode_step: generate one token for each request of a batch; serving: requests arrive, are "
                  "batched and served to completion, and latency and throughput are measured")
          .integer("batch", &ScenarioConfig::batch, optional("0"), between(0, 1 << 16),
                   "decode_step: requests decoded together")
          .integer("context_length", &ScenarioConfig::contextLength, optional("0"), between(0, 1 << 24),
                   "decode_step: tokens already in each request's KV cache")
          .child("load", &ScenarioConfig::load, LoadConfig::schema(), optional("{impl: closed_loop, concurrency: 1}"),
                 "serving: how requests arrive")
          .integer("input_tokens", &ScenarioConfig::inputTokens, optional("0"), between(0, 1 << 24),
                   "serving: prompt tokens per request (the most, when ranged)")
          .integer("output_tokens", &ScenarioConfig::outputTokens, optional("0"), between(0, 1 << 24),
                   "serving: tokens generated per request (the most, when ranged)")
          .number("random_range_ratio", &ScenarioConfig::randomRangeRatio, optional("1"), between(0.0, 1.0),
                  "serving: each length is drawn uniformly from [ratio x L, L] (InferenceX uses 0.8; 1: fixed)")
          .integer("warmup_requests", &ScenarioConfig::warmupRequests, optional("-1"), between(-1, 1 << 24),
                   "serving: first requests (in sending order) left out of the metrics; -1: the concurrency "
                   "for closed_loop, 0 otherwise")
          .integer("requests", &ScenarioConfig::requests, optional("0"), between(0, 1 << 24),
                   "serving: measured requests after the warm-up (the load keeps running until they finish)")
          .flag("warmup_barrier", &ScenarioConfig::warmupBarrier, optional("false"),
                "serving, closed_loop: the measured requests start once every warm-up request has finished, "
                "every user at once (a benchmark's separate warm-up phase, as InferenceX's --num-warmups); false: "
                "each user goes on from its warm-up without a pause")
          .child("scheduler", &ScenarioConfig::scheduler, SchedulerConfig::schema(), optional("{}"),
                 "serving: batching limits")
          .child("routing", &ScenarioConfig::routing, RoutingConfig::schema(), optional("{impl: uniform}"),
                 "mixture-of-experts routing model")
          .child("multi_turn", &ScenarioConfig::multiTurn, MultiTurnConfig::schema(), optional("{}"),
                 "serving: conversations of several turns (closed_loop only)")
          .child("serving", &ScenarioConfig::serving, ServingPolicyConfig::schema(), optional("{}"),
                 "serving: per-phase policies, KV-cache placement and the users served at once")
          .optionalChild("speculative", &ScenarioConfig::speculative, SpeculativeConfig::schema(),
                         "serving: speculative decoding (MTP, EAGLE or a draft model); absent: plain decoding")
          .text("software_stack", &ScenarioConfig::softwareStack, optional("~"),
                "serving framework profile: a name in workloads/stacks/ or a file (docs/validation.md); absent: "
                "the hardware alone, with no kernel inefficiency or launch overhead")
          .check(
              "decode_step needs batch and context_length and no serving keys; serving needs input_tokens, "
              "output_tokens and requests and no decode_step keys",
              [](const ScenarioConfig& c, const Node& n) {
                const bool step = c.kind == ScenarioKind::kDecodeStep;
                for (const char* key :
                     {"load", "input_tokens", "output_tokens", "random_range_ratio", "warmup_requests", "requests",
                      "warmup_barrier", "scheduler", "multi_turn", "serving", "speculative"}) {
                  rejectUnless(n, !step, key, "is a serving key (kind is decode_step)");
                }
                for (const char* key : {"batch", "context_length"}) {
                  rejectUnless(n, step, key, "is a decode_step key (kind is serving)");
                }
                requireIf(n, step, c.batch > 0, "batch", "(at least 1) for decode_step");
                requireIf(n, step, c.contextLength > 0, "context_length", "(at least 1) for decode_step");
                requireIf(n, !step, c.inputTokens > 0, "input_tokens", "(at least 1) for serving");
                requireIf(n, !step, c.outputTokens > 0, "output_tokens", "(at least 1) for serving");
                requireIf(n, !step, c.requests > 0, "requests", "(at least 1) for serving");
                if (!step && c.requestRecordBytes() > ScenarioConfig::kMaxRequestRecordBytes) {
                  const bool users = c.load.impl == LoadKind::kClosedLoop && c.load.concurrency > c.requests;
                  const char* key = users ? "load.concurrency" : "requests";
                  const Node at = n.at(users ? "load" : "requests");
                  at.fail(ErrorKind::kOutOfRange,
                          fmt::format("'{}.{}': {} requests (warm-up {}, measured {}, and up to the concurrency "
                                      "still running) of up to {} output tokens need about {:.1f} GiB of request "
                                      "records, over the {:.0f} GiB limit; lower load.concurrency, requests or "
                                      "output_tokens",
                                      n.path(), key, c.recordedRequests(), c.warmup(), c.requests, c.outputTokens,
                                      c.requestRecordBytes() / (1024.0 * 1024 * 1024),
                                      ScenarioConfig::kMaxRequestRecordBytes / (1024.0 * 1024 * 1024)));
                }
                if (c.warmupBarrier && c.load.impl != LoadKind::kClosedLoop) {
                  const Node at = n.at("warmup_barrier");
                  at.fail(ErrorKind::kInvalidConfig,
                          fmt::format("'{}': a warm-up barrier needs closed_loop load (open-loop arrivals keep "
                                      "their times)",
                                      at.path()));
                }
                const bool conversations =
                    c.multiTurn.turns > 1 || c.multiTurn.sharedPrefixTokens > 0 || c.multiTurn.thinkTimeS > 0.0;
                if (conversations && c.load.impl != LoadKind::kClosedLoop) {
                  const Node at = n.at("multi_turn");
                  at.fail(
                      ErrorKind::kInvalidConfig,
                      fmt::format("'{}': conversations need closed_loop load (a user continues its own)", at.path()));
                }
                if (c.scheduler.queuePolicy == SchedulerConfig::QueuePolicy::kLongestPrefix &&
                    !c.serving.prefixCaching) {
                  const Node at = n.at("scheduler").at("queue_policy");
                  at.fail(ErrorKind::kInvalidConfig,
                          fmt::format("'{}: longest_prefix' orders requests by their prompt tokens in the prefix "
                                      "cache: set serving.prefix_caching: true with it",
                                      at.path()));
                }
              });
  return s;
}

}  // namespace scoville::workload
