#pragma once
// The runners that step a serving run's replicas, one SystemC thread each.
//
// ReplicaRunner loops over one replica: compose the next step (ServingScheduler::next), run the
// KV block copies it lists (swap preemption; as vLLM, before the forward pass), route its tokens
// through each MoE layer (one routing stream per replica), plan every chip's shard of the step
// (StepPlanner; mirrors share their leader's plan), apply the phase policy, post the plans to
// the chips' drivers and wait until all have finished (their collectives keep the group in
// lockstep), then apply the step (ServingScheduler::complete) and hand its outcomes to the front
// end. The step time is thus the chips' simulated time; nothing here computes a duration.
// Pipeline stages (pp > 1) run each step in turn, handing activations over PipelineLinks; no
// microbatches overlap them.
//
// LockstepRunner (LockstepRunner.h) steps every replica together when the experts are spread
// over the replicas. Both share the step's phases, which StepRunner holds.

#include <memory>
#include <systemc>
#include <vector>

#include "runtime/Replica.h"
#include "runtime/ServingFrontEnd.h"
#include "runtime/StepSampler.h"
#include "runtime/StepStatistics.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"

namespace scoville::runtime {

/// What every runner needs: the run's replicas, model and scenario, and the parts it reports to.
struct RunnerContext {
  ReplicaSet& set;
  const workload::ModelConfig& model;
  const workload::ScenarioConfig& scenario;
  ServingFrontEnd& frontEnd;
  StepStatistics& statistics;
  RunStatus& status;
};

class StepRunner {
 public:
  explicit StepRunner(const RunnerContext& context) : m_run(context) {}
  virtual ~StepRunner() = default;
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  /// The thread's body: steps until the run completes or fails.
  virtual void run() = 0;
  /// What sampling its decode steps did (StepSampler.h); null when it samples none.
  virtual const SamplingSummary* sampling() const { return nullptr; }

 protected:
  /// The scheduler's and the software stack's cost of composing a step.
  sc_core::sc_time stepOverhead() const;
  /// Runs the block copies the schedulers of `replicas` listed for their next step, on every
  /// chip that does not mirror, and waits for all; false (run stopped, error set) when one failed.
  bool runSwaps(const std::vector<Replica*>& replicas);
  /// Routes `tokens` of replica `r` through every MoE layer into r.expertTokens.
  void route(Replica& r, uint64_t tokens);
  /// Speculative decoding: the draft passes after `batch`'s verification, routed through the
  /// draft's expert layers (into r.draftExpertTokens).
  std::vector<workload::StepBatch> draftPassesOf(Replica& r, const workload::StepBatch& batch);
  /// Plans `batch` on every chip of `r`, with the draft's passes after it under speculative
  /// decoding (mirrors share their leader's plan).
  std::vector<std::shared_ptr<const workload::StepPlan>> planStep(Replica& r, const workload::StepBatch& batch);
  /// Applies the phase policy's setting for the step; returns the stall its change costs, which
  /// the caller waits before posting.
  double preparePhase(Replica& r, const workload::StepBatch& batch,
                      const std::vector<std::shared_ptr<const workload::StepPlan>>& plans);
  /// Adds a step of `plans` (one per chip of `r`) to r's byte and FLOP statistics.
  void countStep(Replica& r, const std::vector<std::shared_ptr<const workload::StepPlan>>& plans);
  /// Posts `plans` (from planStep) to the drivers of `r`, counting them (countStep).
  void postStep(Replica& r, std::vector<std::shared_ptr<const workload::StepPlan>> plans);
  /// Waits until every driver of `replicas` finished its step; false (run stopped, error set)
  /// when one failed.
  bool awaitStep(const std::vector<Replica*>& replicas);
  /// After a step: statistics, the phase controller, then the scheduler and the front end.
  /// `origin`: a replayed step's recorded start (StepStatistics::stepDone).
  void finishStep(Replica& r, const workload::StepBatch& batch, const sc_core::sc_time& start,
                  const sc_core::sc_time* origin = nullptr);

  RunnerContext m_run;
};

/// Steps one replica (see above); with sample(), replays most steps of its steady decode runs.
class ReplicaRunner : public StepRunner {
 public:
  ReplicaRunner(const RunnerContext& context, int replica) : StepRunner(context), m_replica(replica) {}
  void run() override;
  /// Samples the replica's steady decode runs, every `period`-th step in detail (StepSampler.h).
  void sample(int period, platform::Platform& platform);
  const SamplingSummary* sampling() const override { return m_sampler ? &m_sampler->summary() : nullptr; }

 private:
  /// Applies the phase policy's setting for the step (waiting the stall its change costs) and
  /// tells the phase controller the step starts; returns when it does.
  sc_core::sc_time beginStep(Replica& r, const workload::StepBatch& batch,
                             const std::vector<std::shared_ptr<const workload::StepPlan>>& plans);
  /// A step the sampler replays: its time, then its recorded activity.
  void replayStep(Replica& r, const workload::StepBatch& batch);

  int m_replica;
  std::unique_ptr<StepSampler> m_sampler;
};

}  // namespace scoville::runtime
