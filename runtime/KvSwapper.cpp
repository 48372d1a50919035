#include "runtime/KvSwapper.h"

#include <fmt/format.h>

#include "runtime/StepDriver.h"
#include "tlm/OpExtension.h"

namespace scoville::runtime {

namespace {

hw::CopyEngineConfig swapEngineConfig(tlm::TimingMode mode) {
  hw::CopyEngineConfig config;
  config.chunkBytes = 0;  // a run is one transaction
  config.memoryPort = "hbm";
  config.mode = mode;
  config.quantum = sc_core::sc_time(StepDriver::kQuantumS, sc_core::SC_SEC);
  config.links = {"host"};
  return config;
}

}  // namespace

KvSwapper::KvSwapper(const sc_core::sc_module_name& name, int chip, uint32_t layers, uint64_t layerBlockBytes,
                     uint64_t kvBase, tlm::TimingMode mode)
    : sc_core::sc_module(name),
      m_engine("engine", swapEngineConfig(mode)),
      hbm(m_engine.memory()),
      host(m_engine.link(0)),
      m_chip(chip),
      m_layers(layers),
      m_layerBlockBytes(layerBlockBytes),
      m_kvBase(kvBase) {}

bool KvSwapper::copy(const hw::KvBlockAllocator& kv, const KvSwap& swap) {
  std::vector<hw::CopyRun>& runs = m_copy.runs;
  runs.clear();
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
      const hw::CopyRun run{m_kvBase + kv.address(onChip, layer), kv.address(onHost, layer), m_layerBlockBytes};
      if (!runs.empty() && runs.back().memoryAddress + runs.back().bytes == run.memoryAddress &&
          runs.back().linkAddress + runs.back().bytes == run.linkAddress) {
        runs.back().bytes += run.bytes;
      } else {
        runs.push_back(run);
      }
    }
  }
  // KV kinds, so that memories account this traffic apart from weights.
  const tlm::OpKind read = tlm::OpKind::kKvRead;
  const tlm::OpKind write = tlm::OpKind::kKvAppend;
  m_copy.order = swap.toHost ? hw::CopyOrder::kMemoryThenLink : hw::CopyOrder::kLinkThenMemory;
  m_copy.memory = hw::CopyLeg{swap.toHost ? read : write, m_chip, m_chip};
  m_copy.link = hw::CopyLeg{swap.toHost ? write : read, m_chip, m_chip};
  m_copy.phase = tlm::LlmPhase::kDecode;
  m_copy.requestId = swap.request;
  const hw::CopyOutcome outcome = m_engine.copy(m_copy);
  if (outcome.ok) return true;
  if (m_error.empty()) {
    m_error =
        fmt::format("chip {}: KV swap of request {}: {} {} bytes at {} address {:#x} failed: {}", m_chip, swap.request,
                    tlm::isMemoryWrite(outcome.failedKind) ? "writing" : "reading", outcome.failedBytes,
                    outcome.failedOnMemory ? "HBM" : "host memory", outcome.failedAddress, outcome.response);
  }
  return false;
}

}  // namespace scoville::runtime
