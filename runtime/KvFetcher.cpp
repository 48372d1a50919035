#include "runtime/KvFetcher.h"

#include <fmt/format.h>

#include "runtime/StepDriver.h"
#include "tlm/OpExtension.h"

namespace scoville::runtime {

namespace {

hw::CopyEngineConfig remoteEngine(int donor, tlm::TimingMode mode) {
  hw::CopyEngineConfig config;
  config.chunkBytes = KvFetcher::kChunkBytes;
  if (donor >= 0) config.memoryPort = "donor_memory";
  config.mode = mode;
  config.quantum = sc_core::sc_time(StepDriver::kQuantumS, sc_core::SC_SEC);
  config.links = {"from_donor", "to_donor"};
  return config;
}

hw::CopyEngineConfig hostEngine() {
  hw::CopyEngineConfig config;
  config.chunkBytes = 0;  // one transfer per access
  config.links = {"host"};
  return config;
}

}  // namespace

KvFetcher::KvFetcher(const sc_core::sc_module_name& name, int chip, int donor, uint64_t donorBase, tlm::TimingMode mode)
    : sc_core::sc_module(name),
      m_remote("remote", remoteEngine(donor, mode)),
      m_host("host_engine", hostEngine()),
      fromDonor(m_remote.link(0)),
      toDonor(m_remote.link(1)),
      host(m_host.link(0)),
      m_chip(chip),
      m_donor(donor),
      m_donorBase(donorBase),
      m_stats(basename(), donor >= 0 ? fmt::format("KV blocks of chip {} off the chip (remote on chip {})", chip, donor)
                                     : fmt::format("KV blocks of chip {} off the chip", chip)),
      m_remoteRead(m_stats.counter("remote_read_bytes", "B", "KV read from the donor's HBM over the fabric")),
      m_remoteWritten(m_stats.counter("remote_write_bytes", "B", "KV appended to the donor's HBM over the fabric")),
      m_hostRead(m_stats.counter("host_read_bytes", "B", "KV read from host memory over the host link")),
      m_hostWritten(m_stats.counter("host_write_bytes", "B", "KV appended to host memory over the host link")),
      m_transfers(m_stats.counter("transfers", "", "memory, fabric and host-link transactions issued")) {}

hw::Copy KvFetcher::copyOf(const PlannedOp& op, const hw::CopyRun& run, hw::CopyOrder order, const hw::CopyLeg& memory,
                           const hw::CopyLeg& link) const {
  hw::Copy copy;
  copy.order = order;
  copy.runs = {run};
  copy.memory = memory;
  copy.link = link;
  copy.phase = op.phase;
  copy.block = op.block;
  copy.layer = op.layer;
  return copy;
}

void KvFetcher::failed(const hw::CopyOutcome& outcome, const char* what, const MemoryAccess& access,
                       const PlannedOp& op) {
  if (m_error.empty()) {
    m_error = fmt::format("chip {}: layer {} {}: {} {} bytes of KV at {} offset {:#x}: {} failed: {}", m_chip, op.layer,
                          op.name, access.kind == tlm::OpKind::kKvAppend ? "appending" : "reading", access.bytes,
                          hw::kvTierName(access.tier), access.address, what, outcome.response);
  }
}

bool KvFetcher::access(const MemoryAccess& access, const PlannedOp& op) {
  switch (access.tier) {
    case hw::KvTier::kRemoteHbm: return remote(access, op);
    case hw::KvTier::kHost: return onHost(access, op);
    default: break;
  }
  m_error = fmt::format("chip {}: layer {} {}: KV on {} is not off the chip", m_chip, op.layer, op.name,
                        hw::kvTierName(access.tier));
  return false;
}

bool KvFetcher::remote(const MemoryAccess& access, const PlannedOp& op) {
  if (m_donor < 0) {
    m_error =
        fmt::format("chip {}: layer {} {}: KV on remote HBM but the chip has no donor", m_chip, op.layer, op.name);
    return false;
  }
  // A read crosses from the donor to this chip after the donor's HBM read; a write crosses from
  // this chip to the donor, then is written there.
  const bool write = access.kind == tlm::OpKind::kKvAppend;
  const hw::Copy copy = copyOf(op, hw::CopyRun{m_donorBase + access.address, 0, access.bytes},
                               write ? hw::CopyOrder::kLinkThenMemory : hw::CopyOrder::kMemoryThenLink,
                               hw::CopyLeg{access.kind, m_donor, m_donor},
                               hw::CopyLeg{tlm::OpKind::kSend, write ? m_chip : m_donor, write ? m_donor : m_chip});
  const hw::CopyOutcome outcome = m_remote.copy(copy, write ? 1 : 0);
  m_transfers.add(2.0 * static_cast<double>(outcome.chunksStarted));
  if (!outcome.ok) {
    failed(outcome,
           !outcome.failedOnMemory ? "the fabric transfer"
           : write                 ? "the donor's HBM write"
                                   : "the donor's HBM read",
           access, op);
    return false;
  }
  (write ? m_remoteWritten : m_remoteRead).add(static_cast<double>(access.bytes));
  (write ? m_written : m_read)[hw::kvTierIndex(access.tier)] += static_cast<double>(access.bytes);
  return true;
}

bool KvFetcher::onHost(const MemoryAccess& access, const PlannedOp& op) {
  const bool write = access.kind == tlm::OpKind::kKvAppend;
  const hw::Copy copy = copyOf(op, hw::CopyRun{0, access.address, access.bytes}, hw::CopyOrder::kLinkOnly,
                               hw::CopyLeg{}, hw::CopyLeg{access.kind, m_chip, m_chip});
  const hw::CopyOutcome outcome = m_host.copy(copy);
  m_transfers.add(static_cast<double>(outcome.chunksStarted));
  if (!outcome.ok) {
    failed(outcome, "the host-link transfer", access, op);
    return false;
  }
  (write ? m_hostWritten : m_hostRead).add(static_cast<double>(access.bytes));
  (write ? m_written : m_read)[hw::kvTierIndex(access.tier)] += static_cast<double>(access.bytes);
  return true;
}

}  // namespace scoville::runtime
