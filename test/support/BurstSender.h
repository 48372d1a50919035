#pragma once
// A test initiator that issues all its sends at `start` without waiting for any (a DMA engine
// with a deep queue), then stays alive until the last one has arrived. Records each send's
// arrival time (start of the call plus its annotated delay).

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <algorithm>
#include <systemc>
#include <vector>

#include "test/support/TrafficGenerator.h"
#include "tlm/PayloadPool.h"

namespace scoville::test {

class BurstSender : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<BurstSender> socket{"socket"};
  std::vector<sc_core::sc_time> arrivals;  ///< per send, in order

  BurstSender(const sc_core::sc_module_name& name, std::vector<TrafficGenerator::Request> sends,
              sc_core::sc_time start = sc_core::SC_ZERO_TIME)
      : sc_core::sc_module(name), m_sends(std::move(sends)), m_start(start) {
    SC_HAS_PROCESS(BurstSender);
    SC_THREAD(run);
  }

  const std::vector<TrafficGenerator::Request>& sends() const { return m_sends; }

 private:
  void run() {
    wait(m_start);
    sc_core::sc_time last = sc_core::SC_ZERO_TIME;
    for (const auto& s : m_sends) {
      tlm::PayloadRef payload(m_pool);
      payload.op() = s.op;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(*payload, delay);
      ASSERT_EQ(payload->get_response_status(), ::tlm::TLM_OK_RESPONSE);
      arrivals.push_back(sc_core::sc_time_stamp() + delay);
      last = std::max(last, delay);
    }
    wait(last);
  }

  std::vector<TrafficGenerator::Request> m_sends;
  sc_core::sc_time m_start;
  tlm::PayloadPool m_pool;
};

}  // namespace scoville::test
