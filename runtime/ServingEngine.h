#pragma once
// The serving run: requests from a LoadGenerator served by dp data-parallel replicas of a
// tensor-parallel group. The engine joins the parts, each of which has its own header:
//   ReplicaBuilder    turns the platform's placement into replicas (chips, planners, drivers,
//                     groups, links, KV cache and engines, mirrors);
//   ReplicaRunner     steps one replica, one thread each; LockstepRunner steps every replica
//                     together when the experts are spread over the replicas;
//   ServingFrontEnd   sends the load and hands prefilled requests over (disaggregation), as
//                     RequestRouter (workloads/) decides and records;
//   StepStatistics    listens to every step: replica statistics and the roofline check;
//   ServingChecks     checks the serving block against the platform and the replicas' chips.
//
// Replica classes (workloads/ReplicaClasses.h, on unless --exact): a closed-loop run over alike,
// uncoupled replicas simulates one representative per class of equal load with its share of the
// users and requests; the other replicas mirror it (their chips, statistics and requests are its).
//
// Requests: closed loop, each finished request makes its user send the next at once; open loop,
// a source thread sends them at their arrival times. Requests are numbered in sending order; the
// first scenario.warmup() are warm-up, the next scenario.requests are measured, and the load
// keeps running until every measured request has finished, so that they all see the full load.
// Then nothing new is sent; steps and KV transfers in flight finish, every loop ends and the
// simulation runs out of events. The measurement window runs from the first measured request's
// arrival to the last one's finish.
//
// Not modelled yet (rejected with a ConfigError): off-chip KV placement with swap preemption or
// with disaggregation, experts spread over replicas of tp > 1 or with pipeline stages, and
// pipeline stages or experts across replicas with disaggregation.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "platforms/Platform.h"
#include "runtime/Replica.h"
#include "runtime/ServingFrontEnd.h"
#include "runtime/StepRunner.h"
#include "runtime/StepStatistics.h"
#include "tlm/TimingMode.h"
#include "workloads/LoadGenerator.h"
#include "workloads/ModelConfig.h"
#include "workloads/ReplicaClasses.h"
#include "workloads/RequestRouter.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ScenarioFiles.h"

namespace scoville::runtime {

class ServingEngine : public sc_core::sc_module {
 public:
  using Role = ReplicaRole;
  using ChipMemory = runtime::ChipMemory;

  /// Checks the placement and that every chip holds its weights and a replica's KV cache holds
  /// the longest request, then elaborates the replicas (ReplicaBuilder) and spawns the runners
  /// and the load. Throws config::ConfigError (kInvalidConfig for what is not modelled yet,
  /// kDoesNotFit with the numbers).
  ///
  /// `mirror`: ranks that plan exactly like their stage's rank 0 mirror it instead of simulating
  /// their chips again (see ReplicaBuilder.h); off (`false`): every chip simulates its own
  /// transactions.
  /// `replicaClasses`: a closed-loop run over alike, uncoupled replicas simulates one replica per
  /// class of equal load (workloads/ReplicaClasses.h) when that saves any; off: every replica is
  /// simulated (`scoville run --exact`).
  /// `samplePeriod` >= 2: each replica's steady decode runs are sampled, every `samplePeriod`-th
  /// step in detail and the others replaying the last detailed one (StepSampler.h), unless
  /// samplingBlocker() says why not; 0: every step is simulated.
  ServingEngine(const sc_core::sc_module_name& name, platform::Platform& platform, const workload::ModelConfig& model,
                const workload::ScenarioConfig& scenario, uint64_t seed, tlm::TimingMode mode,
                const workload::ScenarioFiles& files, bool mirror = true, bool replicaClasses = false,
                int samplePeriod = 0);
  ServingEngine(const ServingEngine&) = delete;
  ServingEngine& operator=(const ServingEngine&) = delete;
  ~ServingEngine() override;

  /// True once every measured request has finished.
  bool completed() const { return m_router->completed(); }
  /// The first error a driver, group, link, engine or transfer met; empty when none.
  std::string error() const { return m_status->error(); }

  /// Every request sent, by id - 1. Requests still running when the run stopped (warm-up or
  /// load-keeping ones) have finish 0 and fewer token times than output tokens.
  const std::vector<workload::RequestRecord>& records() const { return m_router->records(); }
  /// The records the metrics count (RequestRouter::metricRecords).
  std::vector<workload::RequestRecord> metricRecords() const { return m_router->metricRecords(); }
  workload::ServingWindow window() const { return m_router->window(); }

  int replicas() const { return static_cast<int>(m_set->replicas.size()); }
  /// The replica classes simulated (mirrors() is true), or null when every replica was simulated.
  const workload::ReplicaClassPlan* replicaClasses() const { return m_classes ? &*m_classes : nullptr; }
  /// Per platform chip: how many replicas the switch traffic its messages cause stands for (its
  /// class's size for a representative's chip; empty without replica classes).
  std::vector<double> switchWeights() const;
  /// Why every replica was simulated although replica classes were asked for; empty otherwise.
  const std::string& exactReason() const { return m_exactReason; }
  /// Why every step was simulated although sampling was asked for; empty otherwise.
  const std::string& samplingBlocker() const { return m_samplingBlocker; }
  /// What sampling did over every replica's runner; empty when no step was sampled.
  std::optional<SamplingSummary> sampling() const;
  int tp() const { return m_set->tp; }
  int pp() const { return m_set->pp; }
  /// A mirroring replica's statistics, role and phase work are its representative's.
  const ReplicaStats& replicaStats(int replica) const { return m_set->at(m_set->source(replica)).stats; }
  /// Role of replica `replica`.
  Role role(int replica) const { return m_set->at(m_set->source(replica)).role; }
  /// The tensor-parallel groups of `replica`, one per pipeline stage; none for tp = 1.
  std::vector<const CollectiveGroup*> groups(int replica) const;
  /// The pipeline hand-offs of `replica` (pp > 1).
  std::vector<const PipelineLink*> stageLinks(int replica) const;
  /// The expert-parallel group over the replicas (experts across replicas); null otherwise.
  const CollectiveGroup* expertGroup() const { return m_set->epGroup.get(); }
  /// Max / mean tokens per chip, summed over routed layers and steps, and that count (experts
  /// across replicas: over all replicas' tokens; otherwise per replica in ReplicaStats).
  uint64_t chipImbalanceLayers() const { return m_statistics->chipImbalanceLayers(); }
  /// Per-chip KV capacity (bytes) and weights, by platform chip.
  const std::vector<ChipMemory>& chipMemory() const { return m_set->chipMemory; }
  /// Steps whose time beat a chip's roofline, and the smallest time / bound ratio seen.
  uint64_t rooflineViolations() const { return m_statistics->rooflineViolations(); }
  double tightestRooflineRatio() const { return m_statistics->tightestRooflineRatio(); }
  /// Chips that mirror their replica's rank 0 (their modules count none of the traffic).
  int mirroredChips() const { return m_set->mirroredChips(); }
  /// Per platform chip (up to the highest one a replica uses): the chip it mirrors, or -1 when it
  /// is simulated.
  std::vector<int> mirrorOfChips() const { return m_set->mirrorOfChips(); }
  /// Disaggregation: prompt KV transfers done, their bytes (all ranks) and summed time.
  uint64_t kvTransfers() const { return m_frontEnd->kvTransfers(); }
  double kvTransferBytes() const { return m_frontEnd->kvTransferBytes(); }
  double kvTransferTimeS() const { return m_frontEnd->kvTransferTimeS(); }
  /// Tokens of KV one replica's cache holds.
  uint64_t kvCapacityTokens() const { return m_set->kvCapacityTokens; }
  /// The phase policies' work on `replica` (every replica has a controller).
  const PhaseController& phaseController(int replica) const { return *m_set->at(m_set->source(replica)).phase; }
  /// The KV placement policy the replicas' caches use (the serving block's or the platform's).
  const std::string& kvPlacement() const { return m_set->kvPlacement; }
  /// Whether the placement puts running requests' KV off the chips (spill_to_remote, offload_to_host).
  bool offChipKv() const { return m_set->kvMode->offChip(); }
  /// The tiers that placement gives a replica's cache.
  const KvPlacementMode& kvMode() const { return *m_set->kvMode; }
  /// Off-chip KV placement: the fetch engine of platform chip `chip` (null without one).
  const KvFetcher* kvFetcher(int chip) const { return m_set->kvFetcher(chip); }
  /// Requests one replica admits at once (serving.max_concurrent_users; 0: no cap), by role.
  std::size_t maxResident(Role role) const { return m_set->maxResidentOf(role); }

 private:
  /// Why replica classes cannot stand for this run (coupled or unlike replicas); empty when they can.
  std::string replicaClassesBlocker(const platform::PlatformConfig& platform,
                                    const workload::ScenarioConfig& scenario) const;
  /// Why sampled decode steps cannot stand for this run's steps; empty when they can.
  std::string samplingBlockerOf() const;

  const workload::ModelConfig m_model;
  const workload::ScenarioConfig m_scenario;
  std::optional<workload::ReplicaClassPlan> m_classes;
  std::string m_exactReason;
  std::string m_samplingBlocker;
  std::unique_ptr<workload::LoadGenerator> m_load;
  std::unique_ptr<ReplicaSet> m_set;
  std::unique_ptr<RunStatus> m_status;
  std::unique_ptr<workload::RequestRouter> m_router;
  std::unique_ptr<StepStatistics> m_statistics;
  std::unique_ptr<ServingFrontEnd> m_frontEnd;
  std::vector<std::unique_ptr<StepRunner>> m_runners;
};

}  // namespace scoville::runtime
