#include "hw/kv/KvCacheManager.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace scoville::hw {

KvCacheManager::KvCacheManager(const sc_core::sc_module_name& name, const KvCacheConfig& config,
                               const KvModelShape& shape, const KvTierCapacities& capacities)
    : sc_core::sc_module(name),
      socket("socket"),
      toSram("toSram"),
      toLocalHbm("toLocalHbm"),
      toRemote("toRemote"),
      toHost("toHost"),
      m_allocator(config, shape, capacities, makeKvPlacementPolicy(config.placement)),
      m_stats("kv_cache", "KV-cache manager: paged blocks on memory tiers and their traffic"),
      m_appends(m_stats.counter("appends", "", "kKvAppend operations served")),
      m_reads(m_stats.counter("reads", "", "kKvRead operations served")) {
  socket.register_b_transport(this, &KvCacheManager::bTransport);
  for (KvTier tier : kKvTiers) {
    const std::string t = kvTierName(tier);
    const std::size_t i = kvTierIndex(tier);
    m_bytesRead[i] = &m_stats.counter(t + "_bytes_read", "B", "KV bytes read from the tier");
    m_bytesWritten[i] = &m_stats.counter(t + "_bytes_written", "B", "KV bytes written to the tier");
    m_transactions[i] = &m_stats.counter(t + "_transactions", "", "memory transactions issued to the tier");
    m_stats.formula(t + "_occupancy_mean", "B", "time-weighted mean of KV bytes held on the tier", [this, tier, i] {
      const double now = sc_core::sc_time_stamp().to_seconds();
      if (now <= 0) return usedBytes(tier);
      const double open = usedBytes(tier) * (now - m_occupancySince.to_seconds());
      return (m_occupancyIntegral[i] + open) / now;
    });
    m_stats.formula(t + "_occupancy_peak", "B", "most KV bytes held on the tier at once", [this, tier] {
      return static_cast<double>(m_allocator.peakBlocks(tier) * m_allocator.blockBytes());
    });
  }
  m_stats.formula("preemptions", "", "requests preempted for lack of KV space",
                  [this] { return m_allocator.stats().value("preemptions"); });
  m_stats.formula("swap_outs", "", "preempted requests swapped out to host",
                  [this] { return m_allocator.stats().value("swap_outs"); });
  m_stats.addChild(m_allocator.stats());
}

KvCacheManager::TierSocket& KvCacheManager::tierSocket(KvTier tier) {
  switch (tier) {
    case KvTier::kSram: return toSram;
    case KvTier::kLocalHbm: return toLocalHbm;
    case KvTier::kRemoteHbm: return toRemote;
    case KvTier::kHost: return toHost;
  }
  return toHost;
}

void KvCacheManager::end_of_elaboration() {
  const bool swaps = m_allocator.config().preemption == KvPreemption::kSwap;
  for (KvTier tier : kKvTiers) {
    const bool usable = m_allocator.policy().mayUse(tier) || (tier == KvTier::kHost && swaps);
    if (!usable || m_allocator.capacityBlocks(tier) == 0 || tierSocket(tier).size() > 0) continue;
    SC_REPORT_ERROR("scoville/kv_cache",
                    fmt::format("{}: socket {} is unbound, but KV placement '{}' (preemption {}) may put blocks on "
                                "tier {} ({} blocks): bind it or give the tier no KV capacity",
                                name(), tierSocket(tier).basename(), m_allocator.policy().name(),
                                swaps ? "swap" : "recompute", kvTierName(tier), m_allocator.capacityBlocks(tier))
                        .c_str());
  }
}

double KvCacheManager::usedBytes(KvTier tier) const {
  return static_cast<double>(m_allocator.usedBlocks(tier) * m_allocator.blockBytes());
}

void KvCacheManager::accrueOccupancy() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const double interval = (now - m_occupancySince).to_seconds();
  for (KvTier tier : kKvTiers) m_occupancyIntegral[kvTierIndex(tier)] += usedBytes(tier) * interval;
  m_occupancySince = now;
}

KvAllocation KvCacheManager::admit(uint64_t requestId, uint64_t promptTokens, uint64_t prefixId,
                                   uint64_t prefixTokens) {
  accrueOccupancy();
  return m_allocator.admit(requestId, promptTokens, prefixId, prefixTokens);
}

KvAllocation KvCacheManager::append(uint64_t requestId, uint64_t tokens, sc_core::sc_time& delay) {
  accrueOccupancy();
  KvAllocation result = m_allocator.append(requestId, tokens);
  for (const KvPreempted& victim : result.preempted) copyBlocks(victim.requestId, victim.moves, delay);
  return result;
}

void KvCacheManager::release(uint64_t requestId) {
  accrueOccupancy();
  m_allocator.release(requestId);
}

bool KvCacheManager::swapIn(uint64_t requestId, sc_core::sc_time& delay) {
  accrueOccupancy();
  std::vector<KvBlockMove> moves;
  if (!m_allocator.swapIn(requestId, moves)) return false;
  copyBlocks(requestId, moves, delay);
  return true;
}

void KvCacheManager::addRun(std::vector<Run>& runs, const Run& run) {
  if (!runs.empty()) {
    Run& last = runs.back();
    if (last.tier == run.tier && last.write == run.write && last.address + last.bytes == run.address) {
      last.bytes += run.bytes;
      return;
    }
  }
  runs.push_back(run);
}

void KvCacheManager::copyBlocks(uint64_t requestId, const std::vector<KvBlockMove>& moves, sc_core::sc_time& delay) {
  if (moves.empty()) return;
  const uint64_t bytes = m_allocator.layerBlockBytes();
  m_runs.clear();
  for (uint32_t layer = 0; layer < m_allocator.shape().layers; ++layer) {
    for (const KvBlockMove& m : moves)
      addRun(m_runs, Run{m.from.tier, false, m_allocator.address(m.from, layer), bytes});
  }
  for (uint32_t layer = 0; layer < m_allocator.shape().layers; ++layer) {
    for (const KvBlockMove& m : moves) addRun(m_runs, Run{m.to.tier, true, m_allocator.address(m.to, layer), bytes});
  }
  tlm::OpExtension context;
  context.requestId = requestId;
  if (issue(m_runs, context, delay) != ::tlm::TLM_OK_RESPONSE) {
    SC_REPORT_ERROR("scoville/kv_cache",
                    fmt::format("{}: a memory tier refused a KV block copy of request {}", name(), requestId).c_str());
  }
}

::tlm::tlm_response_status KvCacheManager::issue(const std::vector<Run>& runs, const tlm::OpExtension& context,
                                                 sc_core::sc_time& delay) {
  std::array<sc_core::sc_time, kKvTierCount> tierDelay;
  tierDelay.fill(delay);
  ::tlm::tlm_response_status worst = ::tlm::TLM_OK_RESPONSE;
  for (const Run& run : runs) {
    const std::size_t i = kvTierIndex(run.tier);
    tlm::PayloadRef payload(m_pool);
    tlm::OpExtension& op = payload.op();
    // KV kinds downstream, so memories account KV traffic apart from weights.
    op.kind = run.write ? tlm::OpKind::kKvAppend : tlm::OpKind::kKvRead;
    op.bytes = run.bytes;
    op.phase = context.phase;
    op.precision = context.precision;
    op.requestId = context.requestId;
    op.layer = context.layer;
    op.srcChip = context.srcChip;
    op.dstChip = context.dstChip;
    payload->set_command(run.write ? ::tlm::TLM_WRITE_COMMAND : ::tlm::TLM_READ_COMMAND);
    payload->set_address(run.address);
    tierSocket(run.tier)->b_transport(*payload, tierDelay[i]);
    const ::tlm::tlm_response_status status = payload->get_response_status();
    if (status != ::tlm::TLM_OK_RESPONSE) {
      if (worst == ::tlm::TLM_OK_RESPONSE) worst = status;
      continue;
    }
    m_transactions[i]->add();
    (run.write ? m_bytesWritten : m_bytesRead)[i]->add(static_cast<double>(run.bytes));
  }
  delay = *std::max_element(tierDelay.begin(), tierDelay.end());
  return worst;
}

void KvCacheManager::bTransport(::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  const bool append = op.kind == tlm::OpKind::kKvAppend;
  if (!append && op.kind != tlm::OpKind::kKvRead) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (!m_allocator.isResident(op.requestId)) {
    payload.set_response_status(::tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const uint64_t end = op.tokenBegin + op.tokenCount;
  if (op.layer >= m_allocator.shape().layers || op.tokenCount == 0 || end > m_allocator.tokens(op.requestId)) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }

  const std::vector<KvBlock>& blocks = m_allocator.blocks(op.requestId);
  const uint64_t blockTokens = m_allocator.blockTokens();
  const uint64_t tokenBytes = m_allocator.shape().bytesPerTokenPerLayer;
  m_runs.clear();
  for (uint64_t t = op.tokenBegin; t < end;) {
    const uint64_t offset = t % blockTokens;
    const uint64_t count = std::min(end - t, blockTokens - offset);
    const KvBlock& block = blocks[t / blockTokens];
    addRun(m_runs,
           Run{block.tier, append, m_allocator.address(block, op.layer) + offset * tokenBytes, count * tokenBytes});
    t += count;
  }
  payload.set_response_status(issue(m_runs, op, delay));
  (append ? m_appends : m_reads).add();
}

}  // namespace scoville::hw
