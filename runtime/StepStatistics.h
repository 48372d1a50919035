#pragma once
// The statistics collector of a serving run: it listens to every step a runner completes and to
// every MoE layer it routes, and fills the replicas' ReplicaStats, the roofline check (a step
// whose time beats a chip's bound, bytes / HBM bandwidth or FLOPs / peak, is a violation) and the
// chip imbalance of experts across replicas. It only observes: nothing it computes feeds back
// into the simulation.

#include <cstdint>
#include <systemc>
#include <vector>

#include "runtime/Replica.h"
#include "workloads/ModelConfig.h"
#include "workloads/ServingScheduler.h"

namespace scoville::runtime {

class StepStatistics {
 public:
  StepStatistics(const workload::ModelConfig& model, ReplicaSet& set) : m_model(model), m_set(set) {}

  /// Replica `r` finished the step of `batch` that started at `start` (its drivers still hold
  /// the step's plans and timings): the roofline check on every chip, the op totals of rank 0,
  /// the KV peaks and the step's counts (an empty batch: an expert-serving idle step).
  /// `origin`: when the step the drivers' timings belong to started (a replayed step's: the
  /// recorded one's, runtime/StepSampler.h); by default `start`.
  void stepDone(Replica& r, const workload::StepBatch& batch, const sc_core::sc_time& start,
                const sc_core::sc_time* origin = nullptr);
  /// After the scheduler applied the step: its preemption and swap counters.
  void schedulerUpdated(Replica& r);
  /// Replica `r` routed `tokens` through a MoE layer, `counts` per expert.
  void layerRouted(Replica& r, const std::vector<uint64_t>& counts, uint64_t tokens);
  /// Experts across replicas: a MoE layer's tokens per chip over every replica.
  void chipsLoaded(const std::vector<uint64_t>& perChip);

  /// Steps whose time beat a chip's roofline, and the smallest time / bound ratio seen.
  uint64_t rooflineViolations() const { return m_rooflineViolations; }
  double tightestRooflineRatio() const { return m_tightestRatio; }
  /// Experts across replicas: the routed layers chipsLoaded counted.
  uint64_t chipImbalanceLayers() const { return m_chipImbalanceLayers; }

 private:
  const workload::ModelConfig& m_model;
  ReplicaSet& m_set;
  uint64_t m_rooflineViolations = 0;
  double m_tightestRatio = 0.0;
  uint64_t m_chipImbalanceLayers = 0;
};

}  // namespace scoville::runtime
