#pragma once
// The operations of one decode step of a dense transformer, derived from first principles: the
// bytes every op moves and the GEMM shapes it computes, with weights and KV cache placed at
// explicit HBM addresses. Pure data: the DecodeDriver turns it into TLM transactions.

#include <cstdint>
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

/// One tile of the layer pipeline: memory traffic that fits one SRAM staging buffer, then the
/// GEMMs that consume it. Large weight matrices and long KV caches are split into many tiles so
/// that loading tile i+1 overlaps computing tile i, as a streaming accelerator does.
struct PlannedOp {
  std::string name;    ///< op class: "qkv_proj", "attention", ..., "lm_head"
  uint32_t layer = 0;  ///< 0-based layer; model.layers for embedding/LM head
  std::vector<MemoryAccess> accesses;
  std::vector<tlm::GemmShape> gemms;
  double vectorOps = 0.0;  ///< element operations on the vector unit after the GEMMs

  uint64_t bytes() const;
  double flops() const;
};

struct DecodePlan {
  std::vector<PlannedOp> ops;
  tlm::Precision computePrecision = tlm::Precision::kBf16;
  uint64_t batch = 0;
  double weightBytes = 0.0;  ///< bytes of all resident weights
  double kvBytes = 0.0;      ///< bytes of the KV cache after the step
  double bytesMoved = 0.0;   ///< all bytes the step reads and writes
  double flops = 0.0;        ///< all FLOPs of the step's GEMMs
  double vectorOps = 0.0;    ///< all element operations of the step (norms, softmax, activations)

  /// Roofline lower bounds of the step on `chip`.
  double memoryBoundS(const hw::ChipConfig& chip) const { return bytesMoved / chip.hbm.bandwidthBytesPerS; }
  double computeBoundS(const hw::ChipConfig& chip) const { return flops / chip.tensorCore.peakFlops(computePrecision); }
};

/// Plans one decode step of `scenario.batch` requests with `scenario.contextLength` tokens each.
/// Weights are stored output-major (the K weights of each output column contiguous), so a tile
/// of output columns is one contiguous HBM read; tiles hold at most chip.sram.bufferBytes().
/// Throws ConfigError: kDoesNotFit when weights + KV cache exceed HBM capacity (with the numbers),
/// kInvalidConfig when the chip cannot compute in the model's precision.
DecodePlan planDecodeStep(const ModelConfig& model, const ScenarioConfig& scenario, const hw::ChipConfig& chip);

}  // namespace scoville::workload
