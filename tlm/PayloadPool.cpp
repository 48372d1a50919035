#include "tlm/PayloadPool.h"

namespace scoville::tlm {

PayloadPool::~PayloadPool() {
  // Payloads still referenced elsewhere at shutdown are owned by m_all and freed with it.
  for (auto& payload : m_all) payload->set_mm(nullptr);
}

::tlm::tlm_generic_payload& PayloadPool::allocate() {
  ::tlm::tlm_generic_payload* payload = nullptr;
  if (m_free.empty()) {
    m_all.push_back(std::make_unique<::tlm::tlm_generic_payload>(this));
    payload = m_all.back().get();
    payload->set_extension(new OpExtension());  // owned by the payload, deleted with it
  } else {
    payload = m_free.back();
    m_free.pop_back();
    *payload->get_extension<OpExtension>() = OpExtension();
  }
  payload->set_command(::tlm::TLM_IGNORE_COMMAND);
  payload->set_address(0);
  payload->set_data_ptr(nullptr);
  payload->set_data_length(0);
  payload->set_byte_enable_ptr(nullptr);
  payload->set_byte_enable_length(0);
  payload->set_streaming_width(0);
  payload->set_dmi_allowed(false);
  payload->set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
  payload->acquire();
  return *payload;
}

void PayloadPool::free(::tlm::tlm_generic_payload* payload) {
  m_free.push_back(payload);
}

}  // namespace scoville::tlm
