#pragma once
// Activations handed from one pipeline stage to the next: the sending chip's compute stream
// sends them over the fabric to the same tensor-parallel rank of the next stage, whose compute
// stream waits for them before its first op. The transfer's time comes from the fabric. Serving
// with prefill/decode disaggregation hands a prompt's KV from a prefill chip to a decode chip over
// the same kind of link. Each send is one kLinkOnly copy of a copy engine (hw::CopyEngine): one
// fabric message, unchunked, from the sender's SRAM to the receiver's.

#include <cstdint>
#include <string>
#include <systemc>

#include "hw/dma/CopyEngine.h"
#include "stats/StatsGroup.h"

namespace scoville::runtime {

class PipelineLink : public sc_core::sc_module {
  hw::CopyEngine m_engine;  // first: the public socket is its link

 public:
  /// The sender's messages; bind it to the fabric interface of `srcChip`.
  hw::CopyEngine::LinkSocket& socket;

  PipelineLink(const sc_core::sc_module_name& name, int srcChip, int dstChip);
  PipelineLink(const PipelineLink&) = delete;
  PipelineLink& operator=(const PipelineLink&) = delete;

  /// From the sending stage's thread: sends `bytes` and returns once they have arrived (false,
  /// with error() set, when the fabric refuses them).
  bool send(uint64_t bytes, uint32_t layer);
  /// From the receiving stage's thread: waits until a send not yet received has arrived.
  void receive();
  const std::string& error() const { return m_error; }
  const stats::Group& stats() const { return m_stats; }

 private:
  int m_srcChip;
  int m_dstChip;
  uint64_t m_delivered = 0;
  uint64_t m_received = 0;
  sc_core::sc_event m_arrived;
  hw::Copy m_copy;
  std::string m_error;
  stats::Group m_stats;
  stats::Counter& m_messages;
  stats::Counter& m_bytes;
  stats::Counter& m_time;
};

}  // namespace scoville::runtime
