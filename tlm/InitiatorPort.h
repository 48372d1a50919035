#pragma once
// The initiator side of Scoville's transactions, in either timing mode, behind one blocking call.
//
// transport(payload) blocks the calling SC_THREAD until the payload's response has arrived:
//   - loosely timed: b_transport; the annotated delay is added to a tlm_quantumkeeper and the
//     thread only yields when the quantum is used up (call sync() before talking to other
//     threads, so that their view of time is right);
//   - approximately timed: nb_transport_fw(BEGIN_REQ), waiting for END_REQ when the target
//     applies backpressure, then for BEGIN_RESP, which is answered with TLM_COMPLETED. Several
//     threads may share one port; requests are serialised until END_REQ (request exclusion).
// Every phase passes a ProtocolChecker.
//
// send(payload) + await(payload) split transport() for an initiator with several requests in
// flight (a DMA engine): send() issues the request and returns without waiting for the response
// (LT: the target runs at the current local time, which does not advance; AT: BEGIN_REQ, after
// END_REQ of the previous request); await(), from any thread, blocks until that response is in.

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "tlm/ProtocolChecker.h"
#include "tlm/TimingMode.h"

namespace scoville::tlm {

class InitiatorPort : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<InitiatorPort> socket;

  InitiatorPort(const sc_core::sc_module_name& name, TimingMode mode, sc_core::sc_time quantum);
  InitiatorPort(const InitiatorPort&) = delete;
  InitiatorPort& operator=(const InitiatorPort&) = delete;

  /// Sends `payload` and returns once its response is in (local time included in LT).
  void transport(::tlm::tlm_generic_payload& payload);
  /// Issues `payload` and returns without waiting for its response; await() it before releasing
  /// or reusing the payload.
  void send(::tlm::tlm_generic_payload& payload);
  /// Blocks the calling thread until the response to `payload` (issued by send()) is in; returns
  /// the time it came in.
  sc_core::sc_time await(const ::tlm::tlm_generic_payload& payload);
  /// Blocks the calling thread until the earliest response of those issued by send() is in (in
  /// any order of sending); returns its payload and stores when it came in. Needs a payload in
  /// flight.
  const ::tlm::tlm_generic_payload* awaitAny(sc_core::sc_time& at);
  /// LT: yields until local time has caught up (no-op in AT).
  void sync();
  /// Current time including the LT local offset.
  sc_core::sc_time localTime() const;
  TimingMode mode() const { return m_mode; }

 private:
  ::tlm::tlm_sync_enum nbTransportBw(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);

  TimingMode m_mode;
  tlm_utils::tlm_quantumkeeper m_quantumKeeper;
  ProtocolChecker m_checker;
  void endRequest(const ::tlm::tlm_generic_payload& payload, const sc_core::sc_time& delay);

  /// A sent request's response: when it comes (or came) in, once known.
  struct Response {
    sc_core::sc_time at;
    bool known = false;
  };
  void respond(Response& response, const sc_core::sc_time& delay);

  const ::tlm::tlm_generic_payload* m_requestPayload = nullptr;  // awaiting END_REQ
  sc_core::sc_event m_endRequest;
  /// Sent, not yet awaited, oldest first (a handful at a time: searched linearly).
  using SentList = std::vector<std::pair<const ::tlm::tlm_generic_payload*, Response>>;
  SentList m_responses;
  /// `payload`'s entry in m_responses, or end().
  SentList::iterator sentEntry(const ::tlm::tlm_generic_payload& payload);
  Response* responseOf(const ::tlm::tlm_generic_payload& payload);
  sc_core::sc_event m_responseKnown;  // some Response became known (AT)
};

}  // namespace scoville::tlm
