#include "hw/kv/KvBlockAllocator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace scoville::hw {

KvBlockAllocator::KvBlockAllocator(const KvCacheConfig& config, const KvModelShape& shape,
                                   const KvTierCapacities& capacities, std::unique_ptr<KvPlacementPolicy> policy)
    : m_config(config),
      m_shape(shape),
      m_blockTokens(static_cast<uint64_t>(config.blockTokens)),
      m_layerBlockBytes(m_blockTokens * shape.bytesPerTokenPerLayer),
      m_policy(std::move(policy)),
      m_stats("kv_blocks", "paged KV-cache blocks per tier"),
      m_preemptions(m_stats.counter("preemptions", "", "requests preempted for lack of KV space")),
      m_recomputes(m_stats.counter("recomputes", "", "preempted requests whose blocks were dropped")),
      m_swapOuts(m_stats.counter("swap_outs", "", "preempted requests whose blocks moved to host")),
      m_swapOutBytes(m_stats.counter("swap_out_bytes", "B", "KV bytes moved to host by swap-out")),
      m_swapInBytes(m_stats.counter("swap_in_bytes", "B", "KV bytes moved back from host by swap-in")),
      m_sharedBlockHits(m_stats.counter("shared_block_hits", "", "prefix blocks reused instead of allocated")) {
  if (m_blockTokens == 0 || blockBytes() == 0) {
    throw std::invalid_argument("KV block size is zero: block_tokens, layers and bytes per token must be > 0");
  }
  if (!m_policy) throw std::invalid_argument("KV block allocator needs a placement policy");
  for (KvTier tier : kKvTiers) {
    m_tiers[kvTierIndex(tier)].slots = capacities.of(tier) / blockBytes();
    const std::string name = kvTierName(tier);
    m_stats.formula(name + "_blocks_capacity", "", "KV blocks the tier can hold",
                    [this, tier] { return static_cast<double>(capacityBlocks(tier)); });
    m_stats.formula(name + "_blocks_used", "", "KV blocks in use now",
                    [this, tier] { return static_cast<double>(usedBlocks(tier)); });
    m_stats.formula(name + "_blocks_peak", "", "most KV blocks in use at once",
                    [this, tier] { return static_cast<double>(peakBlocks(tier)); });
  }
}

uint64_t KvBlockAllocator::usedBlocks(KvTier tier) const {
  const TierSlots& t = m_tiers[kvTierIndex(tier)];
  return t.highWater - t.freed.size();
}

uint64_t KvBlockAllocator::placedCapacityBlocks() const {
  uint64_t total = 0;
  for (KvTier tier : kKvTiers) total += m_policy->mayUse(tier) ? capacityBlocks(tier) : 0;
  return total;
}

uint64_t KvBlockAllocator::placedFreeBlocks() const {
  uint64_t total = 0;
  for (KvTier tier : kKvTiers) total += m_policy->mayUse(tier) ? capacityBlocks(tier) - usedBlocks(tier) : 0;
  return total;
}

KvTierBlocks KvBlockAllocator::freeBlocks() const {
  KvTierBlocks free{};
  for (KvTier tier : kKvTiers) free[kvTierIndex(tier)] = capacityBlocks(tier) - usedBlocks(tier);
  return free;
}

void KvBlockAllocator::addTokensByTier(uint64_t requestId, uint64_t begin, uint64_t end, KvTierBlocks& out) const {
  const std::vector<KvBlock>& table = blocks(requestId);
  for (uint64_t i = begin / m_blockTokens; i * m_blockTokens < end; ++i) {
    const uint64_t from = std::max(begin, i * m_blockTokens);
    const uint64_t to = std::min(end, (i + 1) * m_blockTokens);
    const KvTier tier = i < table.size() && table[i].tier != KvTier::kSram ? table[i].tier : KvTier::kLocalHbm;
    out[kvTierIndex(tier)] += to - from;
  }
}

uint64_t KvBlockAllocator::address(const KvBlock& block, uint32_t layer) const {
  return (static_cast<uint64_t>(layer) * capacityBlocks(block.tier) + block.slot) * m_layerBlockBytes;
}

std::optional<KvBlock> KvBlockAllocator::allocateSlot(KvTier tier) {
  TierSlots& t = m_tiers[kvTierIndex(tier)];
  uint64_t slot = 0;
  if (!t.freed.empty()) {
    slot = t.freed.top();
    t.freed.pop();
  } else if (t.highWater < t.slots) {
    slot = t.highWater++;
    t.refs.push_back(0);
  } else {
    return std::nullopt;
  }
  t.refs[slot] = 1;
  t.peak = std::max(t.peak, usedBlocks(tier));
  return KvBlock{tier, slot};
}

void KvBlockAllocator::addRef(const KvBlock& block) {
  ++m_tiers[kvTierIndex(block.tier)].refs[block.slot];
}

void KvBlockAllocator::dropRef(const KvBlock& block) {
  TierSlots& t = m_tiers[kvTierIndex(block.tier)];
  if (--t.refs[block.slot] == 0) t.freed.push(block.slot);
}

uint32_t KvBlockAllocator::refs(const KvBlock& block) const {
  return m_tiers[kvTierIndex(block.tier)].refs[block.slot];
}

KvBlockAllocator::Request& KvBlockAllocator::find(uint64_t requestId) {
  return const_cast<Request&>(static_cast<const KvBlockAllocator&>(*this).find(requestId));
}

const KvBlockAllocator::Request& KvBlockAllocator::find(uint64_t requestId) const {
  const auto it = m_requests.find(requestId);
  if (it == m_requests.end()) throw std::invalid_argument(fmt::format("unknown KV request {}", requestId));
  return it->second;
}

bool KvBlockAllocator::isResident(uint64_t requestId) const {
  const auto it = m_requests.find(requestId);
  return it != m_requests.end() && !it->second.swapped;
}

bool KvBlockAllocator::isSwapped(uint64_t requestId) const {
  const auto it = m_requests.find(requestId);
  return it != m_requests.end() && it->second.swapped;
}

uint64_t KvBlockAllocator::tokens(uint64_t requestId) const {
  return find(requestId).tokens;
}

const std::vector<KvBlock>& KvBlockAllocator::blocks(uint64_t requestId) const {
  return find(requestId).blocks;
}

bool KvBlockAllocator::growTo(uint64_t requestId, Request& request, uint64_t count) {
  while (request.blocks.size() < count) {
    const KvTierBlocks free = freeBlocks();
    const std::optional<KvTier> tier = m_policy->place(free, KvPlacementQuery{requestId, request.blocks.size()});
    if (!tier) return false;
    if (!m_policy->mayUse(*tier) || free[kvTierIndex(*tier)] == 0) {
      throw std::logic_error(
          fmt::format("KV placement policy '{}' chose {} against its contract", m_policy->name(), kvTierName(*tier)));
    }
    request.blocks.push_back(*allocateSlot(*tier));
  }
  return true;
}

void KvBlockAllocator::shrinkTo(Request& request, uint64_t count) {
  while (request.blocks.size() > count) {
    dropRef(request.blocks.back());
    request.blocks.pop_back();
  }
}

void KvBlockAllocator::trimPrefix(uint64_t prefixId) {
  const auto it = m_prefixes.find(prefixId);
  if (it == m_prefixes.end()) return;
  // Every user of prefix block i also uses blocks 0..i-1, so the live blocks are a leading run.
  std::vector<KvBlock>& blocks = it->second;
  const auto firstDead = std::find_if(blocks.begin(), blocks.end(), [this](const KvBlock& b) { return refs(b) == 0; });
  blocks.erase(firstDead, blocks.end());
  if (blocks.empty()) m_prefixes.erase(it);
}

KvAllocation KvBlockAllocator::admit(uint64_t requestId, uint64_t promptTokens, uint64_t prefixId,
                                     uint64_t prefixTokens) {
  if (m_requests.count(requestId) != 0) {
    throw std::invalid_argument(fmt::format("KV request {} is already admitted", requestId));
  }
  Request& request = m_requests[requestId];
  request.rank = m_nextRank++;
  request.prefixId = m_config.prefixSharing ? prefixId : 0;
  const uint64_t sharable = std::min(prefixTokens, promptTokens) / m_blockTokens;
  uint64_t reused = 0;
  if (request.prefixId != 0) {
    const std::vector<KvBlock>& prefix = m_prefixes[request.prefixId];
    reused = std::min<uint64_t>(sharable, prefix.size());
    for (uint64_t i = 0; i < reused; ++i) {
      addRef(prefix[i]);
      request.blocks.push_back(prefix[i]);
    }
  }

  KvAllocation out;
  if (!growTo(requestId, request, blocksFor(promptTokens))) {
    shrinkTo(request, 0);
    const uint64_t prefix = request.prefixId;
    m_requests.erase(requestId);
    trimPrefix(prefix);
    return out;
  }
  if (request.prefixId != 0) {
    std::vector<KvBlock>& prefix = m_prefixes[request.prefixId];
    for (uint64_t i = prefix.size(); i < sharable; ++i) prefix.push_back(request.blocks[i]);
    trimPrefix(request.prefixId);
  }
  request.tokens = promptTokens;
  m_residentByRank[request.rank] = requestId;
  m_sharedBlockHits.add(static_cast<double>(reused));
  out.ok = true;
  out.sharedBlocks = reused;
  return out;
}

KvAllocation KvBlockAllocator::append(uint64_t requestId, uint64_t tokens) {
  Request& request = find(requestId);
  if (request.swapped) throw std::invalid_argument(fmt::format("KV request {} is swapped out", requestId));
  const uint64_t target = blocksFor(request.tokens + tokens);
  const uint64_t before = request.blocks.size();
  KvAllocation out;
  while (!growTo(requestId, request, target)) {
    const uint64_t victim = m_residentByRank.rbegin()->second;
    if (victim == requestId) {
      shrinkTo(request, before);
      out.preempted.push_back(preempt(requestId));
      return out;
    }
    out.preempted.push_back(preempt(victim));
  }
  request.tokens += tokens;
  out.ok = true;
  return out;
}

KvPreempted KvBlockAllocator::preempt(uint64_t requestId) {
  Request& request = find(requestId);
  m_preemptions.add();
  m_residentByRank.erase(request.rank);
  KvPreempted result{requestId, m_config.preemption, request.tokens, {}};
  if (m_config.preemption == KvPreemption::kSwap) {
    std::vector<std::size_t> movable;
    for (std::size_t i = 0; i < request.blocks.size(); ++i) {
      const KvBlock& b = request.blocks[i];
      if (refs(b) == 1 && b.tier != KvTier::kHost) movable.push_back(i);
    }
    if (movable.size() <= freeBlocks()[kvTierIndex(KvTier::kHost)]) {
      for (std::size_t i : movable) {
        const KvBlock to = *allocateSlot(KvTier::kHost);
        result.moves.push_back(KvBlockMove{request.blocks[i], to});
        dropRef(request.blocks[i]);
        request.blocks[i] = to;
      }
      request.swapped = true;
      request.swappedBlocks = std::move(movable);
      m_swapOuts.add();
      m_swapOutBytes.add(static_cast<double>(result.moves.size() * blockBytes()));
      trimPrefix(request.prefixId);
      return result;
    }
    result.mode = KvPreemption::kRecompute;
  }
  m_recomputes.add();
  release(requestId);
  return result;
}

void KvBlockAllocator::release(uint64_t requestId) {
  Request& request = find(requestId);
  if (!request.swapped) m_residentByRank.erase(request.rank);
  shrinkTo(request, 0);
  const uint64_t prefix = request.prefixId;
  m_requests.erase(requestId);
  trimPrefix(prefix);
}

bool KvBlockAllocator::swapIn(uint64_t requestId, std::vector<KvBlockMove>& moves) {
  Request& request = find(requestId);
  if (!request.swapped) throw std::invalid_argument(fmt::format("KV request {} is not swapped out", requestId));
  moves.clear();
  for (std::size_t i : request.swappedBlocks) {
    KvTierBlocks free = freeBlocks();
    free[kvTierIndex(KvTier::kHost)] = 0;
    const std::optional<KvTier> tier = m_policy->place(free, KvPlacementQuery{requestId, i});
    if (!tier || free[kvTierIndex(*tier)] == 0) {
      for (const KvBlockMove& m : moves) dropRef(m.to);
      moves.clear();
      return false;
    }
    moves.push_back(KvBlockMove{request.blocks[i], *allocateSlot(*tier)});
  }
  for (std::size_t k = 0; k < moves.size(); ++k) {
    dropRef(moves[k].from);
    request.blocks[request.swappedBlocks[k]] = moves[k].to;
  }
  m_swapInBytes.add(static_cast<double>(moves.size() * blockBytes()));
  request.swapped = false;
  request.swappedBlocks.clear();
  m_residentByRank[request.rank] = requestId;
  return true;
}

}  // namespace scoville::hw
