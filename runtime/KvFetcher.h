#pragma once
// A chip's engine for the KV blocks its cache placed off the chip (serving
// kv_cache_placement spill_to_remote or offload_to_host): the step's attention reads and appends
// of those blocks go through it instead of the chip's own HBM. Time comes from the modules it
// drives; nothing here computes a duration.
//
// spill_to_remote: the chip's slice of a remote block lives in its donor's HBM (the next chip of
// the serving pool, ReplicaBuilder), in the region the donor lends at `donorBase`. A read is the
// donor's HBM read, then the fabric carrying the bytes from the donor to this chip; a write
// (append) crosses the fabric first, then is written into the donor's HBM. Both are cut into
// chunks of kChunkBytes and pipelined by a copy engine (hw::CopyEngine): chunk k crosses the
// fabric while chunk k+1 is read (reads: kMemoryThenLink), or is written while k+1 crosses
// (writes: kLinkThenMemory). The donor's HBM and the
// fabric are shared with everything else on them, so the donor's own steps and the collectives
// see this traffic, and it sees theirs.
//
// offload_to_host: the slice lives in this chip's share of host memory; reads and writes are
// transfers on the chip's host link (HostLink.h), one per access, by a second copy engine
// (kLinkOnly). Read data lands in the staging SRAM the attention consumes it from; it is not
// copied into HBM.
//
// The caller (the StepDriver's load stream) has synchronised its local time; access() returns
// once the data has landed (read) or is in place (write).

#include <array>
#include <cstdint>
#include <string>
#include <systemc>

#include "hw/dma/CopyEngine.h"
#include "hw/kv/KvCacheConfig.h"
#include "tlm/InitiatorPort.h"
#include "tlm/TimingMode.h"
#include "stats/StatsGroup.h"
#include "workloads/StepPlan.h"

namespace scoville::runtime {

using workload::MemoryAccess;
using workload::PlannedOp;
using workload::StepPlan;

class KvFetcher : public sc_core::sc_module {
  // First: the public sockets below are theirs.
  hw::CopyEngine m_remote;  // memory: the donor's HBM; links: from_donor, to_donor
  hw::CopyEngine m_host;    // link only: the host link

 public:
  using Socket = hw::CopyEngine::LinkSocket;
  /// Pipelining granule of a remote transfer.
  static constexpr uint64_t kChunkBytes = 1 << 20;

  /// spill_to_remote: bind to the donor's fabric interface (messages donor -> this chip).
  Socket& fromDonor;
  /// spill_to_remote: bind to this chip's fabric interface (messages this chip -> donor).
  Socket& toDonor;
  /// offload_to_host: bind to this chip's host link.
  Socket& host;

  /// `donor` < 0: no remote tier (the fabric sockets stay unbound). `donorBase`: where the region
  /// the donor lends this chip starts in the donor's HBM.
  KvFetcher(const sc_core::sc_module_name& name, int chip, int donor, uint64_t donorBase, tlm::TimingMode mode);
  KvFetcher(const KvFetcher&) = delete;
  KvFetcher& operator=(const KvFetcher&) = delete;

  /// From the load stream's thread: performs `access` (tier kRemoteHbm or kHost, address an offset
  /// into the tier's KV space) for `op`. False, with error() set, when a module refused it.
  bool access(const MemoryAccess& access, const PlannedOp& op);

  /// spill_to_remote (donor >= 0 only): bind its socket to the donor chip's socket.
  tlm::InitiatorPort& donorMemory() { return m_remote.memory(); }
  int chip() const { return m_chip; }
  int donor() const { return m_donor; }
  /// Bytes read and written on `tier` so far (this chip's slice).
  double bytesRead(hw::KvTier tier) const { return m_read[hw::kvTierIndex(tier)]; }
  double bytesWritten(hw::KvTier tier) const { return m_written[hw::kvTierIndex(tier)]; }
  const std::string& error() const { return m_error; }
  const stats::Group& stats() const { return m_stats; }

 private:
  bool remote(const MemoryAccess& access, const PlannedOp& op);
  bool onHost(const MemoryAccess& access, const PlannedOp& op);
  /// A copy for `op` over `run` in `order`; the memory leg `memory` on the donor's HBM, the link
  /// leg `link`.
  hw::Copy copyOf(const PlannedOp& op, const hw::CopyRun& run, hw::CopyOrder order, const hw::CopyLeg& memory,
                  const hw::CopyLeg& link) const;
  /// Sets error() for a copy that failed at the transaction `what` describes.
  void failed(const hw::CopyOutcome& outcome, const char* what, const MemoryAccess& access, const PlannedOp& op);

  int m_chip;
  int m_donor;
  uint64_t m_donorBase;
  std::array<double, hw::kKvTierCount> m_read{};
  std::array<double, hw::kKvTierCount> m_written{};
  std::string m_error;
  stats::Group m_stats;
  stats::Counter& m_remoteRead;
  stats::Counter& m_remoteWritten;
  stats::Counter& m_hostRead;
  stats::Counter& m_hostWritten;
  stats::Counter& m_transfers;
};

}  // namespace scoville::runtime
