#include "workloads/ServingScheduler.h"

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>
#include <utility>

namespace scoville::workload {

ServingScheduler::ServingScheduler(const SchedulerConfig& config, std::unique_ptr<hw::KvBlockAllocator> kv,
                                   std::size_t maxResident)
    : m_config(config), m_maxResident(maxResident), m_kv(std::move(kv)) {}

void ServingScheduler::speculate(int draftTokens, std::unique_ptr<AcceptanceModel> acceptance, uint32_t draftLayers) {
  if (draftTokens < 0 || (draftTokens > 0 && acceptance == nullptr)) {
    throw std::invalid_argument("speculative decoding needs draft_tokens >= 0 and an acceptance model");
  }
  m_draftTokens = draftTokens;
  m_acceptance = std::move(acceptance);
  m_draftLayers = draftLayers;
  m_speculation.acceptedPerPosition.assign(static_cast<std::size_t>(draftTokens), 0);
}

uint32_t ServingScheduler::proposals(const Sequence& s, uint64_t generated) const {
  // The next verification checks at most the tokens left but one (its own token is the last).
  const uint64_t left = s.request.outputTokens > generated ? s.request.outputTokens - generated : 0;
  return left < 2 ? 0 : static_cast<uint32_t>(std::min<uint64_t>(static_cast<uint64_t>(m_draftTokens), left - 1));
}

uint32_t ServingScheduler::draftsFor(uint64_t id, uint64_t budget) const {
  if (m_draftTokens == 0 || budget == 0) return 0;
  const Sequence& s = m_sequences.at(id);
  return static_cast<uint32_t>(std::min<uint64_t>(proposals(s, s.generated), budget - 1));
}

void ServingScheduler::planDecode(uint64_t id, uint32_t verify, uint64_t& budget) {
  const uint32_t accepted = verify > 0 ? static_cast<uint32_t>(m_acceptance->draw(static_cast<int>(verify))) : 0;
  m_step.push_back(Planned{id, 1 + uint64_t{verify}, verify, accepted});
  budget -= 1 + uint64_t{verify};
}

void ServingScheduler::submit(const ServingRequest& request) {
  if (request.id == 0 || m_sequences.count(request.id) != 0) {
    throw std::invalid_argument(fmt::format("serving request id {} is zero or already queued", request.id));
  }
  // The most KV it ever holds: the prompt and every output token but the last (never fed back).
  const uint64_t blocks = m_kv->peakSlotsFor(finalKvTokens(request));
  const uint64_t capacity = capacityBlocks();
  if (blocks > capacity) {
    throw std::invalid_argument(fmt::format(
        "request {} needs {} KV blocks ({} prompt + {} output tokens less the last, {} tokens per block, with "
        "the blocks of its sliding window if the model has one) but the cache holds {}",
        request.id, blocks, request.inputTokens, request.outputTokens, m_kv->blockTokens(), capacity));
  }
  if (request.prefilled && request.outputTokens < 2) {
    throw std::invalid_argument(fmt::format("prefilled request {} has no token left to decode", request.id));
  }
  Sequence& s = m_sequences[request.id];
  s.request = request;
  s.prefillTarget = request.inputTokens;
  if (request.prefilled) {
    s.kv = request.inputTokens;
    s.generated = 1;
  }
  (m_config.asyncScheduling ? m_arriving : m_waiting).push_back(request.id);
}

void ServingScheduler::admitArrivals() {
  m_waiting.insert(m_waiting.end(), m_arriving.begin(), m_arriving.end());
  m_arriving.clear();
}

uint64_t ServingScheduler::capacityBlocks() const {
  return m_kv->placedCapacityBlocks();
}

uint64_t ServingScheduler::freeBlocks() const {
  return m_kv->placedFreeBlocks();
}

uint64_t ServingScheduler::watermark() const {
  if (m_config.kvWatermark <= 0) return 0;
  return std::max<uint64_t>(1, static_cast<uint64_t>(m_config.kvWatermark * static_cast<double>(capacityBlocks())));
}

uint64_t ServingScheduler::stillNeeded(uint64_t id) const {
  const uint64_t final = m_kv->peakSlotsFor(finalKvTokens(m_sequences.at(id).request));
  const uint64_t held = m_kv->slotsFor(m_kv->tokens(id));
  return final > held ? final - held : 0;
}

int ServingScheduler::preemptionsOf(uint64_t request) const {
  const auto it = m_sequences.find(request);
  return it == m_sequences.end() ? 0 : it->second.preemptions;
}

int ServingScheduler::recomputesOf(uint64_t request) const {
  const auto it = m_sequences.find(request);
  return it == m_sequences.end() ? 0 : it->second.recomputes;
}

void ServingScheduler::insertByAdmission(std::vector<uint64_t>& list, uint64_t id) const {
  const uint64_t order = m_sequences.at(id).admitted;
  const auto at =
      std::find_if(list.begin(), list.end(), [&](uint64_t other) { return m_sequences.at(other).admitted > order; });
  list.insert(at, id);
}

void ServingScheduler::preempt(const std::vector<hw::KvPreempted>& victims) {
  // Victims come newest first; each returns to the front of the queue (recompute: so the oldest
  // ends first) or joins the swapped requests in admission order (swap).
  for (const hw::KvPreempted& victim : victims) {
    Sequence& s = m_sequences.at(victim.requestId);
    ++s.preemptions;
    ++m_preemptions;
    m_preemptedThisStep = true;
    m_running.erase(std::find(m_running.begin(), m_running.end(), victim.requestId));
    if (victim.mode == hw::KvPreemption::kSwap) {
      // Its blocks are on the host now, progress kept; they come back before it runs again.
      ++m_swapOuts;
      m_swappedOutBlocks += victim.moves.size();
      m_swaps.push_back(KvSwap{victim.requestId, true, victim.moves});
      insertByAdmission(m_swapped, victim.requestId);
    } else {
      recompute(victim.requestId);
    }
  }
}

void ServingScheduler::orderByCachedPrefix() {
  // The queue is oldest first (recomputed requests at the front): a stable sort keeps that order
  // among requests with as many cached tokens.
  m_cachedOrder.clear();
  for (const uint64_t id : m_waiting) {
    const Sequence& s = m_sequences.at(id);
    const ServingRequest& r = s.request;
    const uint64_t blocks = m_kv->cachedBlocksFor(s.prefillTarget, r.prefixId, r.prefixTokens,
                                                  r.sharedTokens > 0 ? kSharedPrefixId : 0, r.sharedTokens);
    m_cachedOrder.emplace_back(blocks, id);
  }
  std::stable_sort(m_cachedOrder.begin(), m_cachedOrder.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < m_cachedOrder.size(); ++i) m_waiting[i] = m_cachedOrder[i].second;
}

void ServingScheduler::takeCacheMoves(uint64_t id) {
  m_cacheMoves.clear();
  m_kv->takeCacheMoves(m_cacheMoves);
  for (const hw::KvCacheMove& m : m_cacheMoves) {
    // Consecutive copies the same way are one list (a copy engine merges what it can).
    if (m_swaps.empty() || !m_swaps.back().cache || m_swaps.back().toHost != m.toHost || m_swaps.back().request != id) {
      m_swaps.push_back(KvSwap{id, m.toHost, {}, true});
    }
    m_swaps.back().moves.push_back(m.move);
  }
}

void ServingScheduler::recompute(uint64_t id) {
  Sequence& s = m_sequences.at(id);
  ++s.recomputes;
  ++m_recomputes;
  // Re-run everything it held (a request preempted before sampling re-runs its prompt and samples
  // at the end, as the first time): the prompt and every generated token but the last, which is
  // fed by the next decode; not s.kv, which falls short when it is preempted again mid-recompute.
  s.samplesAtPrefillEnd = s.generated == 0;
  s.prefillTarget = s.generated == 0 ? s.request.inputTokens : s.request.inputTokens + s.generated - 1;
  s.kv = 0;
  m_waiting.push_front(id);
}

void ServingScheduler::planChunk(uint64_t id, uint64_t& budget) {
  const Sequence& s = m_sequences.at(id);
  const uint64_t chunk = std::min({s.prefillTarget - s.kv, static_cast<uint64_t>(m_config.prefillChunk), budget});
  m_step.push_back(Planned{id, chunk});
  budget -= chunk;
}

void ServingScheduler::resumeSwapped(std::size_t maxBatch, uint64_t& budget) {
  // As vLLM: nothing comes back in a step that had to preempt (there was no room), oldest first,
  // and nothing overtakes a swapped request that does not fit yet.
  while (!m_preemptedThisStep && !m_swapped.empty() && m_step.size() < maxBatch && budget > 0) {
    const uint64_t id = m_swapped.front();
    const Sequence& s = m_sequences.at(id);
    const uint64_t onHost = m_kv->slotsOn(id, hw::KvTier::kHost);
    // A decode's token may need a new block; with room for it the decode below never preempts.
    const uint32_t verify = s.decoding() ? draftsFor(id, budget) : 0;
    const uint64_t grows = s.decoding() ? m_kv->slotsAdded(m_kv->tokens(id), 1 + uint64_t{verify}) : 0;
    const uint64_t need = onHost + grows + (m_running.empty() ? 0 : watermark());
    std::vector<hw::KvBlockMove> moves;
    const bool resumed = freeBlocks() >= need && m_kv->swapIn(id, moves);
    takeCacheMoves(id);
    if (!resumed) {
      if (!m_running.empty()) return;  // waits for room: running requests finish
      // Nothing resident, yet it does not fit: it could never come back. Recompute it instead
      // (it fits the empty cache: submit() checked its largest cache). Unreachable while swapIn
      // places blocks as admission does; kept so that no request is ever stranded on the host.
      m_kv->release(id);
      m_swapped.erase(m_swapped.begin());
      recompute(id);
      return;
    }
    ++m_swapIns;
    m_swappedInBlocks += moves.size();
    m_swaps.push_back(KvSwap{id, false, std::move(moves)});
    m_swapped.erase(m_swapped.begin());
    insertByAdmission(m_running, id);
    if (!s.decoding()) {
      planChunk(id, budget);
      continue;
    }
    const hw::KvAllocation grown = m_kv->append(id, 1 + uint64_t{verify});
    takeCacheMoves(id);
    if (!grown.ok || !grown.preempted.empty()) {
      throw std::logic_error(fmt::format("request {} preempted while resuming from swap with room checked", id));
    }
    planDecode(id, verify, budget);
  }
}

StepBatch ServingScheduler::next() {
  StepBatch batch = compose();
  // A request prefilled elsewhere is admitted by one composition and decodes from the next: when
  // it was all there was, compose that next step now, so that an empty step means nothing can run.
  if (batch.sequences.empty() && m_swaps.empty() && !m_running.empty()) batch = compose();
  return batch;
}

StepBatch ServingScheduler::compose() {
  m_step.clear();
  m_stepIds.clear();
  m_swaps.clear();
  m_preemptedThisStep = false;
  const auto maxBatch = static_cast<std::size_t>(m_config.maxBatch);
  uint64_t budget = static_cast<uint64_t>(m_config.maxTokensPerStep);

  // 1. Decodes, oldest first; each first makes room for its new token's KV.
  for (std::size_t i = 0; i < m_running.size() && m_step.size() < maxBatch && budget > 0; ++i) {
    const uint64_t id = m_running[i];
    if (!m_sequences.at(id).decoding()) continue;
    const uint32_t verify = draftsFor(id, budget);
    hw::KvAllocation grown = m_kv->append(id, 1 + uint64_t{verify});
    takeCacheMoves(id);
    if (!grown.preempted.empty()) {
      // Victims are the newest requests: later in m_running than i (or this one itself).
      preempt(grown.preempted);
      if (!grown.ok) break;  // it preempted itself: nothing newer is left
    }
    planDecode(id, verify, budget);
  }
  // 2. Prompts in progress, 3. swapped requests resumed, then 4. newly admitted ones.
  for (std::size_t i = 0; i < m_running.size() && m_step.size() < maxBatch && budget > 0; ++i) {
    const uint64_t id = m_running[i];
    if (!m_sequences.at(id).decoding()) planChunk(id, budget);
  }
  resumeSwapped(maxBatch, budget);
  const bool reserve = m_config.admission == KvAdmission::kReserve;
  uint64_t reserved = 0;  // reserve admission: slots the running requests may still allocate
  if (reserve && !m_waiting.empty()) {
    for (const uint64_t id : m_running) reserved += stillNeeded(id);
  }
  if (m_config.queuePolicy == SchedulerConfig::QueuePolicy::kLongestPrefix && m_waiting.size() > 1) {
    orderByCachedPrefix();
  }
  while (m_swapped.empty() && !m_waiting.empty() && m_step.size() < maxBatch && budget > 0 &&
         (m_maxResident == 0 || m_running.size() + m_swapped.size() < m_maxResident)) {
    const uint64_t id = m_waiting.front();
    Sequence& s = m_sequences.at(id);
    if (reserve) {
      // Everything it will hold, beside what the running requests still need (with nothing
      // running it fits: submit() checked it against the whole cache).
      if (freeBlocks() < m_kv->peakSlotsFor(finalKvTokens(s.request)) + reserved) break;
    } else {
      // A watermark of free blocks (kv_watermark) is left so that running requests can grow: a
      // request admitted into the last free blocks would preempt itself at its first new block.
      // With nothing running, it only has to fit.
      const uint64_t need = m_kv->slotsFor(s.prefillTarget);
      if (!m_running.empty() && freeBlocks() < need + watermark()) break;
    }
    const hw::KvAllocation admitted =
        m_kv->admit(id, s.prefillTarget, s.request.prefixId, s.request.prefixTokens,
                    s.request.sharedTokens > 0 ? kSharedPrefixId : 0, s.request.sharedTokens);
    takeCacheMoves(id);
    if (!admitted.ok) break;  // in queue order: no overtaking
    if (reserve) reserved += stillNeeded(id);
    // Prefix caching: the cached blocks' tokens are computed already (at least the prompt's
    // last token is computed again: it samples).
    const uint64_t cached = std::min(admitted.sharedBlocks * m_kv->blockTokens(), s.prefillTarget - 1);
    if (m_kv->config().prefixCaching) {
      s.kv = std::max(s.kv, cached);
      m_promptTokens += s.prefillTarget;
      m_cachedTokens += cached;
    }
    s.admitted = m_nextAdmission++;
    m_waiting.pop_front();
    m_running.push_back(id);
    if (s.decoding()) continue;  // prefilled elsewhere: it decodes from the next step
    planChunk(id, budget);
  }

  StepBatch batch;
  const uint64_t slots = m_kv->capacityBlocks(hw::KvTier::kLocalHbm);
  batch.kvLayerStride = slots * m_kv->layerBlockBytes();
  batch.kvLayerRegions = m_kv->shape().layers - m_draftLayers;  // the target's; the draft's follow
  if (m_kv->policy().mayUse(hw::KvTier::kRemoteHbm) || m_kv->policy().mayUse(hw::KvTier::kHost)) batch.kv = m_kv.get();
  for (const Planned& p : m_step) {
    const Sequence& s = m_sequences.at(p.id);
    const bool lastChunk = !s.decoding() && s.kv + p.tokens == s.prefillTarget;
    const std::vector<hw::KvBlock>& blocks = m_kv->blocks(p.id);
    const bool samples = s.decoding() || (lastChunk && s.samplesAtPrefillEnd);
    StepSequence q{p.id, s.kv, p.tokens, samples, blocks.empty() ? 0 : m_kv->address(blocks.front(), 0)};
    if (m_draftTokens > 0) {
      q.verify = p.verify;
      q.accepted = p.accepted;
      // What the draft proposes for the sequence's next verification, after this step's tokens.
      const uint64_t produced = !samples ? 0 : s.decoding() ? 1 + uint64_t{p.accepted} : 1;
      q.propose = samples || lastChunk ? proposals(s, s.generated + produced) : 0;
    }
    batch.sequences.push_back(q);
    m_stepIds.push_back(p.id);
  }
  return batch;
}

std::vector<StepOutcome> ServingScheduler::complete() {
  std::vector<StepOutcome> out;
  if (std::any_of(m_step.begin(), m_step.end(), [](const Planned& p) { return p.verify > 0; })) {
    ++m_speculation.verifySteps;
  }
  for (const Planned& p : m_step) {
    Sequence& s = m_sequences.at(p.id);
    const bool wasDecoding = s.decoding();
    s.kv += p.tokens;
    StepOutcome o{p.id, false, false, s.preemptions};
    if (p.verify > 0) {
      // The rejected drafts' KV goes; the accepted ones and the token before them stay.
      s.kv -= p.verify - p.accepted;
      m_kv->rollback(p.id, s.kv);
      ++m_speculation.drafts;
      m_speculation.draftTokens += p.verify;
      m_speculation.acceptedTokens += p.accepted;
      for (uint32_t i = 0; i < p.accepted; ++i) ++m_speculation.acceptedPerPosition[i];
    }
    if (wasDecoding || (s.decoding() && s.samplesAtPrefillEnd)) {
      o.tokens = wasDecoding ? 1 + p.accepted : 1;
      s.generated += o.tokens;
      o.producedToken = true;
    }
    if (s.decoding()) s.samplesAtPrefillEnd = true;  // later prefills (after preemption) are recomputes
    if (s.generated >= s.request.outputTokens) {
      o.finished = true;
      m_kv->publish(p.id, s.kv);  // prefix caching: its KV stays for the conversation's next turn
      m_kv->release(p.id);
      m_running.erase(std::find(m_running.begin(), m_running.end(), p.id));
      m_sequences.erase(p.id);
    }
    out.push_back(o);
  }
  m_step.clear();
  m_stepIds.clear();
  return out;
}

}  // namespace scoville::workload
