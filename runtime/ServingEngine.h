#pragma once
// The serving run: requests from a LoadGenerator served by dp data-parallel replicas of a
// tensor-parallel group, each replica a ServingScheduler stepping its chips' StepDrivers.
//
// Per replica one SC_THREAD loops: compose the next step (ServingScheduler::next), route its
// tokens through each MoE layer (the scenario's routing model, one stream per replica), plan
// every chip's shard of the step (StepPlanner), post the plans to the chips' drivers, wait until
// all have finished (their collectives keep the group in lockstep), then apply the step
// (ServingScheduler::complete) and record each request's token times. The step time is thus the
// chips' simulated time; nothing here computes a duration. A step whose time beats any chip's
// roofline (bytes / HBM bandwidth, FLOPs / peak) is counted as a violation.
//
// Experts across replicas (tp 1, ep = dp): one SC_THREAD steps all replicas together instead.
// It routes every replica's tokens, works out per MoE layer which tokens each chip's experts
// receive from every replica and the bytes each chip dispatches to (and gets back from) each
// other chip, and plans each chip's step with them: its own attention, the dispatch all-to-all,
// its experts on the received tokens, the combine all-to-all (on one CollectiveGroup over the
// replicas' chips). A replica without requests still runs the step for its experts.
//
// Requests: closed loop, each finished request makes its user send the next at once; open loop,
// a source thread sends them at their arrival times, round robin over the replicas. Requests are
// numbered in sending order; the first scenario.warmup() are warm-up, the next scenario.requests
// are measured, and the load keeps running until every measured request has finished, so that
// they all see the full load. Then nothing new is sent; steps and KV transfers in flight finish,
// every loop ends and the simulation runs out of events. The measurement window runs from the
// first measured request's arrival to the last one's finish.
//
// Pipeline stages (pp > 1): a replica's stages run each step in turn, handing activations over
// PipelineLinks; no microbatches overlap them.
//
// Swap preemption (placement.kv_cache.preemption: swap): every chip of a replica gets a KvSwapper
// on its socket and its host link, and the replica's cache a swap space on the host (each chip's
// share of its host's memory, in blocks of the chip's slice, the tightest chip bounding it). The
// block copies the scheduler lists for a step (swaps of the requests it preempted, then of those
// it resumes) run on every chip that simulates its own transactions before the step is posted,
// and the step waits for them (as vLLM, which issues them on the model's stream before the
// forward pass): they cost the step the time the HBM and the host link took.
//
// Off-chip KV placement (serving.kv_cache_placement spill_to_remote or offload_to_host): the
// replica's cache gets a remote tier (each chip lends kv_remote_share of its KV memory to the
// previous chip of its pool) or a host tier (each chip's share of host memory); every chip gets a
// KvFetcher that its driver hands the step's off-chip KV reads and appends to, and no rank mirrors.
//
// Not modelled yet (rejected with a ConfigError): off-chip KV placement with swap preemption or
// with disaggregation, experts spread over replicas of tp > 1 or with
// pipeline stages, and pipeline stages or experts across replicas with disaggregation.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "platforms/Platform.h"
#include "runtime/CollectiveGroup.h"
#include "runtime/KvFetcher.h"
#include "runtime/KvPlacementMode.h"
#include "runtime/KvSwapper.h"
#include "runtime/PhaseController.h"
#include "runtime/PipelineLink.h"
#include "runtime/StepDriver.h"
#include "tlm/TimingMode.h"
#include "tlm/stats/StatsGroup.h"
#include "workloads/LoadGenerator.h"
#include "workloads/ModelConfig.h"
#include "workloads/Routing.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ScenarioFiles.h"
#include "workloads/ServingMetrics.h"
#include "workloads/ServingScheduler.h"
#include "workloads/StepPlan.h"

namespace scoville::runtime {

using workload::Arrival;
using workload::LoadGenerator;
using workload::ModelConfig;
using workload::RequestRecord;
using workload::RoutingModel;
using workload::ScenarioConfig;
using workload::ScenarioFiles;
using workload::ServingScheduler;
using workload::ServingWindow;
using workload::StepBatch;
using workload::StepOutcome;
using workload::StepPlan;
using workload::StepPlanner;

/// Where one op class's time went on a replica's first chip, summed over steps.
struct OpTotals {
  uint64_t tiles = 0;
  double bytes = 0.0;
  double flops = 0.0;
  double vectorOps = 0.0;
  double computeS = 0.0;     ///< tensor-core and vector-unit time
  double stallS = 0.0;       ///< compute stream waiting for the op's operands
  double collectiveS = 0.0;  ///< collectives after the op
};

/// Step statistics of one replica.
struct ReplicaStats {
  uint64_t steps = 0;
  uint64_t prefillSteps = 0;  ///< steps feeding only prompt tokens
  uint64_t decodeSteps = 0;   ///< steps feeding only decode tokens
  uint64_t mixedSteps = 0;
  uint64_t idleSteps = 0;  ///< experts across replicas: steps without requests of its own
  double idleS = 0.0;
  uint64_t sequences = 0;  ///< summed over steps
  uint64_t prefillTokens = 0;
  uint64_t decodeTokens = 0;
  double busyS = 0.0;  ///< summed step times
  double prefillOnlyS = 0.0;
  double decodeOnlyS = 0.0;
  double mixedS = 0.0;
  double bytes = 0.0;  ///< bytes every chip moved, summed
  double flops = 0.0;
  double collectiveBytes = 0.0;
  uint64_t peakKvBlocks = 0;
  uint64_t kvBlocks = 0;            ///< capacity
  uint64_t hostKvBlocks = 0;        ///< swap space (swap preemption) or the offload_to_host tier
  uint64_t remoteKvBlocks = 0;      ///< spill_to_remote: capacity on the donors
  uint64_t peakRemoteKvBlocks = 0;  ///< spill_to_remote
  uint64_t peakHostKvBlocks = 0;    ///< swapped and offloaded blocks at once
  double remoteKvBytes = 0.0;       ///< KV read and appended in donors' HBM over the fabric, every chip's slice
  double hostKvBytes = 0.0;         ///< KV read and appended in host memory (offload_to_host), every chip's slice
  uint64_t preemptions = 0;         ///< all: recompute and swap
  uint64_t recomputes = 0;          ///< requests sent back to re-run their prefill
  uint64_t swapOuts = 0;
  uint64_t swapIns = 0;
  double swapOutBytes = 0.0;  ///< every chip's slice, summed
  double swapInBytes = 0.0;
  double swapS = 0.0;  ///< time its own swap copies took, which its steps waited for (not in busyS)
  // Mixture of experts: max / mean tokens per expert, and per chip (ep > 1), per routed layer.
  double expertImbalanceSum = 0.0;
  double chipImbalanceSum = 0.0;
  uint64_t routedLayers = 0;
  std::map<std::string, OpTotals> perOp;  ///< of the replica's tensor-parallel rank 0
};

class ServingEngine : public sc_core::sc_module {
 public:
  /// What a replica runs: everything, or (disaggregation) prompts only or decodes only.
  enum class Role { kBoth, kPrefill, kDecode };

  /// Checks the placement and that every chip holds its weights and a replica's KV cache holds
  /// the longest request. Throws config::ConfigError (kInvalidConfig for what is not modelled
  /// yet, kDoesNotFit with the numbers).
  ///
  /// `mirror`: a rank whose planner plans exactly like its replica's rank 0 (same slice, layout
  /// and chip type; StepPlanner::plansLike) gets the same plan every step and, its chip seeing
  /// exactly the same transactions, exactly the same timing; it then mirrors rank 0 (see
  /// StepDriver::post) instead of simulating its chip's memory and compute again. When every rank
  /// of a single-stage group on a switched fabric mirrors, rank 0 also runs the group's
  /// collectives for all (CollectiveGroup::setMirrored); every member's messages still cross the
  /// switch. Off (`false`): every chip simulates its own transactions.
  ServingEngine(const sc_core::sc_module_name& name, platform::Platform& platform, const ModelConfig& model,
                const ScenarioConfig& scenario, uint64_t seed, tlm::TimingMode mode, const ScenarioFiles& files,
                bool mirror = true);
  ServingEngine(const ServingEngine&) = delete;
  ServingEngine& operator=(const ServingEngine&) = delete;
  ~ServingEngine() override;

  /// True once every measured request has finished.
  bool completed() const { return m_completed; }
  /// The first error a driver, group or the engine met; empty when none.
  std::string error() const;

  /// Every request sent, by id - 1. Requests still running when the run stopped (warm-up or
  /// load-keeping ones) have finish 0 and fewer token times than output tokens.
  const std::vector<RequestRecord>& records() const { return m_records; }
  /// The records the metrics count: finished requests as they are, unfinished ones cut to the
  /// tokens they produced (unmeasured; their tokens inside the window still count towards
  /// throughput), requests without any token left out.
  std::vector<RequestRecord> metricRecords() const;
  ServingWindow window() const;
  int replicas() const { return static_cast<int>(m_replicas.size()); }
  int tp() const { return m_tp; }
  const ReplicaStats& replicaStats(int replica) const;
  /// The tensor-parallel groups of `replica`, one per pipeline stage; none for tp = 1.
  std::vector<const CollectiveGroup*> groups(int replica) const;
  /// The pipeline hand-offs of `replica` (pp > 1).
  std::vector<const PipelineLink*> stageLinks(int replica) const;
  int pp() const { return m_pp; }
  /// The expert-parallel group over the replicas (experts across replicas); null otherwise.
  const CollectiveGroup* expertGroup() const { return m_epGroup.get(); }
  /// Max / mean tokens per chip, summed over routed layers and steps, and that count (experts
  /// across replicas: over all replicas' tokens; otherwise per replica in ReplicaStats).
  uint64_t chipImbalanceLayers() const { return m_chipImbalanceLayers; }
  /// Per-chip KV capacity (bytes) and weights, by platform chip.
  struct ChipMemory {
    int chip = 0;
    double weightBytes = 0.0;
    double kvCapacityBytes = 0.0;
    double activationBytes = 0.0;
    double hbmBytes = 0.0;
  };
  const std::vector<ChipMemory>& chipMemory() const { return m_chipMemory; }
  /// Steps whose time beat a chip's roofline, and the smallest time / bound ratio seen.
  uint64_t rooflineViolations() const { return m_rooflineViolations; }
  double tightestRooflineRatio() const { return m_tightestRatio; }
  /// Chips that mirror their replica's rank 0 (their modules count none of the traffic).
  int mirroredChips() const;
  /// Per platform chip (up to the highest one a replica uses): the chip it mirrors, or -1 when it
  /// is simulated.
  std::vector<int> mirrorOfChips() const;
  /// Role of replica `replica`.
  Role role(int replica) const;
  /// Disaggregation: prompt KV transfers done, their bytes (all ranks) and summed time.
  uint64_t kvTransfers() const { return m_kvTransfers; }
  double kvTransferBytes() const { return m_kvTransferBytes; }
  double kvTransferTimeS() const { return m_kvTransferTimeS; }
  /// Tokens of KV one replica's cache holds.
  uint64_t kvCapacityTokens() const { return m_kvCapacityTokens; }
  /// The phase policies' work on `replica` (every replica has a controller).
  const PhaseController& phaseController(int replica) const {
    return *m_replicas.at(static_cast<std::size_t>(replica))->phase;
  }
  /// The KV placement policy the replicas' caches use (the serving block's or the platform's).
  const std::string& kvPlacement() const { return m_kvPlacement; }
  /// Whether the placement puts running requests' KV off the chips (spill_to_remote, offload_to_host).
  bool offChipKv() const { return m_kvMode->offChip(); }
  /// The tiers that placement gives a replica's cache.
  const KvPlacementMode& kvMode() const { return *m_kvMode; }
  /// Off-chip KV placement: the fetch engine of platform chip `chip` (null without one).
  const KvFetcher* kvFetcher(int chip) const;
  /// Requests one replica admits at once (serving.max_concurrent_users; 0: no cap), by role.
  std::size_t maxResident(Role role) const;

 private:
  /// One data-parallel replica (or, with disaggregation, one pool's replica): its chips in
  /// stage-major order, their planners and drivers, groups, links, scheduler and routing.
  struct Replica {
    int index = 0;
    Role role = Role::kBoth;
    std::vector<int> chips;
    std::vector<std::unique_ptr<StepPlanner>> planners;
    std::vector<std::unique_ptr<StepDriver>> drivers;
    std::vector<std::unique_ptr<CollectiveGroup>> groups;  // tensor-parallel, per stage (tp > 1)
    std::vector<std::unique_ptr<PipelineLink>> links;      // stage s rank r -> stage s + 1 rank r
    std::vector<std::size_t> leaderOf;                     // per chip: its stage's rank 0
    std::unique_ptr<ServingScheduler> scheduler;
    std::unique_ptr<RoutingModel> routing;
    std::vector<std::vector<uint64_t>> expertTokens;   // [layer][expert] of the current step
    std::vector<int> expertOwner;                      // ep > 1: rank of each expert
    std::vector<bool> mirrors;                         // per rank: mirrors rank 0
    std::vector<std::unique_ptr<KvSwapper>> swappers;  // swap preemption: per chip
    std::vector<std::unique_ptr<KvFetcher>> fetchers;  // off-chip KV placement: per chip
    std::unique_ptr<PhaseController> phase;            // the serving block's phase policies
    ReplicaStats stats;
    sc_core::sc_event work;
  };

  void replicaLoop(int replica);
  /// Experts across replicas: every replica steps together (each MoE layer's all-to-all spans
  /// them all; a replica without requests still serves its experts).
  void lockstepLoop();
  /// Plans `batch` on every chip of `r` (mirrors share their leader's plan).
  std::vector<std::shared_ptr<const StepPlan>> planStep(Replica& r, const StepBatch& batch);
  /// Applies the phase policy's setting for the step (`plans` from planStep); returns the stall
  /// its change costs, which the caller waits before posting.
  double preparePhase(Replica& r, const StepBatch& batch, const std::vector<std::shared_ptr<const StepPlan>>& plans);
  /// Posts `plans` (from planStep) to the drivers of `r`.
  void postStep(Replica& r, std::vector<std::shared_ptr<const StepPlan>> plans);
  /// Checks the scenario's serving block against the platform (ConfigError naming the keys), and
  /// against the chips of replica `r`.
  void checkServingPolicy(const platform::PlatformConfig& config, const ScenarioFiles& files) const;
  void checkReplicaPolicy(const Replica& r, const platform::PlatformConfig& config, const ScenarioFiles& files) const;
  /// Fills r.leaderOf and r.mirrors (each rank's stage leader, and whether it mirrors it) and
  /// marks the group mirrored when all its ranks mirror (ServingEngineMirror.cpp).
  void decideMirrors(Replica& r, bool mirror, const platform::PlatformConfig& config);
  [[noreturn]] void servingPolicyError(const platform::PlatformConfig& config, const ScenarioFiles& files,
                                       const std::string& message) const;
  /// Waits until every driver of `replicas` finished its step; false (run stopped, error set)
  /// when one failed.
  bool awaitStep(const std::vector<Replica*>& replicas);
  /// After a step: roofline check, statistics, scheduler update and token times.
  void finishStep(Replica& r, const StepBatch& batch, const sc_core::sc_time& start);
  void openLoopSource();
  void send(const Arrival& arrival);
  void onStepDone(Replica& r, const std::vector<StepOutcome>& outcomes);
  /// Disaggregation: moves request `id`'s prompt KV from prefill replica `from` to decode replica
  /// `to` over the fabric (every rank to the same rank), then queues it there.
  void transferKv(uint64_t id, int from, int to);
  /// Replica `r`'s KV shape: a slot holds stage 0's layers; beside sliding-window layers, the
  /// layers that keep every token (the most of any chip), each window block taking as many slots
  /// as the window layers need (rounded up). A model whose every layer has a window keeps all of
  /// them (no saving is modelled).
  hw::KvModelShape kvShape(const Replica& r) const;
  /// The bytes each tier gives replica `r`'s cache, `kvBytes` being what its tightest chip has
  /// for KV: all local, or its spill_to_remote split; host memory under swap preemption or
  /// offload_to_host (swapSpace), in whole slots of `shape` (kvShape).
  hw::KvTierCapacities kvCapacities(const platform::PlatformConfig& config, const Replica& r, uint64_t kvBytes,
                                    const hw::KvModelShape& shape, const std::string& platformFile) const;
  /// Swap preemption: bytes of host memory the replica's cache may swap to (whole blocks of the
  /// allocator's size); throws config::ConfigError when it holds no block.
  uint64_t swapSpace(const platform::PlatformConfig& config, const Replica& r, const hw::KvModelShape& shape,
                     uint64_t blockTokens, const std::string& platformFile) const;
  /// Swap preemption: a KvSwapper per chip of `r`, on the chip's socket and host link.
  void attachSwappers(Replica& r, platform::Platform& platform, tlm::TimingMode mode);
  /// Off-chip KV placement: a KvFetcher per chip of every replica, on the chip's host link
  /// (offload_to_host) or on its donor's memory and the fabric (spill_to_remote: the next chip of
  /// its pool lends it the region above the donor's own KV). Adds to `misfits` a donor whose HBM
  /// cannot hold both; throws config::ConfigError for a pool of one chip.
  void attachFetchers(platform::Platform& platform, tlm::TimingMode mode, const ScenarioFiles& files,
                      std::vector<std::string>& misfits);
  /// Runs the block copies the schedulers of `replicas` listed for their next step, on every chip
  /// that does not mirror, and waits for all; false (run stopped, error set) when one failed.
  bool runSwaps(const std::vector<Replica*>& replicas);
  /// Routing of the step's tokens through every MoE layer, and its imbalance statistics.
  void route(Replica& r, uint64_t tokens);

  const ModelConfig m_model;
  const ScenarioConfig m_scenario;
  int m_tp = 1;
  int m_pp = 1;
  std::vector<std::unique_ptr<Replica>> m_replicas;
  std::vector<ChipMemory> m_chipMemory;
  LoadGenerator m_load;
  std::vector<RequestRecord> m_records;  // by request id - 1
  std::vector<int> m_replicaOf;          // by request id - 1
  uint64_t m_firstMeasured = 0;          // ids (firstMeasured, lastMeasured] ... see window()
  uint64_t m_lastMeasured = 0;
  uint64_t m_measuredLeft = 0;
  bool m_completed = false;
  std::string m_error;
  uint64_t m_rooflineViolations = 0;
  double m_tightestRatio = 0.0;
  uint64_t m_kvCapacityTokens = 0;
  std::string m_kvPlacement;
  const KvPlacementMode* m_kvMode = nullptr;  // the row of m_kvPlacement
  std::map<Role, std::size_t> m_maxResident;
  int m_nextReplica = 0;
  std::vector<int> m_entry;     // replicas requests enter at (all, or the prefill pool)
  std::vector<int> m_decoders;  // disaggregation: the decode pool
  int m_nextDecoder = 0;
  std::map<std::tuple<int, int, int>, std::unique_ptr<PipelineLink>> m_kvLinks;  // (prefill, decode, rank)
  uint64_t m_kvTransfers = 0;
  double m_kvTransferBytes = 0.0;
  double m_kvTransferTimeS = 0.0;
  bool m_expertsAcross = false;
  std::unique_ptr<CollectiveGroup> m_epGroup;
  sc_core::sc_event m_anyWork;
  uint64_t m_chipImbalanceLayers = 0;
};

}  // namespace scoville::runtime
