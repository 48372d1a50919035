#include "hw/Sram.h"

#include <algorithm>

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

Sram::Sram(const sc_core::sc_module_name& name, const SramConfig& config)
    : TimedTarget(name),
      m_config(config),
      m_bankBusyUntil(static_cast<std::size_t>(config.banks), sc_core::SC_ZERO_TIME),
      m_stats("sram", "on-chip SRAM"),
      m_bytesRead(m_stats.counter("bytes_read", "B", "bytes read")),
      m_bytesWritten(m_stats.counter("bytes_written", "B", "bytes written")),
      m_bankBusyTime(m_stats.counter("bank_busy_time", "s", "transfer time summed over banks")) {}

sc_core::sc_time Sram::serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  const bool write = tlm::isMemoryWrite(op.kind);
  if (!write && !tlm::isMemoryRead(op.kind)) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return arrival;
  }
  const uint64_t address = payload.get_address();
  if (op.bytes == 0 || static_cast<double>(address) + static_cast<double>(op.bytes) > m_config.capacityBytes) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return arrival;
  }
  // Banks are interleaved like memory channels.
  splitIntoSegments(m_config.banks, static_cast<uint64_t>(m_config.interleaveBytes), address, op.bytes, write,
                    m_segments);
  const double bankBandwidth = m_config.bandwidthBytesPerS / m_config.banks;
  sc_core::sc_time last = arrival;
  for (const InterleavedSegment& segment : m_segments) {
    sc_core::sc_time& busy = m_bankBusyUntil[static_cast<std::size_t>(segment.channel)];
    const double transfer = static_cast<double>(segment.bytes) / bankBandwidth;
    busy = std::max(arrival, busy) + tlm::durationCeil(transfer);
    last = std::max(last, busy);
    m_bankBusyTime.add(transfer);
  }
  (write ? m_bytesWritten : m_bytesRead).add(static_cast<double>(op.bytes));
  m_activity.emit(write ? tlm::Activity::kSramWriteBytes : tlm::Activity::kSramReadBytes, static_cast<double>(op.bytes),
                  op, arrival, last);
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  return last + tlm::durationCeil(m_config.latencyS);
}

}  // namespace scoville::hw
