#include "hw/MemoryController.h"

#include <algorithm>

#include "tlm/Time.h"

namespace scoville::hw {

MemoryController::MemoryController(const sc_core::sc_module_name& name, const MemoryControllerConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      m_config(config),
      m_channelBusyUntil(static_cast<std::size_t>(config.channels), sc_core::SC_ZERO_TIME),
      m_scratch(static_cast<std::size_t>(config.channels), 0),
      m_stats("hbm", "HBM memory controller"),
      m_reads(m_stats.counter("reads", "", "read requests (weights, activations, KV)")),
      m_writes(m_stats.counter("writes", "", "write requests")),
      m_bytesRead(m_stats.counter("bytes_read", "B", "bytes read")),
      m_bytesWritten(m_stats.counter("bytes_written", "B", "bytes written")),
      m_kvBytesRead(m_stats.counter("kv_bytes_read", "B", "bytes read on behalf of the KV cache")),
      m_kvBytesWritten(m_stats.counter("kv_bytes_written", "B", "bytes written on behalf of the KV cache")),
      m_channelBusyTime(m_stats.counter("channel_busy_time", "s", "data-transfer time summed over channels")),
      m_queueTime(m_stats.counter("queue_time", "s", "time requests waited for a busy channel (summed)")) {
  socket.register_b_transport(this, &MemoryController::bTransport);
  m_stats.formula("bandwidth_utilization", "", "channel busy time / (channels x simulated time)", [this] {
    const double elapsed = sc_core::sc_time_stamp().to_seconds();
    return elapsed > 0 ? m_channelBusyTime.value() / (m_config.channels * elapsed) : 0.0;
  });
}

void MemoryController::splitAcrossChannels(const MemoryControllerConfig& config, uint64_t address, uint64_t bytes,
                                           std::vector<uint64_t>& perChannel) {
  const auto channels = static_cast<uint64_t>(config.channels);
  const auto granule = static_cast<uint64_t>(config.interleaveBytes);
  perChannel.assign(channels, 0);
  if (bytes == 0) return;
  const uint64_t firstChannel = (address / granule) % channels;
  const uint64_t head = std::min(bytes, granule - address % granule);
  perChannel[firstChannel] += head;
  const uint64_t rest = bytes - head;
  const uint64_t fullGranules = rest / granule;
  for (uint64_t c = 0; c < channels; ++c) {
    // Granule j after the head lands on channel (firstChannel + 1 + j) mod channels.
    const uint64_t offset = (c + channels - (firstChannel + 1) % channels) % channels;
    const uint64_t count = fullGranules / channels + (offset < fullGranules % channels ? 1 : 0);
    perChannel[c] += count * granule;
  }
  if (const uint64_t tail = rest % granule; tail > 0) perChannel[(firstChannel + 1 + fullGranules) % channels] += tail;
}

void MemoryController::bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  const bool isWrite = op.kind == tlm::OpKind::kWrite || op.kind == tlm::OpKind::kKvAppend;
  const bool isRead = op.kind == tlm::OpKind::kRead || op.kind == tlm::OpKind::kKvRead;
  if (!isRead && !isWrite) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const uint64_t address = payload.get_address();
  if (op.bytes == 0 || static_cast<double>(address) + static_cast<double>(op.bytes) > m_config.capacityBytes) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }

  splitAcrossChannels(m_config, address, op.bytes, m_scratch);
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
  const double channelBandwidth = m_config.channelBandwidth();
  sc_core::sc_time lastData = arrival;
  for (std::size_t c = 0; c < m_scratch.size(); ++c) {
    if (m_scratch[c] == 0) continue;
    const sc_core::sc_time start = std::max(arrival, m_channelBusyUntil[c]);
    const double transfer = static_cast<double>(m_scratch[c]) / channelBandwidth;
    m_channelBusyUntil[c] = start + tlm::durationCeil(transfer);
    lastData = std::max(lastData, m_channelBusyUntil[c]);
    m_channelBusyTime.add(transfer);
    m_queueTime.add((start - arrival).to_seconds());
  }
  delay = lastData + tlm::durationCeil(m_config.accessLatencyS) - sc_core::sc_time_stamp();

  const auto bytes = static_cast<double>(op.bytes);
  if (isRead) {
    m_reads.add();
    m_bytesRead.add(bytes);
    if (op.kind == tlm::OpKind::kKvRead) m_kvBytesRead.add(bytes);
  } else {
    m_writes.add();
    m_bytesWritten.add(bytes);
    if (op.kind == tlm::OpKind::kKvAppend) m_kvBytesWritten.add(bytes);
  }
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
}

}  // namespace scoville::hw
