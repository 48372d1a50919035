#pragma once
// One data-parallel replica of a serving run and the set ReplicaBuilder makes of them: a
// replica's chips in stage-major order with their planners and step drivers, its tensor-parallel
// groups and pipeline links, its scheduler and routing, its KV engines and its statistics.
// ReplicaRunner and LockstepRunner step replicas, ServingFrontEnd feeds them requests, and
// StepStatistics fills their ReplicaStats.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "runtime/CollectiveGroup.h"
#include "runtime/KvFetcher.h"
#include "runtime/KvPlacementMode.h"
#include "runtime/KvSwapper.h"
#include "runtime/PhaseController.h"
#include "runtime/PipelineLink.h"
#include "runtime/StepDriver.h"
#include "workloads/Routing.h"
#include "workloads/ServingScheduler.h"
#include "workloads/StepPlan.h"

namespace scoville::runtime {

/// What a replica runs: everything, or (disaggregation) prompts only or decodes only.
enum class ReplicaRole { kBoth, kPrefill, kDecode };

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
  double cacheOffloadBytes = 0.0;  ///< prefix-cache blocks copied to host, every chip's slice summed
  double cacheRestoreBytes = 0.0;  ///< and back
  double swapS = 0.0;              ///< time its own swap copies took, which its steps waited for (not in busyS)
  // Mixture of experts: max / mean tokens per expert, and per chip (ep > 1), per routed layer.
  double expertImbalanceSum = 0.0;
  double chipImbalanceSum = 0.0;
  uint64_t routedLayers = 0;
  // Speculative decoding: the draft passes' time on the replica's first chip (from the end of
  // the verification to the end of the step), and the passes run.
  double draftS = 0.0;
  uint64_t draftPasses = 0;
  workload::SpeculationCounts speculation;  ///< the scheduler's drafts and accepted tokens
  // Prefix caching: prompt tokens admitted and those found cached; blocks the cache holds and evicted.
  uint64_t promptTokensAdmitted = 0;
  uint64_t cachedPromptTokens = 0;
  uint64_t cachedBlocks = 0;
  uint64_t peakCachedBlocks = 0;
  uint64_t evictedBlocks = 0;
  uint64_t offloadedBlocks = 0;  ///< prefix-cache offload: blocks moved to host, and back
  uint64_t restoredBlocks = 0;
  std::array<uint64_t, hw::kKvTierCount> cachedBlocksOn{};  ///< by tier, the last time the scheduler ran
  std::array<double, hw::kKvTierCount> kvBlockS{};          ///< by tier: blocks in use x step time, summed over steps
  double kvOccupancyS = 0.0;                                ///< the steps' time those sums cover
  std::map<std::string, OpTotals> perOp;                    ///< of the replica's tensor-parallel rank 0
};

/// One data-parallel replica (or, with disaggregation, one pool's replica).
struct Replica {
  int index = 0;
  ReplicaRole role = ReplicaRole::kBoth;
  std::vector<int> chips;  ///< stage-major: chip (stage x tp + rank)
  std::vector<std::unique_ptr<workload::StepPlanner>> planners;
  std::vector<std::unique_ptr<StepDriver>> drivers;
  std::vector<std::unique_ptr<CollectiveGroup>> groups;  ///< tensor-parallel, per stage (tp > 1)
  std::vector<std::unique_ptr<PipelineLink>> links;      ///< stage s rank r -> stage s + 1 rank r
  std::vector<std::size_t> leaderOf;                     ///< per chip: its stage's rank 0
  std::unique_ptr<workload::ServingScheduler> scheduler;
  std::unique_ptr<workload::RoutingModel> routing;
  std::vector<std::vector<uint64_t>> expertTokens;   ///< [layer][expert] of the current step
  std::vector<int> expertOwner;                      ///< ep > 1: rank of each expert
  std::vector<bool> mirrors;                         ///< per rank: mirrors rank 0
  std::vector<std::unique_ptr<KvSwapper>> swappers;  ///< swap preemption: per chip
  std::vector<std::unique_ptr<KvFetcher>> fetchers;  ///< off-chip KV placement: per chip
  std::unique_ptr<PhaseController> phase;            ///< the serving block's phase policies
  /// Speculative decoding (workloads/Speculative.h): per chip, the draft's planner (empty without).
  std::vector<std::unique_ptr<workload::StepPlanner>> draftPlanners;
  std::unique_ptr<workload::RoutingModel> draftRouting;  ///< a mixture-of-experts draft's routing
  /// [pass][draft layer][expert]: the tokens of the current step's draft passes routed to each expert.
  std::vector<std::vector<std::vector<uint64_t>>> draftExpertTokens;
  ReplicaStats stats;
  sc_core::sc_event work;  ///< notified when a request arrives
};

/// Per-chip KV capacity (bytes) and weights, by platform chip.
struct ChipMemory {
  int chip = 0;
  double weightBytes = 0.0;
  double kvCapacityBytes = 0.0;
  double activationBytes = 0.0;
  double hbmBytes = 0.0;
};

/// Every replica of a serving run and what joins them, as ReplicaBuilder elaborated it.
struct ReplicaSet {
  int tp = 1;
  int pp = 1;
  /// Attention data parallelism with the experts spread over the replicas (tp 1, ep = dp).
  bool expertsAcross = false;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::vector<ChipMemory> chipMemory;
  /// Disaggregation: (prefill replica, decode replica, rank) -> the link its prompt KV crosses.
  std::map<std::tuple<int, int, int>, std::unique_ptr<PipelineLink>> kvLinks;
  /// Experts across replicas: the expert-parallel group, member d being replica d's chip.
  std::unique_ptr<CollectiveGroup> epGroup;
  uint64_t kvCapacityTokens = 0;                   ///< tokens of KV one replica's cache holds
  std::string kvPlacement;                         ///< the KV placement policy (the serving block's or the platform's)
  const KvPlacementMode* kvMode = nullptr;         ///< its row
  std::map<ReplicaRole, std::size_t> maxResident;  ///< requests a replica admits at once (0: no cap)
  /// Replica classes (workloads/ReplicaClasses.h): per replica, the representative it mirrors, or
  /// -1 (simulated, or idle); empty when every replica is simulated.
  std::vector<int> replicaLeader;

  Replica& at(int replica) { return *replicas.at(static_cast<std::size_t>(replica)); }
  const Replica& at(int replica) const { return *replicas.at(static_cast<std::size_t>(replica)); }
  /// The replica whose simulation stands for `replica`: its representative when it mirrors one.
  int source(int replica) const {
    const auto r = static_cast<std::size_t>(replica);
    return r < replicaLeader.size() && replicaLeader[r] >= 0 ? replicaLeader[r] : replica;
  }
  /// The replicas requests enter at (all, or the prefill pool), and disaggregation's decode pool.
  std::vector<int> entries() const;
  std::vector<int> decoders() const;
  /// The first error a driver, group or pipeline link met; empty when none.
  std::string moduleError() const;
  /// Off-chip KV placement: the fetch engine of platform chip `chip` (null without one).
  const KvFetcher* kvFetcher(int chip) const;
  /// Per platform chip (up to the highest one a replica uses): the simulated chip it mirrors (its
  /// rank 0, or its representative replica's chip of the same rank), or -1.
  std::vector<int> mirrorOfChips() const;
  int mirroredChips() const;
  std::size_t maxResidentOf(ReplicaRole role) const;
};

/// How a serving run is going: the first error any part met. Runners and the front end share it.
class RunStatus {
 public:
  explicit RunStatus(const ReplicaSet& set) : m_set(set) {}
  /// The first error recorded, else the first a module met; empty when none.
  std::string error() const { return m_error.empty() ? m_set.moduleError() : m_error; }
  /// Records `message` unless an error was recorded before.
  void fail(const std::string& message) {
    if (m_error.empty()) m_error = message;
  }
  /// True once an error was recorded (fail, or carryOn finding one).
  bool failed() const { return !m_error.empty(); }
  /// True when nothing failed; otherwise records the error and stops the simulation (a failed
  /// step leaves its group's other members waiting) and returns false.
  bool carryOn() {
    if (error().empty()) return true;
    m_error = error();
    sc_core::sc_stop();
    return false;
  }

 private:
  const ReplicaSet& m_set;
  std::string m_error;
};

}  // namespace scoville::runtime
