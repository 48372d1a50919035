#pragma once
// A decode step across a whole platform under its placement: dp replicas of a tp-wide tensor-
// parallel group, each chip running its shard of the model through its own StepDriver, the
// groups' collectives crossing the fabric.

#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "platforms/Platform.h"
#include "platforms/PlatformConfig.h"
#include "runtime/CollectiveGroup.h"
#include "runtime/PipelineLink.h"
#include "runtime/StepDriver.h"
#include "tlm/TimingMode.h"
#include "workloads/ModelConfig.h"
#include "workloads/Routing.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/StepPlan.h"

namespace scoville::runtime {

using workload::ModelConfig;
using workload::ModelShard;
using workload::RoutingConfig;
using workload::ScenarioConfig;
using workload::SoftwareStackConfig;
using workload::StepPlan;
using workload::StepPlanner;

/// One chip's part of the step.
struct ChipAssignment {
  int chip = 0;     ///< platform chip index
  int replica = 0;  ///< data-parallel replica
  int rank = 0;     ///< tensor-parallel rank within the replica
  int stage = 0;    ///< pipeline stage within the replica
  int batch = 0;    ///< requests of the replica (the scenario's batch spread over dp replicas)
};

struct PlatformDecodePlan {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  std::vector<ChipAssignment> members;  ///< replica-major, then stage, then rank
  std::vector<StepPlan> plans;          ///< plans[i] runs on members[i].chip
};

/// Plans one decode step, on one chip of a tensor-parallel group and pipeline stage, of `batch`
/// requests with `scenario.contextLength` tokens each (each request's KV cache contiguous per
/// layer above the weights, requests side by side). MoE models route their tokens by `routing`
/// (its file resolved; uniform when null) with `seed`. Throws ConfigError: kDoesNotFit when
/// weights + KV cache + reservedBytes exceed HBM capacity (with the numbers), as StepPlanner, and
/// for a routing trace that cannot be read or does not match the model's MoE layers.
/// `tokens` > 1: each request feeds that many tokens on its context instead of one (a prompt
/// chunk; the dry run's cost model plans one so).
StepPlan planDecodeStep(const ModelConfig& model, const ScenarioConfig& scenario, const hw::ChipConfig& chip,
                        ModelShard shard = {}, int batch = -1, double reservedBytes = 0.0,
                        const RoutingConfig* routing = nullptr, uint64_t seed = 1, uint64_t tokens = 1);

/// The shard of `model` tensor-parallel rank `rank` of pipeline stage `stage` holds under
/// `placement` (experts mapped to ranks by placement.experts when ep > 1). Throws ConfigError for
/// an expert_map that does not match the model.
ModelShard shardFor(const platform::PlacementConfig& placement, const ModelConfig& model, int rank, int stage);

/// Plans the step on the platform's decode chips (all chips, or placement.disaggregation's
/// decode_chips in order): replica d, stage s, rank r runs on the (d x pp x tp + s x tp + r)-th of
/// them and holds the placement's activation_memory on top of its weights and KV cache. Replicas
/// left without requests (batch < dp) run nothing, but their chips must still hold the weights.
/// Throws ConfigError: kInvalidConfig for a model that does not split tp ways or pp stages;
/// kDoesNotFit naming every chip that does not fit, with its weights, KV cache, activations and
/// HBM capacity. MoE layers route by the scenario's `routing` (a trace from `routingTrace`, the
/// resolved file), replica d with seed + d as in serving.
PlatformDecodePlan planPlatformDecodeStep(const platform::PlatformConfig& platform, const ModelConfig& model,
                                          const ScenarioConfig& scenario, uint64_t seed = 1,
                                          const std::string& routingTrace = "");

/// Elaborates one StepDriver per planned chip, one CollectiveGroup per replica and stage
/// (tp > 1) and one PipelineLink per replica, stage boundary and rank (pp > 1), bound to
/// `platform`. The plans move into the drivers (plan().plans is empty afterwards; use
/// driver(i).plan()).
class PlatformDecodeRunner : public sc_core::sc_module {
 public:
  /// `stack`: the scenario's software-stack profile (null: none); it must outlive the runner.
  PlatformDecodeRunner(const sc_core::sc_module_name& name, platform::Platform& platform, PlatformDecodePlan plan,
                       tlm::TimingMode mode, const SoftwareStackConfig* stack = nullptr);
  PlatformDecodeRunner(const PlatformDecodeRunner&) = delete;
  PlatformDecodeRunner& operator=(const PlatformDecodeRunner&) = delete;

  const PlatformDecodePlan& plan() const { return m_plan; }
  std::size_t drivers() const { return m_drivers.size(); }
  const StepDriver& driver(std::size_t i) const { return *m_drivers.at(i); }
  const std::vector<std::unique_ptr<CollectiveGroup>>& groups() const { return m_groups; }
  /// The tensor-parallel group of `replica`'s `stage`; null for tp = 1 or a replica that ran nothing.
  const CollectiveGroup* groupOf(int replica, int stage = 0) const;
  const std::vector<std::unique_ptr<PipelineLink>>& pipelineLinks() const { return m_links; }
  /// True once every driver has finished.
  bool finished() const;
  /// The first error any driver or group reported; empty when none.
  std::string error() const;
  /// The step time: the slowest driver's.
  sc_core::sc_time stepTime() const;
  /// Index of the slowest driver (the one stepTime() comes from).
  std::size_t slowest() const;

 private:
  PlatformDecodePlan m_plan;
  std::vector<std::unique_ptr<StepDriver>> m_drivers;
  std::vector<std::unique_ptr<CollectiveGroup>> m_groups;
  std::map<std::pair<int, int>, CollectiveGroup*> m_groupOf;  // (replica, stage)
  std::vector<std::unique_ptr<PipelineLink>> m_links;
};

}  // namespace scoville::runtime
