#pragma once
// The operations of one decode step of a dense transformer, derived from first principles: the
// bytes every op moves and the GEMM shapes it computes, with weights and KV cache placed at
// explicit HBM addresses. Pure data: the DecodeDriver turns it into TLM transactions.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/ChipConfig.h"
#include "tlm/OpExtension.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"

namespace scoville::workload {

/// One memory transaction of an op.
struct MemoryAccess {
  tlm::OpKind kind = tlm::OpKind::kRead;
  uint64_t address = 0;
  uint64_t bytes = 0;
};

/// One step of the layer pipeline: its memory traffic, then (optionally) a GEMM that needs it.
struct PlannedOp {
  std::string name;   ///< "qkv_proj", "attn_score", ..., "lm_head"
  uint32_t layer = 0; ///< 0-based layer; model.layers for embedding/LM head
  std::vector<MemoryAccess> accesses;
  std::optional<tlm::GemmShape> gemm;
};

struct DecodePlan {
  std::vector<PlannedOp> ops;
  tlm::Precision computePrecision = tlm::Precision::kBf16;
  uint64_t batch = 0;
  double weightBytes = 0.0;    ///< bytes of all resident weights
  double kvBytes = 0.0;        ///< bytes of the KV cache after the step
  double bytesMoved = 0.0;     ///< all bytes the step reads and writes
  double flops = 0.0;          ///< all FLOPs of the step's GEMMs

  /// Roofline lower bounds of the step on `chip`.
  double memoryBoundS(const hw::ChipConfig& chip) const { return bytesMoved / chip.hbm.bandwidthBytesPerS; }
  double computeBoundS(const hw::ChipConfig& chip) const { return flops / chip.tensorCore.peakFlops(computePrecision); }
};

/// Plans one decode step of `scenario.batch` requests with `scenario.contextLength` tokens each.
/// Throws ConfigError: kDoesNotFit when weights + KV cache exceed HBM capacity (with the numbers),
/// kInvalidConfig when the chip cannot compute in the model's precision.
DecodePlan planDecodeStep(const ModelConfig& model, const ScenarioConfig& scenario, const hw::ChipConfig& chip);

}  // namespace scoville::workload
