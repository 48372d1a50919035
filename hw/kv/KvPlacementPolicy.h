#pragma once
// KV block placement: which memory tier receives each new KV block. The allocator owns the
// blocks and asks its policy once per new block; the policy only chooses.
//
// Implementations (chosen by the kv_cache.placement key, built by makeKvPlacementPolicy):
//   local_first      SRAM, then local HBM. Never leaves the chip: when both are full, preempt.
//   spill_to_remote  SRAM, then local HBM, then a remote chip's HBM over the fabric.
//   offload_to_host  SRAM, then local HBM, then host memory over the host link.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/kv/KvCacheConfig.h"

namespace scoville::hw {

/// Free blocks per tier, indexed by kvTierIndex().
using KvTierBlocks = std::array<uint64_t, kKvTierCount>;

/// The block being placed.
struct KvPlacementQuery {
  uint64_t requestId = 0;
  uint64_t blockIndex = 0;  ///< position of the block in the request's block table
};

class KvPlacementPolicy {
 public:
  virtual ~KvPlacementPolicy() = default;

  /// The name this policy is registered under.
  virtual const std::string& name() const = 0;

  /// Whether place() can ever return `tier` (capacity counts only such tiers; serving plans off-
  /// chip KV traffic only when an off-chip tier is one). A tier this returns false for is never
  /// written by placement.
  virtual bool mayUse(KvTier tier) const = 0;

  /// Contract: returns a tier t with mayUse(t) and freeBlocks[t] > 0 for the block `query`, or
  /// std::nullopt when no tier the policy may use has a free block, in which case the caller
  /// must preempt a request (or refuse the allocation) and may ask again. Deterministic: the
  /// same arguments give the same answer; the policy keeps no state between calls.
  virtual std::optional<KvTier> place(const KvTierBlocks& freeBlocks, const KvPlacementQuery& query) const = 0;
};

/// The policy registered as `name`; throws std::invalid_argument naming the known policies.
std::unique_ptr<KvPlacementPolicy> makeKvPlacementPolicy(const std::string& name);

/// Names of all registered placement policies, in registration order.
const std::vector<std::string>& kvPlacementPolicyNames();

}  // namespace scoville::hw
