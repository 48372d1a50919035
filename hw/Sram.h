#pragma once
// On-chip SRAM (global buffer) behind a target socket. The address space is interleaved over
// `banks` by `interleave` bytes; each bank moves bandwidth/banks and serves one access at a time
// (busy-until); every access pays the fixed latency once. Addresses at or beyond the capacity get
// TLM_ADDRESS_ERROR_RESPONSE: placement must have checked capacity before (see SramConfig).

#include <systemc>
#include <vector>

#include "hw/Interleave.h"
#include "hw/SramConfig.h"
#include "hw/TimedTarget.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

/// Accepts kRead, kWrite, kKvRead and kKvAppend payloads addressed from 0 to capacity.
class Sram : public TimedTarget {
 public:
  Sram(const sc_core::sc_module_name& name, const SramConfig& config);

  const stats::Group& stats() const { return m_stats; }

 private:
  sc_core::sc_time serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) override;

  SramConfig m_config;
  std::vector<sc_core::sc_time> m_bankBusyUntil;
  std::vector<InterleavedSegment> m_segments;  // scratch
  stats::Group m_stats;
  stats::Counter& m_bytesRead;
  stats::Counter& m_bytesWritten;
  stats::Counter& m_bankBusyTime;
};

}  // namespace scoville::hw
