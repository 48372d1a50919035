#include "tlm/InitiatorPort.h"

namespace scoville::tlm {

InitiatorPort::InitiatorPort(const sc_core::sc_module_name& name, TimingMode mode, sc_core::sc_time quantum)
    : sc_core::sc_module(name), socket("socket"), m_mode(mode), m_checker(std::string(basename()) + ".socket") {
  socket.register_nb_transport_bw(this, &InitiatorPort::nbTransportBw);
  tlm_utils::tlm_quantumkeeper::set_global_quantum(quantum);
  m_quantumKeeper.reset();
}

sc_core::sc_time InitiatorPort::localTime() const {
  return m_quantumKeeper.get_current_time();
}

void InitiatorPort::sync() {
  if (m_mode == TimingMode::kLooselyTimed) m_quantumKeeper.sync();
}

void InitiatorPort::transport(::tlm::tlm_generic_payload& payload) {
  if (m_mode == TimingMode::kLooselyTimed) {
    sc_core::sc_time delay = m_quantumKeeper.get_local_time();
    socket->b_transport(payload, delay);
    m_quantumKeeper.set(delay);
    if (m_quantumKeeper.need_sync()) m_quantumKeeper.sync();
    return;
  }

  while (m_requestPayload != nullptr) wait(m_endRequest);
  sc_core::sc_event responded;
  m_waitingForResponse[&payload] = &responded;
  m_requestPayload = &payload;
  ::tlm::tlm_phase phase = ::tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  m_checker.onPhase(payload, phase);
  const ::tlm::tlm_sync_enum status = socket->nb_transport_fw(payload, phase, delay);
  bool responseIn = false;
  if (status == ::tlm::TLM_COMPLETED) {
    m_checker.onComplete(payload);
    responseIn = true;
  } else if (status == ::tlm::TLM_UPDATED) {
    m_checker.onPhase(payload, phase);
    if (phase == ::tlm::BEGIN_RESP) {
      responseIn = true;
      ::tlm::tlm_phase endResponse = ::tlm::END_RESP;
      sc_core::sc_time none = sc_core::SC_ZERO_TIME;
      m_checker.onPhase(payload, endResponse);
      socket->nb_transport_fw(payload, endResponse, none);
    }
  }
  if (status != ::tlm::TLM_ACCEPTED) endRequest(payload, delay);
  if (responseIn) {
    wait(delay);
  } else {
    wait(responded);
  }
  m_waitingForResponse.erase(&payload);
}

void InitiatorPort::endRequest(const ::tlm::tlm_generic_payload& payload, const sc_core::sc_time& delay) {
  if (m_requestPayload == &payload) {
    m_requestPayload = nullptr;
    m_endRequest.notify(delay);
  }
}

::tlm::tlm_sync_enum InitiatorPort::nbTransportBw(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
  m_checker.onPhase(payload, phase);
  if (phase == ::tlm::END_REQ || phase == ::tlm::BEGIN_RESP) endRequest(payload, delay);
  if (phase == ::tlm::BEGIN_RESP) {
    m_checker.onComplete(payload);
    auto it = m_waitingForResponse.find(&payload);
    if (it != m_waitingForResponse.end()) it->second->notify(delay);
    return ::tlm::TLM_COMPLETED;
  }
  return ::tlm::TLM_ACCEPTED;
}

}  // namespace scoville::tlm
