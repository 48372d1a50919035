#include "hw/ChipInterconnect.h"

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

ChipInterconnect::ChipInterconnect(const sc_core::sc_module_name& name, const InterconnectConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      toMemory("to_memory"),
      toTensorCore("to_tensor_core"),
      m_hopLatency(tlm::durationCeil(config.hopLatencyS)),
      m_stats("interconnect", "on-chip network"),
      m_toMemory(m_stats.counter("to_memory", "", "transactions routed to HBM")),
      m_toTensorCore(m_stats.counter("to_tensor_core", "", "transactions routed to the tensor core")) {
  socket.register_b_transport(this, &ChipInterconnect::bTransport);
}

void ChipInterconnect::bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  delay += m_hopLatency;
  switch (tlm::opOf(payload).kind) {
    case tlm::OpKind::kGemm:
      m_toTensorCore.add();
      toTensorCore->b_transport(payload, delay);
      break;
    case tlm::OpKind::kRead:
    case tlm::OpKind::kWrite:
    case tlm::OpKind::kKvRead:
    case tlm::OpKind::kKvAppend:
      m_toMemory.add();
      toMemory->b_transport(payload, delay);
      break;
    case tlm::OpKind::kVector:
    case tlm::OpKind::kSend:
      payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);  // no such unit on this chip yet
      break;
  }
  delay += m_hopLatency;
}

}  // namespace scoville::hw
