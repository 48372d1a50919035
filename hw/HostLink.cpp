#include "hw/HostLink.h"

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

HostLink::HostLink(const sc_core::sc_module_name& name, int chip, const HostLinkConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      m_chip(chip),
      m_config(config),
      m_latency(tlm::durationCeil(config.latencyS)),
      m_stats(basename(), fmt::format("host link of chip {} and its share of host memory", chip)),
      m_bytesToHost(m_stats.counter("bytes_to_host", "B", "bytes written to host memory")),
      m_bytesToChip(m_stats.counter("bytes_to_chip", "B", "bytes read from host memory")),
      m_transfers(m_stats.counter("transfers", "", "transactions served")),
      m_toHostBusy(m_stats.counter("to_host_busy_time", "s", "time the chip-to-host direction moved data")),
      m_toChipBusy(m_stats.counter("to_chip_busy_time", "s", "time the host-to-chip direction moved data")) {
  if (!(config.bandwidthBytesPerS > 0) || config.latencyS < 0) {
    throw std::invalid_argument(fmt::format("host link of chip {}: bandwidth must be > 0 and latency >= 0", chip));
  }
  socket.register_b_transport(this, &HostLink::bTransport);
  m_stats.formula("memory_capacity", "B", "host memory this chip may address",
                  [this] { return static_cast<double>(m_config.memoryBytes); });
}

void HostLink::bTransport(int /*initiator*/, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  const bool write = payload.is_write();
  if (!write && !payload.is_read()) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const uint64_t address = payload.get_address();
  if (op.bytes == 0 || address >= m_config.memoryBytes || op.bytes > m_config.memoryBytes - address) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const double transferS = static_cast<double>(op.bytes) / m_config.bandwidthBytesPerS;
  // A read's request crosses to the host before its data can start back.
  const sc_core::sc_time ready = now + delay + (write ? sc_core::SC_ZERO_TIME : m_latency);
  sc_core::sc_time& busy = write ? m_toHostBusyUntil : m_toChipBusyUntil;
  const sc_core::sc_time start = std::max(ready, busy);
  busy = start + tlm::durationCeil(transferS);
  const sc_core::sc_time landed = busy + m_latency;
  (write ? m_bytesToHost : m_bytesToChip).add(static_cast<double>(op.bytes));
  (write ? m_toHostBusy : m_toChipBusy).add(transferS);
  m_transfers.add();
  m_activity.emit(tlm::Activity::kLinkBytes, static_cast<double>(op.bytes), op, start, busy);
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  delay = landed - now;
}

}  // namespace scoville::hw
