#include "tlm/PayloadBuilder.h"

namespace scoville::tlm {

::tlm::tlm_command PayloadBuilder::command() const {
  if (isMemoryWrite(m_op.kind) || m_op.kind == OpKind::kSend) return ::tlm::TLM_WRITE_COMMAND;
  if (m_op.kind == OpKind::kGemm || m_op.kind == OpKind::kLaunch) return ::tlm::TLM_IGNORE_COMMAND;
  return ::tlm::TLM_READ_COMMAND;
}

::tlm::tlm_generic_payload& PayloadBuilder::build(PayloadPool& pool) const {
  ::tlm::tlm_generic_payload& payload = pool.allocate();
  opOf(payload) = m_op;
  payload.set_command(command());
  payload.set_address(m_address);
  payload.set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
  return payload;
}

}  // namespace scoville::tlm
