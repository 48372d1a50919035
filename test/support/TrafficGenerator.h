#pragma once
// A test initiator: issues a list of transactions, each no earlier than its release time and
// after the previous one completed, in either timing mode, and records when each completed.

#include <systemc>
#include <tlm>
#include <vector>

#include "tlm/InitiatorPort.h"
#include "tlm/PayloadPool.h"

namespace scoville::test {

class TrafficGenerator : public sc_core::sc_module {
 public:
  struct Request {
    tlm::OpExtension op;
    uint64_t address = 0;
    sc_core::sc_time release = sc_core::SC_ZERO_TIME;
  };
  struct Completion {
    sc_core::sc_time start, end;
    ::tlm::tlm_response_status status = ::tlm::TLM_INCOMPLETE_RESPONSE;
  };

  tlm::InitiatorPort port;
  /// The port's initiator socket (bind it, or call bind()).
  tlm_utils::simple_initiator_socket<tlm::InitiatorPort>& socket;

  TrafficGenerator(const sc_core::sc_module_name& name, std::vector<Request> requests,
                   tlm::TimingMode mode = tlm::TimingMode::kLooselyTimed)
      : sc_core::sc_module(name),
        port("port", mode, sc_core::sc_time(1, sc_core::SC_US)),
        socket(port.socket),
        m_requests(std::move(requests)) {
    SC_HAS_PROCESS(TrafficGenerator);
    SC_THREAD(run);
  }

  /// Binds the generator's socket to a target socket.
  template <class Target>
  void bind(Target& target) {
    port.socket.bind(target);
  }

  const std::vector<Completion>& completions() const { return m_completions; }
  sc_core::sc_time lastEnd() const { return m_completions.empty() ? sc_core::SC_ZERO_TIME : m_completions.back().end; }

 private:
  void run() {
    for (const Request& request : m_requests) {
      if (port.localTime() < request.release) {
        port.sync();
        wait(request.release - sc_core::sc_time_stamp());
      }
      tlm::PayloadRef payload(m_pool);
      payload.op() = request.op;
      payload->set_address(request.address);
      payload->set_command(request.op.kind == tlm::OpKind::kWrite ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
      Completion c;
      c.start = port.localTime();
      port.transport(*payload);
      c.end = port.localTime();
      c.status = payload->get_response_status();
      m_completions.push_back(c);
    }
    port.sync();
  }

  std::vector<Request> m_requests;
  std::vector<Completion> m_completions;
  tlm::PayloadPool m_pool;
};

/// A memory request of `bytes` at `address`.
inline TrafficGenerator::Request memoryRequest(tlm::OpKind kind, uint64_t address, uint64_t bytes) {
  TrafficGenerator::Request r;
  r.op.kind = kind;
  r.op.bytes = bytes;
  r.address = address;
  return r;
}

/// A GEMM request.
inline TrafficGenerator::Request gemmRequest(uint64_t m, uint64_t n, uint64_t k, tlm::Precision p) {
  TrafficGenerator::Request r;
  r.op.kind = tlm::OpKind::kGemm;
  r.op.shape = tlm::GemmShape{m, n, k, 1};
  r.op.precision = p;
  return r;
}

}  // namespace scoville::test
