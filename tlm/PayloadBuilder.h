#pragma once
// The one place where an initiator's transaction gets its meaning: a PayloadBuilder collects the
// OpExtension fields of one transaction (everything not named keeps OpExtension's default) and
// its address, then takes a payload from a PayloadPool and sets all of them, the command and an
// incomplete response status at once. Every initiator that builds payloads (step driver, copy
// engine, collective group) goes through it, so a field added to OpExtension has one place to be
// filled and no initiator can leave a recycled payload's field from its previous use.
//
// The command follows from the op kind: memory writes (kWrite, kKvAppend) and fabric messages
// (kSend: data pushed to the receiving chip) are TLM_WRITE_COMMAND, GEMMs TLM_IGNORE_COMMAND, the
// rest (reads, vector ops) TLM_READ_COMMAND.
//
//   tlm::PayloadRef payload(m_pool, tlm::PayloadBuilder(tlm::OpKind::kSend).bytes(n).chips(src, dst));

#include <cstdint>
#include <tlm>
#include <vector>

#include "tlm/OpExtension.h"
#include "tlm/PayloadPool.h"

namespace scoville::tlm {

class PayloadBuilder {
 public:
  explicit PayloadBuilder(OpKind kind) { m_op.kind = kind; }

  PayloadBuilder& address(uint64_t address) {
    m_address = address;
    return *this;
  }
  PayloadBuilder& bytes(uint64_t bytes) {
    m_op.bytes = bytes;
    return *this;
  }
  PayloadBuilder& phase(LlmPhase phase) {
    m_op.phase = phase;
    return *this;
  }
  PayloadBuilder& block(OpBlock block) {
    m_op.block = block;
    return *this;
  }
  PayloadBuilder& layer(uint32_t layer) {
    m_op.layer = layer;
    return *this;
  }
  PayloadBuilder& request(uint64_t requestId) {
    m_op.requestId = requestId;
    return *this;
  }
  /// The chip that issues the transaction and the chip that serves it (kSend: the receiver).
  PayloadBuilder& chips(int32_t src, int32_t dst) {
    m_op.srcChip = src;
    m_op.dstChip = dst;
    return *this;
  }
  PayloadBuilder& precision(Precision precision) {
    m_op.precision = precision;
    return *this;
  }
  PayloadBuilder& shape(const GemmShape& shape) {
    m_op.shape = shape;
    return *this;
  }
  PayloadBuilder& elementOps(double elementOps, double specialOps = 0.0, double convertOps = 0.0) {
    m_op.elementOps = elementOps;
    m_op.specialOps = specialOps;
    m_op.convertOps = convertOps;
    return *this;
  }
  /// The fused kernel a GEMM or vector op belongs to (OpExtension::warpMma, grid).
  PayloadBuilder& kernel(bool warpMma, const WorkGrid* grid) {
    m_op.warpMma = warpMma;
    m_op.grid = grid;
    return *this;
  }
  PayloadBuilder& dataToggle(float dataToggle) {
    m_op.dataToggle = dataToggle;
    return *this;
  }
  /// A mirrored collective's message (OpExtension::rotation): `chips` must outlive the transaction.
  PayloadBuilder& rotation(const std::vector<int>* chips, int32_t shift, uint32_t rotations) {
    m_op.rotation = chips;
    m_op.rotationShift = shift;
    m_op.rotations = rotations;
    return *this;
  }

  /// The extension fields as they will be set (for messages about the transaction).
  const OpExtension& op() const { return m_op; }
  uint64_t address() const { return m_address; }
  ::tlm::tlm_command command() const;

  /// A payload from `pool` with ref count 1 (release it when done, or hold it in a PayloadRef)
  /// and every field set.
  ::tlm::tlm_generic_payload& build(PayloadPool& pool) const;

 private:
  OpExtension m_op;
  uint64_t m_address = 0;
};

}  // namespace scoville::tlm
