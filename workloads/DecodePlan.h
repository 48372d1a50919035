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

/// A collective the tensor-parallel group runs after an op's compute (its result feeds the next op).
struct PlannedCollective {
  enum class Kind { kNone, kAllReduce, kAllGather };
  Kind kind = Kind::kNone;
  uint64_t bytes = 0;  ///< the full buffer each chip holds (see hw::expandCollective)
};

/// One tile of the layer pipeline: memory traffic that fits one SRAM staging buffer, then the
/// GEMMs that consume it. Large weight matrices and long KV caches are split into many tiles so
/// that loading tile i+1 overlaps computing tile i, as a streaming accelerator does.
struct PlannedOp {
  std::string name;    ///< op class: "qkv_proj", "attention", ..., "lm_head"
  uint32_t layer = 0;  ///< 0-based layer; model.layers for embedding/LM head
  std::vector<MemoryAccess> accesses;
  std::vector<tlm::GemmShape> gemms;
  double vectorOps = 0.0;     ///< element operations on the vector unit after the GEMMs
  PlannedCollective after{};  ///< run by the tensor-parallel group once this op has computed
  uint64_t sendNext = 0;      ///< bytes sent to the same rank of the next pipeline stage after that

  uint64_t bytes() const;
  double flops() const;
};

/// Which slice of the model a chip computes. Tensor parallelism (Megatron-style): query heads, KV
/// heads (replicated when there are fewer than tp), FFN columns and vocabulary rows are split tp
/// ways; rank r takes the r-th contiguous part (the first parts one larger when the split is
/// uneven). Pipeline parallelism: stage s of pp holds the s-th contiguous run of layers (the
/// first runs one longer when uneven); stage 0 also the embedding, the last stage the final norm
/// and the LM head.
struct ModelShard {
  int tp = 1;
  int rank = 0;
  int pp = 1;
  int stage = 0;
};

/// Elements of a `total`-wide dimension rank `rank` of `parts` holds.
uint64_t shardOf(uint64_t total, int parts, int rank);

struct DecodePlan {
  std::vector<PlannedOp> ops;
  ModelShard shard;
  /// The first op waits for the previous pipeline stage's activations (every stage but the first).
  bool receivesFromPrevious = false;
  tlm::Precision computePrecision = tlm::Precision::kBf16;
  uint64_t batch = 0;
  double weightBytes = 0.0;      ///< bytes of the weights this chip holds
  double kvBytes = 0.0;          ///< bytes of this chip's KV cache after the step
  double collectiveBytes = 0.0;  ///< bytes of all collective buffers (per chip) the step reduces or gathers
  double bytesMoved = 0.0;       ///< all bytes the step reads and writes
  double flops = 0.0;            ///< all FLOPs of the step's GEMMs
  double vectorOps = 0.0;        ///< all element operations of the step (norms, softmax, activations)

  /// Roofline lower bounds of the step on `chip`.
  double memoryBoundS(const hw::ChipConfig& chip) const { return bytesMoved / chip.hbm.bandwidthBytesPerS; }
  double computeBoundS(const hw::ChipConfig& chip) const { return flops / chip.tensorCore.peakFlops(computePrecision); }
};

/// Plans one decode step, on one chip of a tensor-parallel group and pipeline stage, of `batch` requests with
/// `scenario.contextLength` tokens each. Weights are stored output-major (the K weights of each
/// output column contiguous), so a tile of output columns is one contiguous HBM read; tiles hold
/// at most chip.sram.bufferBytes(). With tp > 1 the embedding, o_proj and ffn_down outputs are
/// all-reduced (batch x hidden activations) and the LM head's per-rank argmax all-gathered.
/// Throws ConfigError: kDoesNotFit when weights + KV cache + reservedBytes exceed HBM capacity
/// (with the numbers), kInvalidConfig when the chip cannot compute in the model's precision or the
/// heads do not split tp ways.
DecodePlan planDecodeStep(const ModelConfig& model, const ScenarioConfig& scenario, const hw::ChipConfig& chip,
                          ModelShard shard = {}, int batch = -1, double reservedBytes = 0.0);

}  // namespace scoville::workload
