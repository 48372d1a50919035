#pragma once
// Issues a DecodePlan to a chip as TLM-2.0 transactions and records when each op ran.
//
// Two SC_THREADs model the chip's two streams: the load stream issues each op's memory
// transactions in order; the compute stream runs each op's GEMM once that op's data has arrived.
// They are coupled by a FIFO of depth kPrefetchDepth (operands of the next op load while the
// current one computes; double buffering in on-chip SRAM), so the step time emerges from the
// memory controller and tensor core timing and their overlap, never from arithmetic here.

#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "tlm/PayloadPool.h"
#include "workloads/DecodePlan.h"

namespace scoville::workload {

class DecodeDriver : public sc_core::sc_module {
 public:
  /// Ops whose operands may be loaded ahead of the op being computed.
  static constexpr int kPrefetchDepth = 2;

  tlm_utils::simple_initiator_socket<DecodeDriver> socket;

  struct OpTiming {
    sc_core::sc_time loadStart, loadEnd, computeStart, computeEnd;
  };

  DecodeDriver(const sc_core::sc_module_name& name, DecodePlan plan);
  DecodeDriver(const DecodeDriver&) = delete;
  DecodeDriver& operator=(const DecodeDriver&) = delete;

  const DecodePlan& plan() const { return m_plan; }
  const std::vector<OpTiming>& timings() const { return m_timings; }
  /// True once every op has computed.
  bool finished() const { return m_finished; }
  /// Time from the first load to the last compute.
  sc_core::sc_time stepTime() const { return m_stepTime; }
  /// Non-empty when a target answered with an error response; the run is then invalid.
  const std::string& error() const { return m_error; }

 private:
  void loadStream();
  void computeStream();
  bool issue(tlm::OpKind kind, uint64_t address, uint64_t bytes, const tlm::GemmShape* gemm, uint32_t layer);

  DecodePlan m_plan;
  std::vector<OpTiming> m_timings;
  sc_core::sc_fifo<std::size_t> m_ready;
  tlm::PayloadPool m_pool;
  bool m_finished = false;
  sc_core::sc_time m_stepTime;
  std::string m_error;
};

}  // namespace scoville::workload
