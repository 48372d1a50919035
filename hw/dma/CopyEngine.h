#pragma once
// A DMA copy engine: moves bytes between a memory (through an InitiatorPort, in the run's timing
// mode) and a link (a loosely-timed socket: a host link or a chip's fabric interface), cut into
// chunks, as the transactions of two legs per chunk. Time comes from the memory and the link;
// nothing here computes a duration. KV swap (runtime::KvSwapper), remote and host KV access
// (runtime::KvFetcher), pipeline hand-off and the disaggregated prompt-KV transfer
// (runtime::PipelineLink) are configurations of it.
//
// The memory leg blocks the engine's thread (the port's transport(): one chunk at a time, the
// next issued when the previous one has completed); the link leg is handed to the link with its
// start annotated and returns at once with its completion (the link serialises the transfers it
// cannot take yet: HostLink's busy-until per direction, the fabric's ports). Which leg goes first
// is the copy's order (CopyOrder), and it fixes how the two legs overlap:
//   - kMemoryThenLink (swap-out, remote KV read): chunk k's link leg starts when its memory leg
//     has completed, while chunk k + 1's memory leg runs. With n equal chunks, a memory leg of M
//     and a link leg of T, the copy takes M + (n - 1) max(M, T) + T (plus the link's latency).
//   - kLinkThenMemory (swap-in, remote KV append): every chunk's link leg is handed to the link
//     at the copy's start; chunk k's memory leg starts once chunk k has landed and chunk k - 1's
//     memory leg has completed: T + (n - 1) max(M, T) + M past the first byte's landing.
//   - kLinkOnly (host KV access, activations, prompt-KV hand-off): no memory leg; the data sits
//     at the link's near end (the sender's SRAM) and lands where the receiver consumes it. Every
//     chunk is handed to the link at the copy's start.
// A copy returns once its last byte is in place. Its runs (memory address, link address, bytes)
// are copied in order, each cut into chunks of chunkBytes (0: a run is one chunk).

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "tlm/InitiatorPort.h"
#include "tlm/OpExtension.h"
#include "tlm/PayloadPool.h"
#include "tlm/TimingMode.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

/// Which leg of each chunk goes first (see the file comment for how the legs overlap).
enum class CopyOrder { kMemoryThenLink, kLinkThenMemory, kLinkOnly };

/// One leg's transactions: their op kind and chips (OpExtension::srcChip, dstChip).
struct CopyLeg {
  /// KV or weight kinds on the memory (a read when the memory is the source); on the link a
  /// host-memory read or write, or kSend for a fabric message (which carries no address: 0).
  tlm::OpKind kind = tlm::OpKind::kRead;
  int32_t srcChip = 0;
  int32_t dstChip = 0;
};

/// A contiguous range: where it is in the memory, where on the link's side, how long.
struct CopyRun {
  uint64_t memoryAddress = 0;
  uint64_t linkAddress = 0;
  uint64_t bytes = 0;
};

/// One copy: its runs, its order, and what its transactions say (OpExtension fields).
struct Copy {
  CopyOrder order = CopyOrder::kMemoryThenLink;
  std::vector<CopyRun> runs;
  CopyLeg memory;  ///< unused for kLinkOnly
  CopyLeg link;
  tlm::LlmPhase phase = tlm::LlmPhase::kDecode;
  tlm::OpBlock block = tlm::OpBlock::kOther;
  uint32_t layer = 0;
  uint64_t requestId = 0;
};

/// How a copy went: chunks started (their first leg issued) and, when a target refused a
/// transaction, which one.
struct CopyOutcome {
  bool ok = true;
  uint64_t chunksStarted = 0;
  bool failedOnMemory = false;  ///< the refused transaction: on the memory port (else the link)
  tlm::OpKind failedKind = tlm::OpKind::kRead;
  uint64_t failedAddress = 0;
  uint64_t failedBytes = 0;
  std::string response;  ///< the refused payload's response string
};

struct CopyEngineConfig {
  /// Largest transaction of a leg; 0: every run is one transaction per leg.
  uint64_t chunkBytes = 0;
  /// The memory port's name; empty: no memory port (kLinkOnly copies only).
  std::string memoryPort;
  tlm::TimingMode mode = tlm::TimingMode::kLooselyTimed;
  /// The memory port's loosely-timed quantum.
  sc_core::sc_time quantum;
  /// Names of the link sockets, in index order (copy()'s `link`).
  std::vector<std::string> links;
};

class CopyEngine : public sc_core::sc_module {
 public:
  /// A link side: bind to a host link or a fabric interface (loosely timed). May stay unbound.
  using LinkSocket = tlm_utils::simple_initiator_socket_optional<CopyEngine>;

  CopyEngine(const sc_core::sc_module_name& name, const CopyEngineConfig& config);
  CopyEngine(const CopyEngine&) = delete;
  CopyEngine& operator=(const CopyEngine&) = delete;

  /// The memory side: bind memory().socket to the memory's socket (either timing mode). Only
  /// when the config names a memory port.
  tlm::InitiatorPort& memory() { return *m_memory; }
  bool hasMemory() const { return m_memory != nullptr; }
  /// Link side `index` (the config's links order).
  LinkSocket& link(std::size_t index) { return *m_links.at(index); }
  uint64_t chunkBytes() const { return m_config.chunkBytes; }
  /// Copies, chunks and bytes done (their owner reports what it needs; nothing adds this group to
  /// a report yet).
  const stats::Group& stats() const { return m_stats; }

  /// From an SC_THREAD: performs `copy` over link `link` and returns once its last byte is in
  /// place, or at the first transaction a target refused (the copy stops there).
  CopyOutcome copy(const Copy& copy, std::size_t link = 0);

 private:
  struct Chunk {
    uint64_t memoryAddress;
    uint64_t linkAddress;
    uint64_t bytes;
  };
  void cut(const Copy& copy);
  ::tlm::tlm_generic_payload& payload(const Copy& copy, const CopyLeg& leg, uint64_t address, uint64_t bytes);
  bool onMemory(const Copy& copy, const Chunk& chunk, CopyOutcome& outcome);
  /// Hands chunk's link leg to `socket` at `delay` past now; `delay` becomes its completion.
  bool onLink(const Copy& copy, const Chunk& chunk, LinkSocket& socket, sc_core::sc_time& delay, CopyOutcome& outcome);
  static void refused(const ::tlm::tlm_generic_payload& payload, bool onMemory, CopyOutcome& outcome);

  void memoryThenLink(const Copy& copy, LinkSocket& socket, CopyOutcome& outcome);
  void linkThenMemory(const Copy& copy, LinkSocket& socket, CopyOutcome& outcome);
  void linkOnly(const Copy& copy, LinkSocket& socket, CopyOutcome& outcome);

  CopyEngineConfig m_config;
  std::unique_ptr<tlm::InitiatorPort> m_memory;
  std::vector<std::unique_ptr<LinkSocket>> m_links;
  tlm::PayloadPool m_pool;
  std::vector<Chunk> m_chunks;
  std::vector<sc_core::sc_time> m_landed;
  stats::Group m_stats;
  stats::Counter& m_copies;
  stats::Counter& m_chunksDone;
  stats::Counter& m_bytes;
};

}  // namespace scoville::hw
