#pragma once
// Target-side base protocol for approximately-timed mode, shared by Scoville's targets.
//
// A target forwards its nb_transport_fw calls here. On BEGIN_REQ the target's `admit` callback
// decides at once whether it has room (and reserves it): if so the call returns TLM_UPDATED with
// END_REQ; if not it returns TLM_ACCEPTED and the request waits, in order, until the target calls
// retry() — END_REQ is then sent on the backward path (backpressure). An admitted request reaches
// the target's `start` callback at its annotated arrival time (through a payload event queue).
// The target calls respond(payload, when) once it knows when the response is ready; BEGIN_RESP
// is sent then, one at a time (response exclusion: the next waits for the previous END_RESP or
// TLM_COMPLETED).

#include <tlm_utils/peq_with_cb_and_phase.h>
#include <deque>
#include <functional>
#include <systemc>
#include <tlm>

#include "tlm/ProtocolChecker.h"

namespace scoville::tlm {

class AtResponder : public sc_core::sc_module {
 public:
  /// The target's nb_transport_bw towards the initiator.
  using Backward =
      std::function<::tlm::tlm_sync_enum(::tlm::tlm_generic_payload&, ::tlm::tlm_phase&, sc_core::sc_time&)>;
  /// Reserves room for one more request; false when the target is full.
  using Admit = std::function<bool()>;
  /// Called at an admitted request's arrival time.
  using Start = std::function<void(::tlm::tlm_generic_payload&)>;

  AtResponder(const sc_core::sc_module_name& name, Backward backward, Admit admit, Start start);
  AtResponder(const AtResponder&) = delete;
  AtResponder& operator=(const AtResponder&) = delete;

  /// The target's nb_transport_fw body.
  ::tlm::tlm_sync_enum forward(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase, sc_core::sc_time& delay);
  /// Schedules BEGIN_RESP for `payload` at absolute time `when` (>= now).
  void respond(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& when);
  /// Admits waiting requests while the target has room, oldest first.
  void retry();

 private:
  void onPhase(::tlm::tlm_generic_payload& payload, const ::tlm::tlm_phase& phase);
  void sendResponse(::tlm::tlm_generic_payload& payload);
  void responseDone();

  Backward m_backward;
  Admit m_admit;
  Start m_start;
  tlm_utils::peq_with_cb_and_phase<AtResponder> m_peq;
  ProtocolChecker m_checker;
  std::deque<::tlm::tlm_generic_payload*> m_refused;
  std::deque<::tlm::tlm_generic_payload*> m_readyResponses;
  bool m_responseInFlight = false;
};

}  // namespace scoville::tlm
