#include "tlm/InitiatorPort.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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
  send(payload);
  await(payload);
}

void InitiatorPort::respond(Response& response, const sc_core::sc_time& delay) {
  response.at = sc_core::sc_time_stamp() + delay;
  response.known = true;
  m_responseKnown.notify(delay);
}

InitiatorPort::SentList::iterator InitiatorPort::sentEntry(const ::tlm::tlm_generic_payload& payload) {
  return std::find_if(m_responses.begin(), m_responses.end(),
                      [&payload](const auto& entry) { return entry.first == &payload; });
}

InitiatorPort::Response* InitiatorPort::responseOf(const ::tlm::tlm_generic_payload& payload) {
  const auto it = sentEntry(payload);
  return it == m_responses.end() ? nullptr : &it->second;
}

void InitiatorPort::send(::tlm::tlm_generic_payload& payload) {
  if (responseOf(payload) != nullptr) throw std::logic_error(std::string(name()) + ": send() of a payload in flight");
  if (m_mode == TimingMode::kLooselyTimed) {
    sc_core::sc_time delay = m_quantumKeeper.get_local_time();
    socket->b_transport(payload, delay);
    m_responses.emplace_back(&payload, Response{sc_core::sc_time_stamp() + delay, true});
    return;
  }
  while (m_requestPayload != nullptr) wait(m_endRequest);
  m_responses.emplace_back(&payload, Response{});
  m_requestPayload = &payload;
  ::tlm::tlm_phase phase = ::tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  m_checker.onPhase(payload, phase);
  const ::tlm::tlm_sync_enum status = socket->nb_transport_fw(payload, phase, delay);
  if (status == ::tlm::TLM_COMPLETED) {
    m_checker.onComplete(payload);
    respond(*responseOf(payload), delay);
  } else if (status == ::tlm::TLM_UPDATED) {
    m_checker.onPhase(payload, phase);
    if (phase == ::tlm::BEGIN_RESP) {
      respond(*responseOf(payload), delay);
      ::tlm::tlm_phase endResponse = ::tlm::END_RESP;
      sc_core::sc_time none = sc_core::SC_ZERO_TIME;
      m_checker.onPhase(payload, endResponse);
      socket->nb_transport_fw(payload, endResponse, none);
    }
  }
  if (status != ::tlm::TLM_ACCEPTED) endRequest(payload, delay);
}

sc_core::sc_time InitiatorPort::await(const ::tlm::tlm_generic_payload& payload) {
  auto it = sentEntry(payload);
  if (it == m_responses.end()) throw std::logic_error(std::string(name()) + ": await() of a payload not sent");
  // Responses come in on the backward path (AT); the event may fire for another request's. (The
  // list may change while waiting: look the response up again.)
  while (!it->second.known) {
    wait(m_responseKnown);
    it = sentEntry(payload);
  }
  const sc_core::sc_time at = it->second.at;
  m_responses.erase(it);
  if (at > sc_core::sc_time_stamp()) wait(at - sc_core::sc_time_stamp());
  return at;
}

const ::tlm::tlm_generic_payload* InitiatorPort::awaitAny(sc_core::sc_time& at) {
  if (m_responses.empty()) throw std::logic_error(std::string(name()) + ": awaitAny() with nothing in flight");
  for (;;) {
    auto best = m_responses.end();
    for (auto it = m_responses.begin(); it != m_responses.end(); ++it) {
      if (it->second.known && (best == m_responses.end() || it->second.at < best->second.at)) best = it;
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (best != m_responses.end() && best->second.at <= now) {
      const ::tlm::tlm_generic_payload* payload = best->first;
      at = best->second.at;
      m_responses.erase(best);
      return payload;
    }
    // A response learnt while waiting may come in earlier than the best known one.
    if (best != m_responses.end()) {
      wait(best->second.at - now, m_responseKnown);
    } else {
      wait(m_responseKnown);
    }
  }
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
    if (Response* response = responseOf(payload)) respond(*response, delay);
    return ::tlm::TLM_COMPLETED;
  }
  return ::tlm::TLM_ACCEPTED;
}

}  // namespace scoville::tlm
