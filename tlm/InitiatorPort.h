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

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <map>
#include <systemc>
#include <tlm>

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

  const ::tlm::tlm_generic_payload* m_requestPayload = nullptr;  // awaiting END_REQ
  sc_core::sc_event m_endRequest;
  std::map<const ::tlm::tlm_generic_payload*, sc_core::sc_event*> m_waitingForResponse;
};

}  // namespace scoville::tlm
