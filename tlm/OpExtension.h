#pragma once
// The one TLM-2.0 extension Scoville attaches to every generic payload: what the transaction
// means to an LLM accelerator. Payloads are timing-only: data pointers are null and the size of
// a transfer is `bytes` here (tlm_generic_payload's 32-bit data length cannot hold a weight
// stream), so targets read this extension, never get_data_length().

#include <cstdint>
#include <tlm>
#include <vector>

#include "tlm/OpTypes.h"
#include "tlm/Precision.h"
#include "tlm/WorkGrid.h"

namespace scoville::tlm {

/// Set by the initiator (step driver, copy engine, collective group: through tlm::PayloadBuilder)
/// before sending; read-only for interconnects and targets. A target that forwards a transaction in
/// pieces (fabric interface to the fabric) issues new payloads of its own rather than editing it.
class OpExtension : public ::tlm::tlm_extension<OpExtension> {
 public:
  OpKind kind = OpKind::kRead;  ///< routes the payload and selects the target's action
  /// Switching activity of the data moved, relative to random data (1.0; weights, activations and
  /// KV are): 0 for data that never changes (a constant fill). Priced by the power model's wires.
  float dataToggle = 1.0F;
  uint64_t bytes = 0;                      ///< transfer size for memory ops; 0 for GEMMs
  GemmShape shape;                         ///< GEMM shape; meaningful for kGemm only
  Precision precision = Precision::kBf16;  ///< compute precision of a GEMM / element format of data
  LlmPhase phase = LlmPhase::kDecode;      ///< for per-phase statistics and power attribution
  OpBlock block = OpBlock::kOther;         ///< for per-layer-kind power attribution
  double elementOps = 0.0;                 ///< element operations of a kVector op
  double specialOps = 0.0;                 ///< of elementOps, transcendental functions (the softmax's exp)
  double convertOps = 0.0;                 ///< of elementOps, weight conversions in registers (priced apart)
  /// kGemm: issued as warp-level MMA instructions (TensorCoreConfig::warpMmaRate).
  bool warpMma = false;
  /// kGemm, kVector: part of a fused kernel whose thread blocks are scheduled onto the compute
  /// units (hw/GridSchedule.h); null: the work spreads evenly. Owned by the plan, which outlives it.
  const WorkGrid* grid = nullptr;
  uint64_t requestId = 0;   ///< serving request this op belongs to (0: shared, e.g. weights)
  uint32_t layer = 0;       ///< transformer layer index (0-based; layers = LM head)
  uint64_t tokenBegin = 0;  ///< first token of a KV op's range within its request
  uint64_t tokenCount = 0;  ///< tokens of a KV op's range
  int32_t srcChip = 0;      ///< chip that issued the transaction
  int32_t dstChip = 0;      ///< chip that serves it (kSend: the receiving chip)
  /// kSend of a mirrored collective group (runtime::CollectiveGroup): not null, the message
  /// stands for one from every chip of the list, in list order, to the chip `rotationShift`
  /// places after it in the list (srcChip is the list's first, dstChip the one it sends to). Only
  /// a switch (hw::Switch) serves it; the list outlives the transaction. With `rotations` > 1 it
  /// stands for that many such rotations, by rotationShift, rotationShift + 1, ..., sent one
  /// after another at the same time (the rounds of a direct all-reduce); dstChip is the first's.
  const std::vector<int>* rotation = nullptr;
  int32_t rotationShift = 0;
  uint32_t rotations = 1;
  /// kSend on a fabric lane: the part stands for this many alike parts, one on each of that many
  /// alike lanes (hw::FabricInterface::setAlikeLanes), which are not simulated; a switch counts
  /// its bytes, packets and activity that many times.
  uint32_t lanes = 1;
  /// Response, kGemm and kVector: seconds the transaction waited for its unit to free up (behind
  /// another stream's work) before its own service began; set by the compute unit that served it.
  double queuedS = 0.0;

  ::tlm::tlm_extension_base* clone() const override { return new OpExtension(*this); }
  void copy_from(const ::tlm::tlm_extension_base& other) override { *this = static_cast<const OpExtension&>(other); }
};

/// The extension of a payload; throws std::logic_error if the initiator forgot to set it.
OpExtension& opOf(::tlm::tlm_generic_payload& payload);

}  // namespace scoville::tlm
