#pragma once
// A chip's host link (PCIe/CXL) and its share of the host memory behind it: the path of KV-cache
// swap traffic between the chip and the host.
//
// Timing (loosely timed, b_transport only, in either run mode, like the inter-chip fabric): the
// link is full duplex, each direction one transfer at a time at `bandwidth` (busy-until). A write
// (TLM_WRITE_COMMAND: chip -> host) starts when it arrives and the chip-to-host direction is free,
// and completes `latency` after its last byte left. A read (host -> chip) first sends its request
// to the host (`latency`), then its data starts when the host-to-chip direction is free and lands
// `latency` after its last byte. The host DRAM is assumed faster than the link (a two-socket DDR5
// host moves several hundred GB/s against 64 GB/s per PCIe Gen5 x16 link) and adds no time.
//
// Addresses are host-memory addresses from 0 within the chip's share (`memoryBytes`); a transfer
// outside it gets TLM_ADDRESS_ERROR_RESPONSE, a payload that is neither a read nor a write
// TLM_COMMAND_ERROR_RESPONSE. The transfer size is OpExtension::bytes.

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <cstdint>
#include <systemc>
#include <tlm>

#include "stats/StatsGroup.h"
#include "tlm/ActivityBus.h"

namespace scoville::hw {

struct HostLinkConfig {
  double bandwidthBytesPerS = 0.0;  ///< per direction, > 0
  double latencyS = 0.0;            ///< one way, >= 0
  uint64_t memoryBytes = 0;         ///< host memory this chip may address (its share of the host)
};

class HostLink : public sc_core::sc_module {
 public:
  /// Any number of initiators (the chip's copy engines) may bind, or none.
  tlm_utils::multi_passthrough_target_socket<HostLink, 32, ::tlm::tlm_base_protocol_types, 0,
                                             sc_core::SC_ZERO_OR_MORE_BOUND>
      socket;

  /// Throws std::invalid_argument for a bandwidth that is not positive or a negative latency.
  HostLink(const sc_core::sc_module_name& name, int chip, const HostLinkConfig& config);
  HostLink(const HostLink&) = delete;
  HostLink& operator=(const HostLink&) = delete;

  int chip() const { return m_chip; }
  const HostLinkConfig& config() const { return m_config; }
  const stats::Group& stats() const { return m_stats; }
  /// Sends the link's activity (kLinkBytes per direction) to `bus`.
  void attachActivity(const tlm::ActivityBus& bus) { m_activity.attach(bus, name()); }

 private:
  void bTransport(int initiator, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  int m_chip;
  HostLinkConfig m_config;
  sc_core::sc_time m_latency;
  sc_core::sc_time m_toHostBusyUntil;
  sc_core::sc_time m_toChipBusyUntil;
  tlm::ActivitySource m_activity;
  stats::Group m_stats;
  stats::Counter& m_bytesToHost;
  stats::Counter& m_bytesToChip;
  stats::Counter& m_transfers;
  stats::Counter& m_toHostBusy;
  stats::Counter& m_toChipBusy;
};

}  // namespace scoville::hw
