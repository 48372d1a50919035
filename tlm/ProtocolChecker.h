#pragma once
// Checks the TLM-2.0 base-protocol rules Scoville relies on, in the sockets' own code paths
// (Accellera's tlm2_base_protocol_checker is not in Debian's package). Each payload's phase
// must advance BEGIN_REQ -> END_REQ -> BEGIN_RESP -> (END_RESP | TLM_COMPLETED); a socket may
// not send BEGIN_REQ while an earlier request on it awaits END_REQ (request exclusion), nor
// BEGIN_RESP while an earlier response awaits END_RESP (response exclusion). Violations are
// counted process-wide and reported as SystemC warnings (which fail tests).

#include <cstdint>
#include <string>
#include <tlm>
#include <unordered_map>

namespace scoville::tlm {

class ProtocolChecker {
 public:
  explicit ProtocolChecker(std::string socketName) : m_name(std::move(socketName)) {}

  /// Records that `phase` is sent for `payload` on this socket; checks the transition.
  void onPhase(const ::tlm::tlm_generic_payload& payload, const ::tlm::tlm_phase& phase);
  /// Records that the transaction of `payload` ended (END_RESP or TLM_COMPLETED).
  void onComplete(const ::tlm::tlm_generic_payload& payload);

  /// Violations seen by all checkers in this process.
  static uint64_t violations();
  /// Transactions completed through all checkers in this process.
  static uint64_t checkedTransactions();

 private:
  void violation(const std::string& what);

  std::string m_name;
  std::unordered_map<const ::tlm::tlm_generic_payload*, int> m_state;  // index of the last phase
  int m_awaitingEndReq = 0;
  int m_awaitingEndResp = 0;
};

}  // namespace scoville::tlm
