#include "runtime/StepStatistics.h"

#include <algorithm>

#include "workloads/Roofline.h"

namespace scoville::runtime {

using namespace workload;  // the plan and batch types this file reads

void StepStatistics::stepDone(Replica& r, const StepBatch& batch, const sc_core::sc_time& start,
                              const sc_core::sc_time* origin) {
  const double step = (sc_core::sc_time_stamp() - start).to_seconds();
  const sc_core::sc_time& opsStart = origin != nullptr ? *origin : start;
  for (std::size_t c = 0; c < r.drivers.size(); ++c) {
    const double bound = workload::rooflineBoundS(r.drivers[c]->plan(), r.planners[c]->chip());
    if (bound <= 0) continue;
    const double ratio = step / bound;
    if (m_tightestRatio == 0.0 || ratio < m_tightestRatio) m_tightestRatio = ratio;
    if (workload::beatsRoofline(step, bound)) ++m_rooflineViolations;
  }
  ReplicaStats& s = r.stats;
  const StepDriver& lead = *r.drivers.front();
  for (std::size_t i = 0; i < lead.plan().ops.size(); ++i) {
    const PlannedOp& op = lead.plan().ops[i];
    const StepDriver::OpTiming& t = lead.timings()[i];
    OpTotals& o = s.perOp[op.name];
    ++o.tiles;
    o.bytes += static_cast<double>(op.bytes());
    o.flops += op.flops();
    o.vectorOps += op.vectorOps;
    o.computeS += (t.computeEnd - t.computeStart).to_seconds();
    o.stallS += (t.computeStart - (i > 0 ? lead.timings()[i - 1].collectiveEnd : opsStart)).to_seconds();
    o.collectiveS += (t.collectiveEnd - t.computeEnd).to_seconds();
  }
  const hw::KvBlockAllocator& kv = r.scheduler->kv();
  s.peakKvBlocks = kv.peakBlocks(hw::KvTier::kLocalHbm);
  s.kvBlocks = kv.capacityBlocks(hw::KvTier::kLocalHbm);
  s.peakRemoteKvBlocks = kv.peakBlocks(hw::KvTier::kRemoteHbm);
  s.remoteKvBlocks = kv.capacityBlocks(hw::KvTier::kRemoteHbm);
  s.peakHostKvBlocks = kv.peakBlocks(hw::KvTier::kHost);
  for (hw::KvTier tier : hw::kKvTiers) {
    s.kvBlockS[hw::kvTierIndex(tier)] += static_cast<double>(kv.usedBlocks(tier)) * step;
  }
  s.kvOccupancyS += step;
  if (batch.sequences.empty()) {
    // Experts across replicas: no request of its own, its chip served the others' tokens.
    ++s.idleSteps;
    s.idleS += step;
    return;
  }
  ++s.steps;
  uint64_t prefill = 0, decode = 0;
  for (const StepSequence& q : batch.sequences) (q.decodes() && q.context > 0 ? decode : prefill) += q.tokens;
  s.sequences += batch.sequences.size();
  s.prefillTokens += prefill;
  s.decodeTokens += decode;
  s.busyS += step;
  if (decode == 0) {
    ++s.prefillSteps;
    s.prefillOnlyS += step;
  } else if (prefill == 0) {
    ++s.decodeSteps;
    s.decodeOnlyS += step;
  } else {
    ++s.mixedSteps;
    s.mixedS += step;
  }
}

void StepStatistics::schedulerUpdated(Replica& r) {
  const ServingScheduler& scheduler = *r.scheduler;
  r.stats.preemptions = scheduler.preemptions();
  r.stats.recomputes = scheduler.recomputes();
  r.stats.swapOuts = scheduler.swapOuts();
  r.stats.swapIns = scheduler.swapIns();
  r.stats.speculation = scheduler.speculation();
  r.stats.promptTokensAdmitted = scheduler.promptTokensAdmitted();
  r.stats.cachedPromptTokens = scheduler.cachedPromptTokens();
  r.stats.cachedBlocks = scheduler.kv().cachedBlocks();
  r.stats.peakCachedBlocks = std::max(r.stats.peakCachedBlocks, r.stats.cachedBlocks);
  r.stats.evictedBlocks = scheduler.kv().evictedBlocks();
  r.stats.offloadedBlocks = scheduler.offloadedBlocks();
  r.stats.restoredBlocks = scheduler.restoredBlocks();
  for (hw::KvTier tier : hw::kKvTiers)
    r.stats.cachedBlocksOn[hw::kvTierIndex(tier)] = scheduler.kv().cachedBlocksOn(tier);
}

void StepStatistics::layerRouted(Replica& r, const std::vector<uint64_t>& counts, uint64_t tokens) {
  const auto experts = static_cast<std::size_t>(m_model.routedExperts);
  const double mean =
      static_cast<double>(tokens * static_cast<uint64_t>(m_model.expertsPerToken)) / static_cast<double>(experts);
  r.stats.expertImbalanceSum += static_cast<double>(*std::max_element(counts.begin(), counts.end())) / mean;
  if (m_set.expertsAcross) {
    // Counted over all replicas' tokens (chipsLoaded).
  } else if (!r.expertOwner.empty()) {
    std::vector<uint64_t> perChip(static_cast<std::size_t>(m_set.tp), 0);
    for (std::size_t e = 0; e < experts; ++e) perChip[static_cast<std::size_t>(r.expertOwner[e])] += counts[e];
    r.stats.chipImbalanceSum += static_cast<double>(*std::max_element(perChip.begin(), perChip.end())) /
                                (mean * static_cast<double>(experts) / m_set.tp);
  } else {
    r.stats.chipImbalanceSum += 1.0;  // every chip computes a slice of every expert
  }
  ++r.stats.routedLayers;
}

void StepStatistics::chipsLoaded(const std::vector<uint64_t>& perChip) {
  uint64_t total = 0;
  for (uint64_t v : perChip) total += v;
  if (total == 0) return;
  const double mean = static_cast<double>(total) / static_cast<double>(perChip.size());
  m_set.replicas.front()->stats.chipImbalanceSum +=
      static_cast<double>(*std::max_element(perChip.begin(), perChip.end())) / mean;
  ++m_chipImbalanceLayers;
}

}  // namespace scoville::runtime
