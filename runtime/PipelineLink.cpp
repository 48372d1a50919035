#include "runtime/PipelineLink.h"

#include <fmt/format.h>

#include "tlm/OpExtension.h"

namespace scoville::runtime {

namespace {

hw::CopyEngineConfig linkEngineConfig() {
  hw::CopyEngineConfig config;
  config.chunkBytes = 0;  // one message per send
  config.links = {"socket"};
  return config;
}

}  // namespace

PipelineLink::PipelineLink(const sc_core::sc_module_name& name, int srcChip, int dstChip)
    : sc_core::sc_module(name),
      m_engine("engine", linkEngineConfig()),
      socket(m_engine.link(0)),
      m_srcChip(srcChip),
      m_dstChip(dstChip),
      m_stats(basename(), fmt::format("pipeline activations from chip {} to chip {}", srcChip, dstChip)),
      m_messages(m_stats.counter("messages", "", "activation transfers")),
      m_bytes(m_stats.counter("bytes", "B", "activation bytes transferred")),
      m_time(m_stats.counter("time", "s", "time from send to arrival, summed")) {
  m_copy.order = hw::CopyOrder::kLinkOnly;
  m_copy.link = hw::CopyLeg{tlm::OpKind::kSend, srcChip, dstChip};
  m_copy.phase = tlm::LlmPhase::kDecode;
  m_copy.runs.resize(1);
}

bool PipelineLink::send(uint64_t bytes, uint32_t layer) {
  m_copy.runs.front().bytes = bytes;
  m_copy.layer = layer;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  const hw::CopyOutcome outcome = m_engine.copy(m_copy);
  if (!outcome.ok) {
    m_error = fmt::format("layer {}: activations ({} bytes) from chip {} to chip {} failed: {}", layer, bytes,
                          m_srcChip, m_dstChip, outcome.response);
    return false;
  }
  m_messages.add();
  m_bytes.add(static_cast<double>(bytes));
  m_time.add((sc_core::sc_time_stamp() - start).to_seconds());
  ++m_delivered;
  m_arrived.notify(sc_core::SC_ZERO_TIME);
  return true;
}

void PipelineLink::receive() {
  while (m_received == m_delivered) sc_core::wait(m_arrived);
  ++m_received;
}

}  // namespace scoville::runtime
