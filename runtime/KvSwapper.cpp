#include "runtime/KvSwapper.h"

#include <fmt/format.h>
#include <algorithm>

#include "runtime/StepDriver.h"
#include "tlm/OpExtension.h"

namespace scoville::runtime {

KvSwapper::KvSwapper(const sc_core::sc_module_name& name, int chip, uint32_t layers, uint64_t layerBlockBytes,
                     uint64_t kvBase, tlm::TimingMode mode)
    : sc_core::sc_module(name),
      hbm("hbm", mode, sc_core::sc_time(StepDriver::kQuantumS, sc_core::SC_SEC)),
      host("host"),
      m_chip(chip),
      m_layers(layers),
      m_layerBlockBytes(layerBlockBytes),
      m_kvBase(kvBase) {}

bool KvSwapper::transfer(bool onHbm, bool write, uint64_t address, uint64_t bytes, uint64_t request,
                         sc_core::sc_time& delay) {
  tlm::PayloadRef payload(m_pool);
  tlm::OpExtension& op = payload.op();
  // KV kinds, so that memories account this traffic apart from weights.
  op.kind = write ? tlm::OpKind::kKvAppend : tlm::OpKind::kKvRead;
  op.bytes = bytes;
  op.phase = tlm::LlmPhase::kDecode;
  op.requestId = request;
  op.srcChip = m_chip;
  op.dstChip = m_chip;
  payload->set_command(write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
  payload->set_address(address);
  payload->set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
  if (onHbm) {
    hbm.transport(*payload);
    delay = hbm.localTime() - sc_core::sc_time_stamp();
  } else {
    host->b_transport(*payload, delay);
  }
  if (payload->get_response_status() == ::tlm::TLM_OK_RESPONSE) return true;
  if (m_error.empty()) {
    m_error = fmt::format("chip {}: KV swap of request {}: {} {} bytes at {} address {:#x} failed: {}", m_chip, request,
                          write ? "writing" : "reading", bytes, onHbm ? "HBM" : "host memory", address,
                          payload->get_response_string());
  }
  return false;
}

bool KvSwapper::copy(const hw::KvBlockAllocator& kv, const KvSwap& swap) {
  m_runs.clear();
  for (uint32_t layer = 0; layer < m_layers; ++layer) {
    for (const hw::KvBlockMove& move : swap.moves) {
      const hw::KvBlock& onChip = swap.toHost ? move.from : move.to;
      const hw::KvBlock& onHost = swap.toHost ? move.to : move.from;
      if (onChip.tier != hw::KvTier::kLocalHbm || onHost.tier != hw::KvTier::kHost) {
        m_error = fmt::format(
            "chip {}: KV swap of request {} moves a block between {} and {}; serving swaps "
            "between local HBM and host only",
            m_chip, swap.request, hw::kvTierName(move.from.tier), hw::kvTierName(move.to.tier));
        return false;
      }
      const Run run{m_kvBase + kv.address(onChip, layer), kv.address(onHost, layer), m_layerBlockBytes};
      if (!m_runs.empty() && m_runs.back().hbmAddress + m_runs.back().bytes == run.hbmAddress &&
          m_runs.back().hostAddress + m_runs.back().bytes == run.hostAddress) {
        m_runs.back().bytes += run.bytes;
      } else {
        m_runs.push_back(run);
      }
    }
  }
  hbm.sync();
  sc_core::sc_time end = sc_core::sc_time_stamp();
  if (swap.toHost) {
    // Each run goes to the link the moment it has been read; the link queues what it cannot take yet.
    for (const Run& run : m_runs) {
      sc_core::sc_time delay;
      if (!transfer(true, false, run.hbmAddress, run.bytes, swap.request, delay)) return false;
      if (!transfer(false, true, run.hostAddress, run.bytes, swap.request, delay)) return false;
      end = std::max(end, sc_core::sc_time_stamp() + delay);
    }
  } else {
    // Every run is requested from the host now; each is written to HBM once it has landed.
    std::vector<sc_core::sc_time> landed;
    landed.reserve(m_runs.size());
    for (const Run& run : m_runs) {
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      if (!transfer(false, false, run.hostAddress, run.bytes, swap.request, delay)) return false;
      landed.push_back(sc_core::sc_time_stamp() + delay);
    }
    for (std::size_t i = 0; i < m_runs.size(); ++i) {
      hbm.sync();
      if (landed[i] > sc_core::sc_time_stamp()) sc_core::wait(landed[i] - sc_core::sc_time_stamp());
      sc_core::sc_time delay;
      if (!transfer(true, true, m_runs[i].hbmAddress, m_runs[i].bytes, swap.request, delay)) return false;
      end = std::max(end, sc_core::sc_time_stamp() + delay);
    }
  }
  hbm.sync();
  if (end > sc_core::sc_time_stamp()) sc_core::wait(end - sc_core::sc_time_stamp());
  return true;
}

}  // namespace scoville::runtime
