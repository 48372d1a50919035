#include "runtime/PipelineLink.h"

#include <fmt/format.h>

#include "tlm/OpExtension.h"

namespace scoville::runtime {

PipelineLink::PipelineLink(const sc_core::sc_module_name& name, int srcChip, int dstChip)
    : sc_core::sc_module(name),
      socket("socket"),
      m_srcChip(srcChip),
      m_dstChip(dstChip),
      m_stats(basename(), fmt::format("pipeline activations from chip {} to chip {}", srcChip, dstChip)),
      m_messages(m_stats.counter("messages", "", "activation transfers")),
      m_bytes(m_stats.counter("bytes", "B", "activation bytes transferred")),
      m_time(m_stats.counter("time", "s", "time from send to arrival, summed")) {}

bool PipelineLink::send(uint64_t bytes, uint32_t layer) {
  tlm::PayloadRef payload(m_pool);
  tlm::OpExtension& op = payload.op();
  op.kind = tlm::OpKind::kSend;
  op.phase = tlm::LlmPhase::kDecode;
  op.layer = layer;
  op.bytes = bytes;
  op.srcChip = m_srcChip;
  op.dstChip = m_dstChip;
  payload->set_command(::tlm::TLM_WRITE_COMMAND);
  payload->set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(*payload, delay);
  if (payload->get_response_status() != ::tlm::TLM_OK_RESPONSE) {
    m_error = fmt::format("layer {}: activations ({} bytes) from chip {} to chip {} failed: {}", layer, bytes,
                          m_srcChip, m_dstChip, payload->get_response_string());
    return false;
  }
  sc_core::wait(delay);
  m_messages.add();
  m_bytes.add(static_cast<double>(bytes));
  m_time.add(delay.to_seconds());
  ++m_delivered;
  m_arrived.notify(sc_core::SC_ZERO_TIME);
  return true;
}

void PipelineLink::receive() {
  while (m_received == m_delivered) sc_core::wait(m_arrived);
  ++m_received;
}

}  // namespace scoville::runtime
