#pragma once
// Turns a platform's placement into the replicas of a serving run (a ReplicaSet): pools and
// replicas, each chip's planner and step driver, tensor-parallel groups and pipeline links, the
// KV cache of each replica with its tiers and scheduler, routing, mirrored ranks, the phase
// controller, swap and fetch engines, disaggregation's KV links and the expert-parallel group.
//
// Replica r's chips: with disaggregation, the prefill pool's replicas (prefill_chips in groups of
// tp) come first, then the decode pool's (decode_chips, dp groups of tp); a replica's chips are
// stage-major, chip (d x pp + s) x tp + r of its pool, as in decode_step.
//
// One KV cache per replica: every chip holds its slice (its ranks' heads, its stage's layers) of
// the same tokens, so the tightest chip bounds the blocks. The allocator is sized in stage 0's
// layers (the most; later stages use the first layers of each slot's region), or, beside
// sliding-window layers, in the layers that keep every token (kvShape).
//
// Swap preemption (placement.kv_cache.preemption: swap): every chip gets a KvSwapper on its
// socket and its host link, and the cache a swap space on the host (each chip's share of its
// host's memory, in blocks of the chip's slice, the tightest chip bounding it).
//
// Off-chip KV placement (spill_to_remote or offload_to_host): the cache gets a remote tier (each
// chip lends kv_remote_share of its KV memory to the previous chip of its pool) or a host tier
// (each chip's share of host memory); every chip gets a KvFetcher, and no rank mirrors.
//
// Mirrors: a rank whose planner plans exactly like its stage's rank 0 (StepPlanner::plansLike)
// mirrors it (StepDriver::post) instead of simulating its chip again. When every rank of a
// single-stage group on a switched fabric mirrors, rank 0 also runs the group's collectives for
// all (CollectiveGroup::setMirrored).
//
// Every module is created in the caller's SystemC scope (the serving engine's), so its name is
// the same as when the engine built them itself.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platforms/Platform.h"
#include "runtime/Replica.h"
#include "tlm/TimingMode.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ScenarioFiles.h"

namespace scoville::runtime {

class ReplicaBuilder {
 public:
  /// `mirror`: let ranks that plan like their stage's rank 0 mirror it (false: every chip
  /// simulates its own transactions).
  ReplicaBuilder(platform::Platform& platform, const workload::ModelConfig& model,
                 const workload::ScenarioConfig& scenario, const workload::ScenarioFiles& files, uint64_t seed,
                 tlm::TimingMode mode, bool mirror);

  /// Checks the placement and the serving block, then elaborates every replica. `longest`: the
  /// tokens of KV the longest request needs. Throws config::ConfigError (kInvalidConfig for what
  /// is not modelled yet, kDoesNotFit with the numbers of every chip or replica that misses).
  std::unique_ptr<ReplicaSet> build(uint64_t longest);

 private:
  using Pools = std::vector<std::pair<ReplicaRole, std::vector<int>>>;
  /// The chips of each replica with its role, after the placement checks.
  Pools replicaChips() const;
  /// Replica `d`'s planners, KV cache and scheduler, routing, groups, drivers, engines, phase
  /// controller and stage links; adds to `misfits` what does not fit (and returns null then).
  std::unique_ptr<Replica> buildReplica(int d, ReplicaRole role, const std::vector<int>& chips, uint64_t longest,
                                        std::vector<std::string>& misfits);
  /// Fills r.leaderOf and r.mirrors and marks the group mirrored when all its ranks mirror.
  void decideMirrors(Replica& r) const;
  /// Disaggregation: a KV link from every prefill rank to the same rank of every decode replica.
  void linkPools();
  /// Experts across replicas: one expert-parallel group over the replicas' first chips.
  void joinExpertGroup();

  // KV tiers and engines (ReplicaBuilderKv.cpp).
  /// Replica `r`'s KV shape: a slot holds stage 0's layers; beside sliding-window layers, the
  /// layers that keep every token (the most of any chip), each window block taking as many slots
  /// as the window layers need (rounded up). A model whose every layer has a window keeps all.
  hw::KvModelShape kvShape(const Replica& r) const;
  /// The bytes each tier gives replica `r`'s cache, `kvBytes` being what its tightest chip has
  /// for KV: all local, or its spill_to_remote split; host memory under swap preemption or
  /// offload_to_host (swapSpace), in whole slots of `shape`.
  hw::KvTierCapacities kvCapacities(const Replica& r, uint64_t kvBytes, const hw::KvModelShape& shape) const;
  /// Bytes of host memory the replica's cache may use (whole blocks of the allocator's size);
  /// throws config::ConfigError when it holds no block.
  uint64_t swapSpace(const Replica& r, const hw::KvModelShape& shape, uint64_t blockTokens) const;
  /// Swap preemption: a KvSwapper per chip of `r`, on the chip's socket and host link.
  void attachSwappers(Replica& r);
  /// Off-chip KV placement: a KvFetcher per chip of every replica, on the chip's host link
  /// (offload_to_host) or on its donor's memory and the fabric (spill_to_remote: the next chip of
  /// its pool lends it the region above the donor's own KV). Adds to `misfits` a donor whose HBM
  /// cannot hold both; throws config::ConfigError for a pool of one chip.
  void attachFetchers(std::vector<std::string>& misfits);

  platform::Platform& m_platform;
  const platform::PlatformConfig& m_config;
  const workload::ModelConfig& m_model;
  const workload::ScenarioConfig& m_scenario;
  const workload::ScenarioFiles& m_files;
  uint64_t m_seed = 0;
  tlm::TimingMode m_mode;
  bool m_mirror = true;
  std::unique_ptr<ReplicaSet> m_set;            ///< being built
  std::optional<workload::DraftModel> m_draft;  ///< speculative decoding's draft (absent: none)
};

}  // namespace scoville::runtime
