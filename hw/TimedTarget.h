#pragma once
// Base of Scoville's hardware targets: one target socket that speaks both timing modes.
//
// A subclass implements serve(payload, arrival): perform the transaction against the unit's own
// state (busy-until times, banks, queues) as if it arrived at `arrival`, set the response status,
// and return the absolute time its response is ready. Loosely timed, b_transport calls serve()
// with now + the annotated delay and annotates the difference. Approximately timed, BEGIN_REQ
// is admitted (admit()) and reaches startAt() at its arrival time through an AtResponder; the
// default admits everything and schedules BEGIN_RESP at serve()'s time, so for a unit without a
// request queue both modes give the same times. Units that queue, reorder and apply backpressure
// (the HBM controller) override admit() and startAt().

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "tlm/ActivityBus.h"
#include "tlm/AtResponder.h"

namespace scoville::hw {

class TimedTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<TimedTarget> socket;

  /// Sends this unit's activity events to `bus`.
  void attachActivity(const tlm::ActivityBus& bus) { m_activity.attach(bus, name()); }

  TimedTarget(const TimedTarget&) = delete;
  TimedTarget& operator=(const TimedTarget&) = delete;

 protected:
  explicit TimedTarget(const sc_core::sc_module_name& name);

  /// Serves `payload` as arriving at `arrival`; returns when its response is ready.
  virtual sc_core::sc_time serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) = 0;
  /// Approximately timed: reserves room for a request at BEGIN_REQ; false = full (backpressure).
  virtual bool admit() { return true; }
  /// Approximately timed: an admitted request at its arrival time. The default responds at
  /// serve()'s time.
  virtual void startAt(::tlm::tlm_generic_payload& payload);

  tlm::AtResponder m_at;
  tlm::ActivitySource m_activity;

 private:
  void bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  ::tlm::tlm_sync_enum nbTransportFw(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
};

}  // namespace scoville::hw
