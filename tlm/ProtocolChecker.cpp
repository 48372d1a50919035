#include "tlm/ProtocolChecker.h"

#include <systemc>

namespace scoville::tlm {

namespace {
uint64_t g_violations = 0;
uint64_t g_transactions = 0;

int phaseIndex(const ::tlm::tlm_phase& phase) {
  if (phase == ::tlm::BEGIN_REQ) return 1;
  if (phase == ::tlm::END_REQ) return 2;
  if (phase == ::tlm::BEGIN_RESP) return 3;
  if (phase == ::tlm::END_RESP) return 4;
  return -1;
}
}  // namespace

uint64_t ProtocolChecker::violations() {
  return g_violations;
}
uint64_t ProtocolChecker::checkedTransactions() {
  return g_transactions;
}

void ProtocolChecker::violation(const std::string& what) {
  ++g_violations;
  SC_REPORT_WARNING("scoville/protocol", (m_name + ": " + what).c_str());
}

void ProtocolChecker::onPhase(const ::tlm::tlm_generic_payload& payload, const ::tlm::tlm_phase& phase) {
  const int next = phaseIndex(phase);
  if (next < 0) return violation("unknown phase " + std::string(phase.get_name()));
  auto it = m_state.find(&payload);
  const int previous = it == m_state.end() ? 0 : it->second;
  // BEGIN_RESP may follow BEGIN_REQ directly (an implicit END_REQ).
  const bool ok = next == previous + 1 || (next == 3 && previous == 1);
  if (!ok) {
    violation("phase " + std::string(phase.get_name()) + " after phase index " + std::to_string(previous));
  }
  if (next == 1) {
    if (m_awaitingEndReq > 0) violation("BEGIN_REQ while another request awaits END_REQ");
    ++m_awaitingEndReq;
  }
  if ((next == 2 || next == 3) && previous == 1) --m_awaitingEndReq;
  if (next == 3) {
    if (m_awaitingEndResp > 0) violation("BEGIN_RESP while another response awaits END_RESP");
    ++m_awaitingEndResp;
  }
  if (next == 4) --m_awaitingEndResp;
  m_state[&payload] = next;
  if (next == 4) onComplete(payload);
}

void ProtocolChecker::onComplete(const ::tlm::tlm_generic_payload& payload) {
  auto it = m_state.find(&payload);
  if (it == m_state.end()) return violation("completion of an unknown transaction");
  if (it->second == 1) --m_awaitingEndReq;  // early completion by the target on BEGIN_REQ
  if (it->second == 2) violation("transaction completed after END_REQ without a response");
  if (it->second == 3) --m_awaitingEndResp;  // TLM_COMPLETED on BEGIN_RESP ends it without END_RESP
  m_state.erase(it);
  ++g_transactions;
}

}  // namespace scoville::tlm
