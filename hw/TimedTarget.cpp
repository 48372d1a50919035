#include "hw/TimedTarget.h"

#include "tlm/TransactionCount.h"

namespace scoville::hw {

TimedTarget::TimedTarget(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name),
      socket("socket"),
      m_at(
          "at",
          [this](::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& phase, sc_core::sc_time& delay) {
            return socket->nb_transport_bw(p, phase, delay);
          },
          [this] { return admit(); }, [this](::tlm::tlm_generic_payload& p) { startAt(p); }) {
  socket.register_b_transport(this, &TimedTarget::bTransport);
  socket.register_nb_transport_fw(this, &TimedTarget::nbTransportFw);
}

void TimedTarget::startAt(::tlm::tlm_generic_payload& payload) {
  m_at.respond(payload, serve(payload, sc_core::sc_time_stamp()));
}

void TimedTarget::bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  ++tlm::unitTransactions();
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time ready = serve(payload, now + delay);
  delay = ready > now ? ready - now : sc_core::SC_ZERO_TIME;
}

::tlm::tlm_sync_enum TimedTarget::nbTransportFw(::tlm::tlm_generic_payload& payload, ::tlm::tlm_phase& phase,
                                                sc_core::sc_time& delay) {
  if (phase == ::tlm::BEGIN_REQ) ++tlm::unitTransactions();
  return m_at.forward(payload, phase, delay);
}

}  // namespace scoville::hw
