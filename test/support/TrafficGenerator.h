#pragma once
// A test initiator: issues a list of transactions, each no earlier than its release time and
// after the previous one completed, and records when each completed.

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <functional>
#include <systemc>
#include <tlm>
#include <vector>

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

  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;

  TrafficGenerator(const sc_core::sc_module_name& name, std::vector<Request> requests)
      : sc_core::sc_module(name), socket("socket"), m_requests(std::move(requests)) {
    SC_HAS_PROCESS(TrafficGenerator);
    SC_THREAD(run);
  }

  const std::vector<Completion>& completions() const { return m_completions; }
  sc_core::sc_time lastEnd() const { return m_completions.empty() ? sc_core::SC_ZERO_TIME : m_completions.back().end; }

 private:
  void run() {
    for (const Request& request : m_requests) {
      if (sc_core::sc_time_stamp() < request.release) wait(request.release - sc_core::sc_time_stamp());
      tlm::PayloadRef payload(m_pool);
      payload.op() = request.op;
      payload->set_address(request.address);
      payload->set_command(request.op.kind == tlm::OpKind::kWrite ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
      Completion c;
      c.start = sc_core::sc_time_stamp();
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(*payload, delay);
      wait(delay);
      c.end = sc_core::sc_time_stamp();
      c.status = payload->get_response_status();
      m_completions.push_back(c);
    }
  }

  std::vector<Request> m_requests;
  std::vector<Completion> m_completions;
  tlm::PayloadPool m_pool;
};

/// Joins two initiators onto one target socket (simple_target_socket takes one initiator).
class FanIn : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<FanIn> in0{"in0"};
  tlm_utils::simple_target_socket<FanIn> in1{"in1"};
  tlm_utils::simple_initiator_socket<FanIn> out{"out"};

  explicit FanIn(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
    in0.register_b_transport(this, &FanIn::forward);
    in1.register_b_transport(this, &FanIn::forward);
  }

 private:
  void forward(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) { out->b_transport(payload, delay); }
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
