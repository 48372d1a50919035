#pragma once
// HBM memory controller behind a TLM-2.0 target socket.
//
// Timing model: a transfer of `bytes` at `address` is split across channels by the interleave
// granule (granule g of the address space lives on channel g mod channels). Each channel moves
// data at bandwidth/channels and serves one transfer at a time in arrival order (FCFS), tracked by
// a per-channel busy-until time; the access latency is added once per request and overlaps other
// requests. A long sequential stream therefore keeps every channel busy and reaches peak; two
// streams arriving together share the channels; a small access touches one channel and pays the
// full latency. Bank, row-buffer and refresh timing are not modelled yet.

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/MemoryControllerConfig.h"
#include "tlm/OpExtension.h"
#include "tlm/stats/StatsGroup.h"

namespace scoville::hw {

class MemoryController : public sc_core::sc_module {
 public:
  /// Accepts kRead, kWrite, kKvRead and kKvAppend payloads; size is OpExtension::bytes.
  tlm_utils::simple_target_socket<MemoryController> socket;

  MemoryController(const sc_core::sc_module_name& name, const MemoryControllerConfig& config);
  MemoryController(const MemoryController&) = delete;
  MemoryController& operator=(const MemoryController&) = delete;

  const MemoryControllerConfig& config() const { return m_config; }
  const stats::Group& stats() const { return m_stats; }

  /// Bytes of [address, address + bytes) that fall on each channel (size = channels).
  static void splitAcrossChannels(const MemoryControllerConfig& config, uint64_t address, uint64_t bytes,
                                  std::vector<uint64_t>& perChannel);

 private:
  void bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  MemoryControllerConfig m_config;
  std::vector<sc_core::sc_time> m_channelBusyUntil;
  std::vector<uint64_t> m_scratch;

  stats::Group m_stats;
  stats::Counter& m_reads;
  stats::Counter& m_writes;
  stats::Counter& m_bytesRead;
  stats::Counter& m_bytesWritten;
  stats::Counter& m_kvBytesRead;
  stats::Counter& m_kvBytesWritten;
  stats::Counter& m_channelBusyTime;
  stats::Counter& m_queueTime;
};

}  // namespace scoville::hw
