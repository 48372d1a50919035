#include "hw/dma/CopyEngine.h"

#include <algorithm>

#include "tlm/PayloadBuilder.h"

namespace scoville::hw {

CopyEngine::CopyEngine(const sc_core::sc_module_name& name, const CopyEngineConfig& config)
    : sc_core::sc_module(name),
      m_config(config),
      m_stats(basename(), "copy engine"),
      m_copies(m_stats.counter("copies", "", "copies completed")),
      m_chunksDone(m_stats.counter("chunks", "", "chunks copied (a memory leg and a link leg each, or a link leg)")),
      m_bytes(m_stats.counter("bytes", "B", "bytes copied")) {
  if (!config.memoryPort.empty()) {
    m_memory = std::make_unique<tlm::InitiatorPort>(config.memoryPort.c_str(), config.mode, config.quantum);
  }
  for (const std::string& link : config.links) m_links.push_back(std::make_unique<LinkSocket>(link.c_str()));
}

void CopyEngine::cut(const Copy& copy) {
  m_chunks.clear();
  for (const CopyRun& run : copy.runs) {
    if (m_config.chunkBytes == 0) {
      m_chunks.push_back(Chunk{run.memoryAddress, run.linkAddress, run.bytes});
      continue;
    }
    for (uint64_t done = 0; done < run.bytes; done += m_config.chunkBytes) {
      m_chunks.push_back(
          Chunk{run.memoryAddress + done, run.linkAddress + done, std::min(m_config.chunkBytes, run.bytes - done)});
    }
  }
}

::tlm::tlm_generic_payload& CopyEngine::payload(const Copy& copy, const CopyLeg& leg, uint64_t address,
                                                uint64_t bytes) {
  return tlm::PayloadBuilder(leg.kind)
      .address(leg.kind == tlm::OpKind::kSend ? 0 : address)
      .bytes(bytes)
      .phase(copy.phase)
      .block(copy.block)
      .layer(copy.layer)
      .request(copy.requestId)
      .chips(leg.srcChip, leg.dstChip)
      .build(m_pool);
}

void CopyEngine::refused(const ::tlm::tlm_generic_payload& payload, bool onMemory, CopyOutcome& outcome) {
  const tlm::OpExtension& op = *payload.get_extension<tlm::OpExtension>();
  outcome.ok = false;
  outcome.failedOnMemory = onMemory;
  outcome.failedKind = op.kind;
  outcome.failedAddress = payload.get_address();
  outcome.failedBytes = op.bytes;
  outcome.response = payload.get_response_string();
}

bool CopyEngine::onMemory(const Copy& copy, const Chunk& chunk, CopyOutcome& outcome) {
  tlm::PayloadRef payload(this->payload(copy, copy.memory, chunk.memoryAddress, chunk.bytes));
  m_memory->transport(*payload);
  if (payload->get_response_status() == ::tlm::TLM_OK_RESPONSE) return true;
  refused(*payload, true, outcome);
  return false;
}

bool CopyEngine::onLink(const Copy& copy, const Chunk& chunk, LinkSocket& socket, sc_core::sc_time& delay,
                        CopyOutcome& outcome) {
  tlm::PayloadRef payload(this->payload(copy, copy.link, chunk.linkAddress, chunk.bytes));
  socket->b_transport(*payload, delay);
  if (payload->get_response_status() == ::tlm::TLM_OK_RESPONSE) return true;
  refused(*payload, false, outcome);
  return false;
}

CopyOutcome CopyEngine::copy(const Copy& copy, std::size_t link) {
  cut(copy);
  LinkSocket& socket = *m_links.at(link);
  CopyOutcome outcome;
  switch (copy.order) {
    case CopyOrder::kMemoryThenLink: memoryThenLink(copy, socket, outcome); break;
    case CopyOrder::kLinkThenMemory: linkThenMemory(copy, socket, outcome); break;
    case CopyOrder::kLinkOnly: linkOnly(copy, socket, outcome); break;
  }
  if (outcome.ok) {
    m_copies.add();
    m_chunksDone.add(static_cast<double>(m_chunks.size()));
    for (const Chunk& chunk : m_chunks) m_bytes.add(static_cast<double>(chunk.bytes));
  }
  return outcome;
}

// Each chunk goes to the link the moment its memory leg has completed; the link queues what it
// cannot take yet while the next chunk's memory leg runs.
void CopyEngine::memoryThenLink(const Copy& copy, LinkSocket& socket, CopyOutcome& outcome) {
  m_memory->sync();
  sc_core::sc_time end = sc_core::sc_time_stamp();
  for (const Chunk& chunk : m_chunks) {
    ++outcome.chunksStarted;
    if (!onMemory(copy, chunk, outcome)) return;
    sc_core::sc_time delay = m_memory->localTime() - sc_core::sc_time_stamp();
    if (!onLink(copy, chunk, socket, delay, outcome)) return;
    end = std::max(end, sc_core::sc_time_stamp() + delay);
  }
  m_memory->sync();
  if (end > sc_core::sc_time_stamp()) sc_core::wait(end - sc_core::sc_time_stamp());
}

// Every chunk is handed to the link now (the link serialises them); each goes through the memory
// once it has landed.
void CopyEngine::linkThenMemory(const Copy& copy, LinkSocket& socket, CopyOutcome& outcome) {
  m_memory->sync();
  sc_core::sc_time end = sc_core::sc_time_stamp();
  m_landed.clear();
  for (const Chunk& chunk : m_chunks) {
    ++outcome.chunksStarted;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (!onLink(copy, chunk, socket, delay, outcome)) return;
    m_landed.push_back(sc_core::sc_time_stamp() + delay);
  }
  for (std::size_t k = 0; k < m_chunks.size(); ++k) {
    m_memory->sync();
    if (m_landed[k] > sc_core::sc_time_stamp()) sc_core::wait(m_landed[k] - sc_core::sc_time_stamp());
    if (!onMemory(copy, m_chunks[k], outcome)) return;
    end = std::max(end, m_memory->localTime());
  }
  m_memory->sync();
  if (end > sc_core::sc_time_stamp()) sc_core::wait(end - sc_core::sc_time_stamp());
}

// Every chunk is handed to the link now; the copy ends when the last has landed. It always
// yields, a delta cycle at least, so that a receiver notified after it runs later.
void CopyEngine::linkOnly(const Copy& copy, LinkSocket& socket, CopyOutcome& outcome) {
  sc_core::sc_time end = sc_core::sc_time_stamp();
  for (const Chunk& chunk : m_chunks) {
    ++outcome.chunksStarted;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    if (!onLink(copy, chunk, socket, delay, outcome)) return;
    end = std::max(end, sc_core::sc_time_stamp() + delay);
  }
  sc_core::wait(end - sc_core::sc_time_stamp());
}

}  // namespace scoville::hw
