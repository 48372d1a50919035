#pragma once
// Configuration of the paged KV cache (see KvBlockAllocator.h for the allocation model; the
// planner and the copy engines move the KV, hw/dma/CopyEngine.h). The YAML keys choose the paging granularity and the
// policies; the bytes each memory tier can give the cache are not configuration: the platform
// builder computes them from the memory left after weights and passes KvTierCapacities.

#include <array>
#include <cstdint>
#include <string>

#include "config/Schema.h"

namespace scoville::hw {

/// Where a KV block can live, nearest first.
enum class KvTier { kSram, kLocalHbm, kRemoteHbm, kHost };
inline constexpr std::size_t kKvTierCount = 4;
inline constexpr std::array<KvTier, kKvTierCount> kKvTiers = {KvTier::kSram, KvTier::kLocalHbm, KvTier::kRemoteHbm,
                                                              KvTier::kHost};

/// Stable name of a tier, for statistics and messages: sram, local_hbm, remote_hbm, host.
const char* kvTierName(KvTier tier);
inline std::size_t kvTierIndex(KvTier tier) {
  return static_cast<std::size_t>(tier);
}

/// Bytes each tier sets aside for the KV cache (0: the tier holds no KV blocks).
struct KvTierCapacities {
  uint64_t sramBytes = 0;
  uint64_t localHbmBytes = 0;
  uint64_t remoteHbmBytes = 0;  ///< on the chip(s) KV spills to over the fabric
  uint64_t hostBytes = 0;       ///< host DRAM reached over the host link (also the swap space)

  uint64_t of(KvTier tier) const;
};

/// What happens to the blocks of a request preempted for lack of space.
enum class KvPreemption {
  kRecompute,  ///< its blocks are dropped; the scheduler re-runs its prefill later
  kSwap,       ///< its private blocks move to host memory until it is swapped back in
};

/// Model shape the cache is sized by: each token stores `bytesPerTokenPerLayer` (K and V of all
/// KV heads) in each of `layers` layers, the layers that keep every token. A model whose other
/// layers attend to a sliding window of `windowTokens` (gpt-oss, Gemma) keeps their KV only for the
/// blocks that window spans: each such block takes `windowSlots` more slots (one slot holds
/// `layers` layers; 0: no window layers apart).
struct KvModelShape {
  uint32_t layers = 0;
  uint64_t bytesPerTokenPerLayer = 0;
  uint32_t windowSlots = 0;
  uint64_t windowTokens = 0;
};

struct KvCacheConfig {
  int blockTokens = 0;    ///< tokens per paged block
  std::string placement;  ///< name of a KvPlacementPolicy (makeKvPlacementPolicy)
  KvPreemption preemption = KvPreemption::kRecompute;
  bool prefixSharing = false;  ///< requests declaring one prefix id share its full blocks
  /// Prefix caching (not a key: the scenario's serving.prefix_caching): a prefix's blocks stay
  /// cached after its last user leaves, until evicted least recently used; implies sharing.
  bool prefixCaching = false;
  /// Prefix-cache offload (not a key: the scenario's serving.prefix_cache_offload: host): a cached
  /// block no request uses moves to host memory when its tier needs the slot, instead of being
  /// dropped, and moves back when a turn reuses it (LMCache, SGLang's HiCache).
  bool prefixCacheOffload = false;

  static const config::Schema<KvCacheConfig>& schema();
};

}  // namespace scoville::hw
