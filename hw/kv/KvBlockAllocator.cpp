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
  const KvTierBlocks free = freeBlocks();
  for (KvTier tier : kKvTiers) total += m_policy->mayUse(tier) ? free[kvTierIndex(tier)] : 0;
  return total;
}

KvTierBlocks KvBlockAllocator::freeBlocks() const {
  // A block only the prefix cache holds is evicted on demand: it counts as free.
  KvTierBlocks free{};
  for (KvTier tier : kKvTiers) {
    free[kvTierIndex(tier)] = capacityBlocks(tier) - usedBlocks(tier) + m_tiers[kvTierIndex(tier)].cacheOnly;
  }
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
  if (t.freed.empty() && t.highWater >= t.slots && t.cacheOnly > 0) evictOne(tier);
  if (!t.freed.empty()) {
    slot = t.freed.top();
    t.freed.pop();
  } else if (t.highWater < t.slots) {
    slot = t.highWater++;
    t.refs.push_back(0);
    t.cached.push_back(0);
  } else {
    return std::nullopt;
  }
  t.refs[slot] = 1;
  t.peak = std::max(t.peak, usedBlocks(tier));
  return KvBlock{tier, slot};
}

void KvBlockAllocator::addRef(const KvBlock& block) {
  TierSlots& t = m_tiers[kvTierIndex(block.tier)];
  if (++t.refs[block.slot] == 2 && t.cached[block.slot] != 0) --t.cacheOnly;
}

void KvBlockAllocator::dropRef(const KvBlock& block) {
  TierSlots& t = m_tiers[kvTierIndex(block.tier)];
  const uint32_t left = --t.refs[block.slot];
  if (left == 0) t.freed.push(block.slot);
  if (left == 1 && t.cached[block.slot] != 0) ++t.cacheOnly;
}

void KvBlockAllocator::cache(const KvBlock& block) {
  addRef(block);  // one reference per prefix holding it (a shared prefix's blocks are in many)
  TierSlots& t = m_tiers[kvTierIndex(block.tier)];
  if (t.cached[block.slot] != 0) return;
  t.cached[block.slot] = 1;
  ++t.cachedCount;
  if (t.refs[block.slot] == 1) ++t.cacheOnly;
  ++m_cachedBlocks;
}

bool KvBlockAllocator::evictOne(KvTier tier) {
  // The least recently used prefix whose last block on `tier` is used by no request (its earlier
  // blocks there are used by at least as many, so that is the only candidate).
  std::pair<uint64_t, uint64_t> best{~uint64_t{0}, 0};  // (last use, prefix id)
  std::size_t bestIndex = 0;
  for (const auto& [id, blocks] : m_prefixes) {
    auto it = std::find_if(blocks.rbegin(), blocks.rend(), [tier](const KvBlock& b) { return b.tier == tier; });
    if (it == blocks.rend() || refs(*it) != 1) continue;
    const auto use = m_prefixUse.find(id);
    const std::pair<uint64_t, uint64_t> key{use == m_prefixUse.end() ? 0 : use->second, id};
    if (key < best) {
      best = key;
      bestIndex = static_cast<std::size_t>(blocks.rend() - it) - 1;
    }
  }
  if (best.first == ~uint64_t{0}) return false;
  const uint64_t prefixId = best.second;
  if (m_config.prefixCacheOffload && tier != KvTier::kHost) {
    // To the host, evicting there first if it has no free slot (never this block: it is not there).
    if (const std::optional<KvBlock> to = allocateSlot(KvTier::kHost)) {
      const auto it = m_prefixes.find(prefixId);
      if (it == m_prefixes.end() || it->second.size() <= bestIndex) {
        // Freeing the host slot dropped this block along with the prefix's later host blocks (a
        // prefix placed across tiers): its slot on `tier` is free already.
        dropRef(*to);
        return true;
      }
      KvBlock& block = it->second[bestIndex];
      m_cacheMoves.push_back(KvCacheMove{KvBlockMove{block, *to}, true});
      relocate(block, *to);
      block = *to;
      ++m_offloaded;
      return true;
    }
  }
  std::vector<KvBlock>& blocks = m_prefixes.at(prefixId);
  while (blocks.size() > bestIndex) {
    const KvBlock dropped = blocks.back();
    blocks.pop_back();
    TierSlots& t = m_tiers[kvTierIndex(dropped.tier)];
    t.cached[dropped.slot] = 0;
    --t.cacheOnly;
    --t.cachedCount;
    --m_cachedBlocks;
    ++m_evicted;
    dropRef(dropped);
  }
  if (blocks.empty()) {
    m_prefixes.erase(prefixId);
    m_prefixUse.erase(prefixId);
  }
  return true;
}

void KvBlockAllocator::relocate(const KvBlock& from, const KvBlock& to) {
  TierSlots& f = m_tiers[kvTierIndex(from.tier)];
  TierSlots& t = m_tiers[kvTierIndex(to.tier)];
  const uint32_t users = f.refs[from.slot];
  t.refs[to.slot] = users;
  t.cached[to.slot] = 1;
  ++t.cachedCount;
  --f.cachedCount;
  if (users == 1) {
    ++t.cacheOnly;
    --f.cacheOnly;
  }
  f.cached[from.slot] = 0;
  f.refs[from.slot] = 0;
  f.freed.push(from.slot);
}

uint64_t KvBlockAllocator::restore(std::vector<KvBlock>& prefix, uint64_t count, uint64_t requestId) {
  const uint64_t held = std::min<uint64_t>(count, prefix.size());
  // Pinned, the prefix's own blocks are never what a restored block's new slot evicts.
  for (uint64_t i = 0; i < held; ++i) addRef(prefix[i]);
  uint64_t usable = count;
  for (uint64_t i = 0; i < held; ++i) {
    KvBlock& block = prefix[i];
    if (block.tier != KvTier::kHost || refs(block) != 2) continue;  // placed there, or shared: read in place
    KvTierBlocks free = freeBlocks();
    free[kvTierIndex(KvTier::kHost)] = 0;
    const std::optional<KvTier> tier = m_policy->place(free, KvPlacementQuery{requestId, i});
    if (!tier) {
      if (m_policy->mayUse(KvTier::kHost)) continue;  // read over the host link where it is
      usable = i;
      break;
    }
    const KvBlock to = *allocateSlot(*tier);
    m_cacheMoves.push_back(KvCacheMove{KvBlockMove{block, to}, false});
    relocate(block, to);
    block = to;
    ++m_restored;
  }
  for (uint64_t i = 0; i < held; ++i) dropRef(prefix[i]);
  return usable;
}

uint64_t KvBlockAllocator::cachedBlocksFor(uint64_t promptTokens, uint64_t prefixId, uint64_t prefixTokens,
                                           uint64_t sharedId, uint64_t sharedTokens) const {
  if (!m_config.prefixCaching || prefixId == 0) return 0;
  const auto own = m_prefixes.find(prefixId);
  if (own != m_prefixes.end() && !own->second.empty()) {
    return std::min<uint64_t>(std::min(prefixTokens, promptTokens) / m_blockTokens, own->second.size());
  }
  // A new conversation begins with the shared prefix's blocks.
  const auto shared = sharedId != 0 && sharedId != prefixId ? m_prefixes.find(sharedId) : m_prefixes.end();
  if (shared == m_prefixes.end()) return 0;
  const uint64_t sharable = std::min({prefixTokens, promptTokens, sharedTokens}) / m_blockTokens;
  return std::min<uint64_t>(sharable, shared->second.size());
}

void KvBlockAllocator::takeCacheMoves(std::vector<KvCacheMove>& out) {
  out.insert(out.end(), m_cacheMoves.begin(), m_cacheMoves.end());
  m_cacheMoves.clear();
}

void KvBlockAllocator::publish(uint64_t requestId, uint64_t tokens) {
  const Request& request = find(requestId);
  if (!m_config.prefixCaching || request.prefixId == 0 || request.swapped) return;
  const uint64_t full = std::min(tokens, request.tokens) / m_blockTokens;
  extendPrefix(m_prefixes[request.prefixId], request.blocks, full);
  touch(request.prefixId);
}

void KvBlockAllocator::extendPrefix(std::vector<KvBlock>& prefix, const std::vector<KvBlock>& blocks, uint64_t count) {
  count = std::min<uint64_t>(count, blocks.size());
  // Only blocks that still begin with the whole prefix extend it.
  if (prefix.size() > count || !std::equal(prefix.begin(), prefix.end(), blocks.begin())) return;
  for (std::size_t i = prefix.size(); i < count; ++i) {
    cache(blocks[i]);
    prefix.push_back(blocks[i]);
  }
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

uint64_t KvBlockAllocator::slotsOn(uint64_t requestId, KvTier tier) const {
  const Request& request = find(requestId);
  uint64_t n = 0;
  for (const KvBlock& b : request.blocks) n += b.tier == tier ? 1 : 0;
  for (const KvBlock& b : request.window) n += b.tier == tier ? 1 : 0;
  return n;
}

uint64_t KvBlockAllocator::firstWindowBlock(uint64_t tokens) const {
  return tokens > m_shape.windowTokens ? (tokens - m_shape.windowTokens) / m_blockTokens : 0;
}

uint64_t KvBlockAllocator::slotsFor(uint64_t tokens) const {
  const uint64_t blocks = blocksFor(tokens);
  if (!hasWindow()) return blocks;
  return blocks + (blocks - std::min(blocks, firstWindowBlock(tokens))) * m_shape.windowSlots;
}

uint64_t KvBlockAllocator::peakSlotsFor(uint64_t tokens) const {
  const uint64_t blocks = blocksFor(tokens);
  if (!hasWindow() || blocks == 0) return blocks;
  // Slots grow with each new block, and within a block the window reaches furthest back at its
  // first token: the most are held at the first token of the last block. When a block leaves the
  // window with the token that opens a new one (W = 1 mod B), growTo places the new block's window
  // slots before slideWindow frees the old block's.
  const uint64_t first = firstWindowBlock((blocks - 1) * m_blockTokens + 1);
  const uint64_t leaving = first > 0 && m_shape.windowTokens % m_blockTokens == 1 % m_blockTokens ? 1 : 0;
  return blocks + (blocks - std::min(blocks, first) + leaving) * m_shape.windowSlots;
}

uint64_t KvBlockAllocator::slotsAdded(uint64_t tokens, uint64_t more) const {
  const uint64_t before = blocksFor(tokens);
  const uint64_t after = blocksFor(tokens + more);
  if (!hasWindow()) return after - before;
  const uint64_t windowed = after - std::max(before, std::min(after, firstWindowBlock(tokens + more)));
  return after - before + windowed * m_shape.windowSlots;
}

KvBlock& KvBlockAllocator::slot(Request& request, std::size_t i) {
  return i < request.blocks.size() ? request.blocks[i] : request.window[i - request.blocks.size()];
}

bool KvBlockAllocator::growTo(uint64_t requestId, Request& request, uint64_t tokens) {
  const uint64_t count = blocksFor(tokens);
  const uint64_t ws = hasWindow() ? m_shape.windowSlots : 0;
  uint64_t windowEnd = count;  // blocks before it hold their window slots, or need none
  if (ws > 0) {
    // A block's window slots come whole: drop those of a block a failed growth left partial.
    while (request.window.size() % ws != 0) {
      dropRef(request.window.back());
      request.window.pop_back();
    }
    const uint64_t from = std::min(firstWindowBlock(tokens), count);
    if (request.window.empty() || request.windowFirst + request.window.size() / ws < from) {
      // Nothing held yet, or all of it out of the new window (a growth of more than W tokens).
      shrinkTo(request, request.blocks.size(), 0);
      request.windowFirst = from;
    }
    windowEnd = request.windowFirst + request.window.size() / ws;
  }
  const auto place = [&](std::vector<KvBlock>& into, uint64_t index) {
    const KvTierBlocks free = freeBlocks();
    const std::optional<KvTier> tier = m_policy->place(free, KvPlacementQuery{requestId, index});
    if (!tier) return false;
    if (!m_policy->mayUse(*tier) || free[kvTierIndex(*tier)] == 0) {
      throw std::logic_error(
          fmt::format("KV placement policy '{}' chose {} against its contract", m_policy->name(), kvTierName(*tier)));
    }
    into.push_back(*allocateSlot(*tier));
    return true;
  };
  for (uint64_t i = std::min<uint64_t>(request.blocks.size(), windowEnd); i < count; ++i) {
    if (i >= request.blocks.size() && !place(request.blocks, i)) return false;
    if (i < windowEnd) continue;
    for (uint64_t k = 0; k < ws; ++k) {
      if (!place(request.window, i)) return false;
    }
    windowEnd = i + 1;
  }
  return true;
}

void KvBlockAllocator::shrinkTo(Request& request, uint64_t count, std::size_t windowCount) {
  while (request.window.size() > windowCount) {
    dropRef(request.window.back());
    request.window.pop_back();
  }
  while (request.blocks.size() > count) {
    dropRef(request.blocks.back());
    request.blocks.pop_back();
  }
}

void KvBlockAllocator::slideWindow(Request& request, uint64_t tokens) {
  if (!hasWindow()) return;
  const uint64_t ws = m_shape.windowSlots;
  const uint64_t from = firstWindowBlock(tokens);
  if (from <= request.windowFirst) return;
  const uint64_t drop = std::min<uint64_t>(from - request.windowFirst, request.window.size() / ws);
  if (drop == 0) return;
  const auto end = request.window.begin() + static_cast<std::ptrdiff_t>(drop * ws);
  for (auto it = request.window.begin(); it != end; ++it) dropRef(*it);
  request.window.erase(request.window.begin(), end);
  request.windowFirst += drop;
}

void KvBlockAllocator::trimPrefix(uint64_t prefixId) {
  if (m_config.prefixCaching) return;  // the cache holds its blocks: none is dead
  const auto it = m_prefixes.find(prefixId);
  if (it == m_prefixes.end()) return;
  // Every user of prefix block i also uses blocks 0..i-1, so the live blocks are a leading run.
  std::vector<KvBlock>& blocks = it->second;
  const auto firstDead = std::find_if(blocks.begin(), blocks.end(), [this](const KvBlock& b) { return refs(b) == 0; });
  blocks.erase(firstDead, blocks.end());
  if (blocks.empty()) m_prefixes.erase(it);
}

KvAllocation KvBlockAllocator::admit(uint64_t requestId, uint64_t promptTokens, uint64_t prefixId,
                                     uint64_t prefixTokens, uint64_t sharedId, uint64_t sharedTokens) {
  if (m_requests.count(requestId) != 0) {
    throw std::invalid_argument(fmt::format("KV request {} is already admitted", requestId));
  }
  Request& request = m_requests[requestId];
  request.rank = m_nextRank++;
  request.prefixId = m_config.prefixSharing || m_config.prefixCaching ? prefixId : 0;
  const uint64_t sharable = std::min(prefixTokens, promptTokens) / m_blockTokens;
  uint64_t reused = 0;
  const bool shared = m_config.prefixCaching && request.prefixId != 0 && sharedId != 0 && sharedId != prefixId;
  uint64_t sharedBlocks = shared ? std::min(sharedTokens, promptTokens) / m_blockTokens : 0;
  if (shared) {
    // A new conversation begins with the shared prefix's blocks (the cache takes a reference for it).
    if (m_config.prefixCacheOffload) sharedBlocks = restore(m_prefixes[sharedId], sharedBlocks, requestId);
    extendPrefix(m_prefixes[request.prefixId], m_prefixes[sharedId], sharedBlocks);
  }
  if (request.prefixId != 0) {
    std::vector<KvBlock>& prefix = m_prefixes[request.prefixId];
    reused = std::min<uint64_t>(sharable, prefix.size());
    if (m_config.prefixCacheOffload) reused = restore(prefix, reused, requestId);
    for (uint64_t i = 0; i < reused; ++i) {
      addRef(prefix[i]);
      request.blocks.push_back(prefix[i]);
    }
  }

  KvAllocation out;
  if (!growTo(requestId, request, promptTokens)) {
    shrinkTo(request, 0);
    const uint64_t prefix = request.prefixId;
    m_requests.erase(requestId);
    trimPrefix(prefix);
    return out;
  }
  if (request.prefixId != 0) {
    std::vector<KvBlock>& prefix = m_prefixes[request.prefixId];
    for (uint64_t i = prefix.size(); i < sharable; ++i) {
      if (m_config.prefixCaching) cache(request.blocks[i]);
      prefix.push_back(request.blocks[i]);
    }
    trimPrefix(request.prefixId);
    if (m_config.prefixCaching) touch(request.prefixId);
  }
  if (sharedBlocks > 0) {
    // The first request to hold the shared tokens' blocks gives them to the shared prefix.
    extendPrefix(m_prefixes[sharedId], request.blocks, sharedBlocks);
    touch(sharedId);
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
  const uint64_t before = request.blocks.size();
  const std::size_t windowBefore = request.window.size();
  KvAllocation out;
  while (!growTo(requestId, request, request.tokens + tokens)) {
    const uint64_t victim = m_residentByRank.rbegin()->second;
    if (victim == requestId) {
      shrinkTo(request, before, windowBefore);
      out.preempted.push_back(preempt(requestId));
      return out;
    }
    out.preempted.push_back(preempt(victim));
  }
  request.tokens += tokens;
  slideWindow(request, request.tokens);
  out.ok = true;
  return out;
}

void KvBlockAllocator::rollback(uint64_t requestId, uint64_t tokens) {
  Request& request = find(requestId);
  if (request.swapped || tokens > request.tokens) {
    throw std::invalid_argument(fmt::format("KV request {} cannot roll back to {} tokens (it holds {}{})", requestId,
                                            tokens, request.tokens, request.swapped ? ", swapped out" : ""));
  }
  const uint64_t count = blocksFor(tokens);
  std::size_t windowCount = request.window.size();
  if (hasWindow()) {
    const uint64_t ws = m_shape.windowSlots;
    const uint64_t kept = count > request.windowFirst ? (count - request.windowFirst) * ws : 0;
    windowCount = std::min<std::size_t>(windowCount, kept);
  }
  shrinkTo(request, std::min<uint64_t>(count, request.blocks.size()), windowCount);
  request.tokens = tokens;
}

KvPreempted KvBlockAllocator::preempt(uint64_t requestId) {
  Request& request = find(requestId);
  m_preemptions.add();
  m_residentByRank.erase(request.rank);
  KvPreempted result{requestId, m_config.preemption, request.tokens, {}};
  if (m_config.preemption == KvPreemption::kSwap) {
    std::vector<std::size_t> movable;
    for (std::size_t i = 0; i < slots(request); ++i) {
      const KvBlock& b = slot(request, i);
      if (refs(b) == 1 && b.tier != KvTier::kHost) movable.push_back(i);
    }
    if (movable.size() <= freeBlocks()[kvTierIndex(KvTier::kHost)]) {
      for (std::size_t i : movable) {
        const KvBlock to = *allocateSlot(KvTier::kHost);
        result.moves.push_back(KvBlockMove{slot(request, i), to});
        dropRef(slot(request, i));
        slot(request, i) = to;
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
    // The block a window slot belongs to, for the policy.
    const uint64_t block = i < request.blocks.size()
                               ? i
                               : request.windowFirst + (i - request.blocks.size()) / std::max(1U, m_shape.windowSlots);
    const std::optional<KvTier> tier = m_policy->place(free, KvPlacementQuery{requestId, block});
    if (!tier || free[kvTierIndex(*tier)] == 0) {
      for (const KvBlockMove& m : moves) dropRef(m.to);
      moves.clear();
      return false;
    }
    moves.push_back(KvBlockMove{slot(request, i), *allocateSlot(*tier)});
  }
  for (std::size_t k = 0; k < moves.size(); ++k) {
    dropRef(moves[k].from);
    slot(request, request.swappedBlocks[k]) = moves[k].to;
  }
  m_swapInBytes.add(static_cast<double>(moves.size() * blockBytes()));
  request.swapped = false;
  request.swappedBlocks.clear();
  m_residentByRank[request.rank] = requestId;
  return true;
}

}  // namespace scoville::hw
