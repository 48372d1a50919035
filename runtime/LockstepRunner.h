#pragma once
// Experts across replicas (tp 1, ep = dp): one thread steps every replica together, since each
// MoE layer's all-to-all spans them all. It routes every replica's tokens, works out per MoE
// layer which tokens each chip's experts receive from every replica and the bytes each chip
// dispatches to (and gets back from) each other chip, and plans each chip's step with them: its
// own attention, the dispatch all-to-all, its experts on the received tokens, the combine
// all-to-all (on the expert-parallel CollectiveGroup over the replicas' chips). A replica without
// requests still runs the step for its experts.

#include "runtime/StepRunner.h"

namespace scoville::runtime {

class LockstepRunner : public StepRunner {
 public:
  explicit LockstepRunner(const RunnerContext& context) : StepRunner(context) {}
  void run() override;

 private:
  /// Per member and MoE layer: tokens its experts receive per expert (`received`), bytes it
  /// dispatches to and gets back from each member; counts each layer's chip load.
  void exchange(std::vector<std::vector<std::vector<uint64_t>>>& received,
                std::vector<std::vector<std::vector<uint64_t>>>& dispatch,
                std::vector<std::vector<std::vector<uint64_t>>>& combine);
};

}  // namespace scoville::runtime
