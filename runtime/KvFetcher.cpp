#include "runtime/KvFetcher.h"

#include <fmt/format.h>
#include <algorithm>
#include <vector>

#include "runtime/StepDriver.h"
#include "tlm/OpExtension.h"

namespace scoville::runtime {

KvFetcher::KvFetcher(const sc_core::sc_module_name& name, int chip, int donor, uint64_t donorBase, tlm::TimingMode mode)
    : sc_core::sc_module(name),
      fromDonor("from_donor"),
      toDonor("to_donor"),
      host("host"),
      m_chip(chip),
      m_donor(donor),
      m_donorBase(donorBase),
      m_stats(basename(), donor >= 0 ? fmt::format("KV blocks of chip {} off the chip (remote on chip {})", chip, donor)
                                     : fmt::format("KV blocks of chip {} off the chip", chip)),
      m_remoteRead(m_stats.counter("remote_read_bytes", "B", "KV read from the donor's HBM over the fabric")),
      m_remoteWritten(m_stats.counter("remote_write_bytes", "B", "KV appended to the donor's HBM over the fabric")),
      m_hostRead(m_stats.counter("host_read_bytes", "B", "KV read from host memory over the host link")),
      m_hostWritten(m_stats.counter("host_write_bytes", "B", "KV appended to host memory over the host link")),
      m_transfers(m_stats.counter("transfers", "", "memory, fabric and host-link transactions issued")) {
  if (donor >= 0) {
    m_donorMemory = std::make_unique<tlm::InitiatorPort>("donor_memory", mode,
                                                         sc_core::sc_time(StepDriver::kQuantumS, sc_core::SC_SEC));
  }
}

void KvFetcher::prepare(::tlm::tlm_generic_payload& payload, tlm::OpKind kind, bool write, uint64_t address,
                        uint64_t bytes, int src, int dst, const PlannedOp& op) const {
  tlm::OpExtension& ext = tlm::opOf(payload);
  ext.kind = kind;
  ext.bytes = bytes;
  ext.phase = op.phase;
  ext.block = op.block;
  ext.layer = op.layer;
  ext.srcChip = src;
  ext.dstChip = dst;
  payload.set_command(write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
  payload.set_address(address);
  payload.set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
}

bool KvFetcher::failed(const ::tlm::tlm_generic_payload& payload, const char* what, const MemoryAccess& access,
                       const PlannedOp& op) {
  if (payload.get_response_status() == ::tlm::TLM_OK_RESPONSE) return false;
  if (m_error.empty()) {
    m_error = fmt::format("chip {}: layer {} {}: {} {} bytes of KV at {} offset {:#x}: {} failed: {}", m_chip, op.layer,
                          op.name, access.kind == tlm::OpKind::kKvAppend ? "appending" : "reading", access.bytes,
                          hw::kvTierName(access.tier), access.address, what, payload.get_response_string());
  }
  return true;
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
  const bool write = access.kind == tlm::OpKind::kKvAppend;
  tlm::InitiatorPort& memory = *m_donorMemory;
  memory.sync();
  sc_core::sc_time end = sc_core::sc_time_stamp();
  std::vector<sc_core::sc_time> landed;
  for (uint64_t done = 0; done < access.bytes; done += kChunkBytes) {
    const uint64_t bytes = std::min(kChunkBytes, access.bytes - done);
    const uint64_t address = m_donorBase + access.address + done;
    tlm::PayloadRef hbm(m_pool);
    prepare(*hbm, access.kind, write, address, bytes, m_donor, m_donor, op);
    tlm::PayloadRef send(m_pool);
    prepare(*send, tlm::OpKind::kSend, true, 0, bytes, write ? m_chip : m_donor, write ? m_donor : m_chip, op);
    m_transfers.add(2);
    if (!write) {
      // Each chunk goes onto the fabric the moment the donor's HBM has read it.
      memory.transport(*hbm);
      if (failed(*hbm, "the donor's HBM read", access, op)) return false;
      sc_core::sc_time delay = memory.localTime() - sc_core::sc_time_stamp();
      fromDonor->b_transport(*send, delay);
      if (failed(*send, "the fabric transfer", access, op)) return false;
      end = std::max(end, sc_core::sc_time_stamp() + delay);
    } else {
      // Every chunk is sent now (the fabric serialises them); each is written once it has landed.
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      toDonor->b_transport(*send, delay);
      if (failed(*send, "the fabric transfer", access, op)) return false;
      landed.push_back(sc_core::sc_time_stamp() + delay);
    }
  }
  for (std::size_t k = 0; k < landed.size(); ++k) {
    memory.sync();
    if (landed[k] > sc_core::sc_time_stamp()) sc_core::wait(landed[k] - sc_core::sc_time_stamp());
    const uint64_t done = static_cast<uint64_t>(k) * kChunkBytes;
    tlm::PayloadRef hbm(m_pool);
    prepare(*hbm, access.kind, true, m_donorBase + access.address + done, std::min(kChunkBytes, access.bytes - done),
            m_donor, m_donor, op);
    memory.transport(*hbm);
    if (failed(*hbm, "the donor's HBM write", access, op)) return false;
    end = std::max(end, memory.localTime());
  }
  memory.sync();
  if (end > sc_core::sc_time_stamp()) sc_core::wait(end - sc_core::sc_time_stamp());
  (write ? m_remoteWritten : m_remoteRead).add(static_cast<double>(access.bytes));
  (write ? m_written : m_read)[hw::kvTierIndex(access.tier)] += static_cast<double>(access.bytes);
  return true;
}

bool KvFetcher::onHost(const MemoryAccess& access, const PlannedOp& op) {
  const bool write = access.kind == tlm::OpKind::kKvAppend;
  tlm::PayloadRef payload(m_pool);
  prepare(*payload, access.kind, write, access.address, access.bytes, m_chip, m_chip, op);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  m_transfers.add();
  host->b_transport(*payload, delay);
  if (failed(*payload, "the host-link transfer", access, op)) return false;
  sc_core::wait(delay);
  (write ? m_hostWritten : m_hostRead).add(static_cast<double>(access.bytes));
  (write ? m_written : m_read)[hw::kvTierIndex(access.tier)] += static_cast<double>(access.bytes);
  return true;
}

}  // namespace scoville::runtime
