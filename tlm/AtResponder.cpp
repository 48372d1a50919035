#include "tlm/AtResponder.h"

namespace scoville::tlm {

namespace {
// An internal phase: "the response of this payload is ready" (scheduled by respond()).
DECLARE_EXTENDED_PHASE(kResponseReady);
}  // namespace

AtResponder::AtResponder(const sc_core::sc_module_name& name, Backward backward, Admit admit, Start start)
    : sc_core::sc_module(name),
      m_backward(std::move(backward)),
      m_admit(std::move(admit)),
      m_start(std::move(start)),
      m_peq(this, &AtResponder::onPhase),
      m_checker(std::string(basename())) {}

::tlm::tlm_sync_enum AtResponder::forward(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                          sc_core::sc_time& delay) {
  if (phase == ::tlm::BEGIN_REQ) {
    payload.acquire();  // held until the response is sent
    m_checker.onPhase(payload, phase);
    if (m_refused.empty() && m_admit()) {
      m_peq.notify(payload, phase, delay);
      phase = ::tlm::END_REQ;
      m_checker.onPhase(payload, phase);
      return ::tlm::TLM_UPDATED;
    }
    m_refused.push_back(&payload);
    return ::tlm::TLM_ACCEPTED;
  }
  if (phase == ::tlm::END_RESP) {
    m_checker.onPhase(payload, phase);
    responseDone();
    return ::tlm::TLM_COMPLETED;
  }
  SC_REPORT_WARNING("scoville/protocol", "unexpected phase on a target's forward path");
  return ::tlm::TLM_COMPLETED;
}

void AtResponder::onPhase(::tlm::tlm_generic_payload& payload, const ::tlm::tlm_phase& phase) {
  if (phase == ::tlm::BEGIN_REQ) {
    m_start(payload);
  } else if (phase == kResponseReady) {
    m_readyResponses.push_back(&payload);
    if (!m_responseInFlight) sendResponse(*m_readyResponses.front());
  }
}

void AtResponder::retry() {
  while (!m_refused.empty() && m_admit()) {
    ::tlm::tlm_generic_payload& payload = *m_refused.front();
    m_refused.pop_front();
    ::tlm::tlm_phase endRequest = ::tlm::END_REQ;
    sc_core::sc_time none = sc_core::SC_ZERO_TIME;
    m_checker.onPhase(payload, endRequest);
    m_backward(payload, endRequest, none);
    m_peq.notify(payload, ::tlm::BEGIN_REQ, sc_core::SC_ZERO_TIME);
  }
}

void AtResponder::respond(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& when) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  m_peq.notify(payload, kResponseReady, when > now ? when - now : sc_core::SC_ZERO_TIME);
}

void AtResponder::sendResponse(::tlm::tlm_generic_payload& payload) {
  m_responseInFlight = true;
  ::tlm::tlm_phase phase = ::tlm::BEGIN_RESP;
  sc_core::sc_time none = sc_core::SC_ZERO_TIME;
  m_checker.onPhase(payload, phase);
  const ::tlm::tlm_sync_enum status = m_backward(payload, phase, none);
  if (status == ::tlm::TLM_COMPLETED) {
    m_checker.onComplete(payload);
    responseDone();
  } else if (status == ::tlm::TLM_UPDATED && phase == ::tlm::END_RESP) {
    m_checker.onPhase(payload, phase);
    responseDone();
  }
}

void AtResponder::responseDone() {
  ::tlm::tlm_generic_payload* done = m_readyResponses.front();
  m_readyResponses.pop_front();
  m_responseInFlight = false;
  done->release();
  if (!m_readyResponses.empty()) sendResponse(*m_readyResponses.front());
}

}  // namespace scoville::tlm
