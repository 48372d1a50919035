#pragma once
// Paged KV-cache block allocator (pure C++, no simulated time), after vLLM's PagedAttention.
//
// Model: each tier's KV capacity is cut into slots of one block (block_tokens tokens of every
// layer). A request holds a block table; it grows to exactly ceil(tokens / block_tokens) blocks
// as tokens are admitted and appended, and each new block goes to the tier the placement policy
// chooses. Slots are handed out lowest-free-first per tier.
//
// Layout (per layer, as vLLM's per-layer cache tensors): a tier's space is split into one region
// per layer; slot s of layer l starts at (l * slots + s) * block_tokens * bytes_per_token_per_layer.
// Consecutive slots of one tier are therefore contiguous within each layer, and all addresses of a
// tier are disjoint, aligned to a layer block, and below the tier's capacity.
//
// Sliding windows (KvModelShape::windowSlots > 0): the layers that attend to a window of W tokens
// keep, as vLLM's hybrid allocator, only the blocks that window spans: a request of n tokens holds
// its block table (the layers that keep everything) plus `windowSlots` slots for each block that
// overlaps its last W tokens, [n - W, n); slots of blocks that fall out of the window are freed as
// it grows. A prompt is admitted with the window at its end (the window layers' KV of earlier
// prompt chunks lives only while the chunk computes). Window slots are never shared by prefixes.
//
// Prefix sharing: requests that declare the same prefix id share the full blocks of their common
// prefix (a partly filled block is never shared, so appends never write a shared block). Blocks
// are reference-counted and freed when their last user leaves.
//
// Prefix caching (KvCacheConfig::prefixCaching, vLLM's automatic prefix caching by prefix id):
// the cache itself holds a reference on every block of a prefix, so the blocks outlive their
// users; publish() extends a prefix with a request's full blocks (a conversation's answer, for
// its next turn). A block only the cache holds counts as free: when a tier has no free slot, the
// tail block of the least recently used prefix that has one there is evicted (a prefix stays a
// leading run of blocks).
//
// Prefix-cache offload (KvCacheConfig::prefixCacheOffload): a cached block no request uses is not
// dropped when its tier (SRAM, local HBM) needs the slot but moves to a host slot (evicting the least
// recently used host block if the host has none free); when an admission reuses a prefix, its
// blocks on the host that only that prefix holds move back to the tiers the policy chooses (never
// the host). Blocks that cannot come back (no room) end the hit when the policy cannot read the
// host. takeCacheMoves() lists the copies, in the order they must run, for the copy engines.
// Eviction, offloaded or not, takes the last block on the tier of the least recently used prefix
// that has one no request uses; a dropped block takes every block after it in its prefix along (a
// prefix stays a leading run of blocks, each block used by at least as many as the next).
//
// Preemption: when the policy has no room for a block, the most recently admitted resident
// request is the victim (vLLM's choice). Recompute drops its blocks; swap moves its private
// blocks off the chip to host slots (shared blocks stay where they are, still referenced) and
// falls back to recompute when the host cannot take them all. Admission never preempts: a request
// that does not fit is refused. A growing request that is itself the newest preempts itself.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "hw/kv/KvCacheConfig.h"
#include "hw/kv/KvPlacementPolicy.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

/// One physical block: a slot on a tier.
struct KvBlock {
  KvTier tier = KvTier::kLocalHbm;
  uint64_t slot = 0;

  bool operator==(const KvBlock& o) const { return tier == o.tier && slot == o.slot; }
};

/// A block copied from one place to another (swap out or swap in).
struct KvBlockMove {
  KvBlock from;
  KvBlock to;
};

/// A cached block copied by prefix-cache offload: to the host (offloaded) or back (restored).
struct KvCacheMove {
  KvBlockMove move;
  bool toHost = false;
};

/// A request that lost its place in the cache.
struct KvPreempted {
  uint64_t requestId = 0;
  KvPreemption mode = KvPreemption::kRecompute;  ///< kSwap only if its blocks did move to host
  uint64_t tokens = 0;                           ///< tokens it held: to recompute, or swapped
  std::vector<KvBlockMove> moves;                ///< swap only: blocks moved off the chip
};

/// Result of admit() and append().
struct KvAllocation {
  bool ok = false;                     ///< the request now holds all its tokens (false: refused or preempted itself)
  std::vector<KvPreempted> preempted;  ///< victims in preemption order; the request itself is last if it was one
  uint64_t sharedBlocks = 0;           ///< admit: blocks reused from its prefix instead of allocated
};

class KvBlockAllocator {
 public:
  /// Throws std::invalid_argument for a zero-sized block (no layers or no bytes per token).
  KvBlockAllocator(const KvCacheConfig& config, const KvModelShape& shape, const KvTierCapacities& capacities,
                   std::unique_ptr<KvPlacementPolicy> policy);
  KvBlockAllocator(const KvBlockAllocator&) = delete;
  KvBlockAllocator& operator=(const KvBlockAllocator&) = delete;

  /// Admits a request with its prompt. The leading `prefixTokens` tokens of the prompt are the
  /// shared prefix `prefixId` (0: none; ignored unless prefix_sharing). Never preempts another
  /// request: if the prompt does not fit, nothing changes and ok is false. Throws
  /// std::invalid_argument if the request is already known.
  /// Prefix caching: a prefix without blocks yet starts with the first `sharedTokens` tokens'
  /// blocks of prefix `sharedId` (a system prompt every conversation begins with), and the
  /// request's blocks extend that prefix too.
  KvAllocation admit(uint64_t requestId, uint64_t promptTokens, uint64_t prefixId = 0, uint64_t prefixTokens = 0,
                     uint64_t sharedId = 0, uint64_t sharedTokens = 0);

  /// Adds `tokens` tokens to a resident request, preempting the newest requests while the policy
  /// finds no room. Throws std::invalid_argument unless the request is resident.
  KvAllocation append(uint64_t requestId, uint64_t tokens);

  /// Speculative decoding: drops a resident request's last tokens down to `tokens` (the KV of
  /// rejected draft tokens), freeing the blocks past them. A sliding window keeps the blocks it
  /// still holds (one that slid out while the drafts were in is not brought back: at most one
  /// block of the window layers goes missing until the window passes it). Throws
  /// std::invalid_argument unless the request is resident and holds at least `tokens`.
  void rollback(uint64_t requestId, uint64_t tokens);

  /// Prefix caching: extends the request's prefix (if it declared one and still shares all of it)
  /// with its full blocks holding its first `tokens` tokens. Nothing without prefix caching.
  void publish(uint64_t requestId, uint64_t tokens);
  /// Prefix caching: the blocks admit() would reuse for a prompt of `promptTokens` with these
  /// prefix arguments, as things stand (blocks on the host included; nothing changes).
  uint64_t cachedBlocksFor(uint64_t promptTokens, uint64_t prefixId, uint64_t prefixTokens, uint64_t sharedId,
                           uint64_t sharedTokens) const;
  /// Prefix caching: blocks the cache holds (in use by requests or not), and blocks evicted so far.
  uint64_t cachedBlocks() const { return m_cachedBlocks; }
  uint64_t evictedBlocks() const { return m_evicted; }
  /// Prefix-cache offload: blocks moved to the host, and moved back for a hit, so far.
  uint64_t offloadedBlocks() const { return m_offloaded; }
  uint64_t restoredBlocks() const { return m_restored; }
  /// Prefix-cache offload: appends the copies made since the last call, in order, and forgets them.
  void takeCacheMoves(std::vector<KvCacheMove>& out);
  /// Blocks the prefix cache holds on `tier` (in use by requests or not).
  uint64_t cachedBlocksOn(KvTier tier) const { return m_tiers[kvTierIndex(tier)].cachedCount; }

  /// Frees a request's blocks (resident or swapped). Throws std::invalid_argument if unknown.
  void release(uint64_t requestId);

  /// Moves a swapped request's swapped blocks back to the tiers the policy chooses (never host)
  /// and makes it resident again with its admission rank. Never preempts: returns false and
  /// changes nothing if they do not all fit. Throws std::invalid_argument unless it is swapped.
  bool swapIn(uint64_t requestId, std::vector<KvBlockMove>& moves);

  bool isResident(uint64_t requestId) const;
  bool isSwapped(uint64_t requestId) const;
  /// Tokens held by a known request; throws std::invalid_argument if unknown.
  uint64_t tokens(uint64_t requestId) const;
  /// Block table of a known request, block i holding tokens [i, i + 1) * block_tokens.
  const std::vector<KvBlock>& blocks(uint64_t requestId) const;
  /// Slots a known request holds on `tier`: its block table's and its window's.
  uint64_t slotsOn(uint64_t requestId, KvTier tier) const;
  /// Slots a request of `tokens` tokens holds (its blocks, and its window's).
  uint64_t slotsFor(uint64_t tokens) const;
  /// The most slots a request holds while it grows to `tokens` tokens: with sliding windows more
  /// than slotsFor(tokens) when its window spanned one block more at an earlier token (or holds a
  /// new block's slots before it frees those of the block it left).
  uint64_t peakSlotsFor(uint64_t tokens) const;
  /// Slots that growing a request from `tokens` by `more` tokens allocates (before any window
  /// slot it no longer needs is freed).
  uint64_t slotsAdded(uint64_t tokens, uint64_t more) const;

  /// Adds the tokens [begin, end) of a known request to `out` at the tiers their blocks are on
  /// (SRAM counted as local HBM; tokens past its last block as local HBM).
  void addTokensByTier(uint64_t requestId, uint64_t begin, uint64_t end, KvTierBlocks& out) const;
  /// Byte address on the block's tier of `layer`'s part of the block (see the layout above).
  uint64_t address(const KvBlock& block, uint32_t layer) const;
  uint64_t blockTokens() const { return m_blockTokens; }
  /// Bytes of one layer's part of a block, and of a whole block (all layers).
  uint64_t layerBlockBytes() const { return m_layerBlockBytes; }
  uint64_t blockBytes() const { return m_layerBlockBytes * m_shape.layers; }
  const KvModelShape& shape() const { return m_shape; }
  /// Whether some layers keep only a sliding window of tokens (shape().windowSlots per window block).
  bool hasWindow() const { return m_shape.windowSlots > 0 && m_shape.windowTokens > 0; }

  uint64_t capacityBlocks(KvTier tier) const { return m_tiers[kvTierIndex(tier)].slots; }
  uint64_t usedBlocks(KvTier tier) const;
  uint64_t peakBlocks(KvTier tier) const { return m_tiers[kvTierIndex(tier)].peak; }
  KvTierBlocks freeBlocks() const;
  /// Blocks, and free blocks, of the tiers the placement policy may put blocks on: where running
  /// requests live (host memory that only swap uses is left out).
  uint64_t placedCapacityBlocks() const;
  uint64_t placedFreeBlocks() const;
  const KvPlacementPolicy& policy() const { return *m_policy; }
  const KvCacheConfig& config() const { return m_config; }
  const stats::Group& stats() const { return m_stats; }

 private:
  struct TierSlots {
    uint64_t slots = 0;
    uint64_t highWater = 0;  ///< slots below it were handed out at least once
    std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> freed;
    std::vector<uint32_t> refs;   ///< users per slot below highWater
    std::vector<uint8_t> cached;  ///< per slot below highWater: the prefix cache holds it
    uint64_t cacheOnly = 0;       ///< cached slots no request uses (evictable: counted free)
    uint64_t cachedCount = 0;     ///< cached slots
    uint64_t peak = 0;
  };
  struct Request {
    uint64_t tokens = 0;
    uint64_t rank = 0;  ///< admission order
    uint64_t prefixId = 0;
    bool swapped = false;
    std::vector<KvBlock> blocks;
    std::vector<KvBlock> window;             ///< window slots of blocks windowFirst.., windowSlots each
    uint64_t windowFirst = 0;                ///< first block the window slots cover
    std::vector<std::size_t> swappedBlocks;  ///< slot indices (slot()) that swap-out moved to host
  };

  uint64_t blocksFor(uint64_t tokens) const { return (tokens + m_blockTokens - 1) / m_blockTokens; }
  /// First block that overlaps the window of a request of `tokens` tokens.
  uint64_t firstWindowBlock(uint64_t tokens) const;
  /// Slot i of a request: its block table's, then its window's.
  static KvBlock& slot(Request& request, std::size_t i);
  static std::size_t slots(const Request& request) { return request.blocks.size() + request.window.size(); }
  std::optional<KvBlock> allocateSlot(KvTier tier);
  void addRef(const KvBlock& block);
  void dropRef(const KvBlock& block);
  uint32_t refs(const KvBlock& block) const;
  /// Places and appends blocks (and their window slots) until `request` holds `tokens` tokens;
  /// false (partial) when the policy finds no room.
  bool growTo(uint64_t requestId, Request& request, uint64_t tokens);
  /// Drops blocks of `request` beyond the first `count`, and window slots beyond `windowCount`.
  void shrinkTo(Request& request, uint64_t count, std::size_t windowCount = 0);
  /// Frees the window slots of blocks out of the window of `tokens` tokens.
  void slideWindow(Request& request, uint64_t tokens);
  KvPreempted preempt(uint64_t requestId);
  void trimPrefix(uint64_t prefixId);
  /// Prefix caching: appends blocks[prefix.size(), count) to `prefix`, the cache taking a
  /// reference on each, when `blocks` begins with the whole prefix (else nothing).
  void extendPrefix(std::vector<KvBlock>& prefix, const std::vector<KvBlock>& blocks, uint64_t count);
  /// Prefix caching: the cache takes a reference on `block`.
  void cache(const KvBlock& block);
  /// Prefix caching: frees one slot on `tier` that only the cache holds (the last block on `tier` of
  /// the least recently used prefix that has one): offloaded to the host when it can be, else
  /// dropped with the blocks after it in its prefix; false when there is none.
  bool evictOne(KvTier tier);
  /// Moves the cached block `from`, with its references, to the new slot `to`.
  void relocate(const KvBlock& from, const KvBlock& to);
  /// Prefix-cache offload: moves the host blocks among prefix[0, count) that only the prefix holds
  /// back to the tiers the policy chooses; returns `count`, or the index of the first block that
  /// stays on the host where the policy cannot read it.
  uint64_t restore(std::vector<KvBlock>& prefix, uint64_t count, uint64_t requestId);
  /// Marks prefix `prefixId` used now (the LRU order).
  void touch(uint64_t prefixId) { m_prefixUse[prefixId] = ++m_useTick; }
  Request& find(uint64_t requestId);
  const Request& find(uint64_t requestId) const;

  KvCacheConfig m_config;
  KvModelShape m_shape;
  uint64_t m_blockTokens;
  uint64_t m_layerBlockBytes;
  std::unique_ptr<KvPlacementPolicy> m_policy;
  std::array<TierSlots, kKvTierCount> m_tiers;
  std::unordered_map<uint64_t, Request> m_requests;
  std::map<uint64_t, uint64_t> m_residentByRank;                  ///< rank -> request id, resident requests only
  std::unordered_map<uint64_t, std::vector<KvBlock>> m_prefixes;  ///< prefix id -> its full blocks so far
  std::map<uint64_t, uint64_t> m_prefixUse;                       ///< prefix id -> last use (prefix caching)
  uint64_t m_useTick = 0;
  uint64_t m_cachedBlocks = 0;
  uint64_t m_evicted = 0;
  uint64_t m_offloaded = 0;
  uint64_t m_restored = 0;
  std::vector<KvCacheMove> m_cacheMoves;
  uint64_t m_nextRank = 0;

  stats::Group m_stats;
  stats::Counter& m_preemptions;
  stats::Counter& m_recomputes;
  stats::Counter& m_swapOuts;
  stats::Counter& m_swapOutBytes;
  stats::Counter& m_swapInBytes;
  stats::Counter& m_sharedBlockHits;
};

}  // namespace scoville::hw
