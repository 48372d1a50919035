#pragma once
// Helpers of the step planner tests (StepPlannerTest.cpp, StepPlannerMoeTest.cpp): the reference
// chip, decoding batches, expert routing and sums over a plan's ops.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hw/chip/ChipConfig.h"
#include "test/support/Shipped.h"
#include "workloads/ModelConfig.h"
#include "workloads/StepPlan.h"

namespace scoville::workload::planner_test {

using Routing = std::vector<std::vector<uint64_t>>;
using test::shippedModel;

inline constexpr uint64_t kAlignment = 4096;  // weight tensors start on 4 KiB boundaries

inline const hw::ChipConfig& jalapeno() {
  static const hw::ChipConfig chip = test::shippedPlatform("jalapeno").chipConfig(0);
  return chip;
}

inline uint64_t u(int v) {
  return static_cast<uint64_t>(v);
}

/// Expert routing of every MoE layer of `m`: tokens(layer, expert); empty rows for dense layers.
inline Routing routing(const ModelConfig& m, const std::function<uint64_t(int, int)>& tokens) {
  Routing r(u(m.layers));
  for (int l = 0; l < m.layers; ++l) {
    if (!m.isMoeLayer(l)) continue;
    for (int e = 0; e < m.routedExperts; ++e) r[u(l)].push_back(tokens(l, e));
  }
  return r;
}

/// `count` decoding sequences with `context` cached tokens each, KV regions 1 MiB apart.
inline StepBatch decodes(uint64_t count, uint64_t context, const Routing* routed = nullptr) {
  StepBatch b;
  b.kvLayerStride = 64ull << 20;
  for (uint64_t i = 0; i < count; ++i) {
    b.sequences.push_back(StepSequence{i + 1, context, 1, true, i << 20});
  }
  b.expertTokens = routed;
  return b;
}

/// Bytes of `kind` accesses of the ops named `name` in layer `layer`.
inline uint64_t bytesOf(const StepPlan& plan, const std::string& name, uint32_t layer, tlm::OpKind kind) {
  uint64_t total = 0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name != name || op.layer != layer) continue;
    for (const MemoryAccess& a : op.accesses) {
      if (a.kind == kind) total += a.bytes;
    }
  }
  return total;
}

inline double flopsOf(const StepPlan& plan, const std::string& name, uint32_t layer) {
  double total = 0.0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name == name && op.layer == layer) total += op.flops();
  }
  return total;
}

inline std::size_t countOps(const StepPlan& plan, const std::string& name) {
  return static_cast<std::size_t>(
      std::count_if(plan.ops.begin(), plan.ops.end(), [&](const PlannedOp& op) { return op.name == name; }));
}

/// One routed expert's bytes (gate, up and down) in the model's expert format.
inline uint64_t expertBytes(const ModelConfig& m) {
  return static_cast<uint64_t>(
      std::ceil(static_cast<double>(m.expertParams()) * m.expertFormat().bitsPerElement() / 8));
}

}  // namespace scoville::workload::planner_test
