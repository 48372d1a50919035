#include "hw/kv/KvCacheConfig.h"

#include <utility>
#include <vector>

#include "hw/kv/KvPlacementPolicy.h"

namespace scoville::hw {

using namespace scoville::config;

const char* kvTierName(KvTier tier) {
  switch (tier) {
    case KvTier::kSram: return "sram";
    case KvTier::kLocalHbm: return "local_hbm";
    case KvTier::kRemoteHbm: return "remote_hbm";
    case KvTier::kHost: return "host";
  }
  return "?";
}

uint64_t KvTierCapacities::of(KvTier tier) const {
  switch (tier) {
    case KvTier::kSram: return sramBytes;
    case KvTier::kLocalHbm: return localHbmBytes;
    case KvTier::kRemoteHbm: return remoteHbmBytes;
    case KvTier::kHost: return hostBytes;
  }
  return 0;
}

const Schema<KvCacheConfig>& KvCacheConfig::schema() {
  static const Schema<KvCacheConfig> s =
      Schema<KvCacheConfig>("kv_cache",
                            "Paged KV cache: fixed-size blocks of tokens placed on memory tiers (SRAM, local HBM, "
                            "a remote chip's HBM, host memory) by a placement policy; tier capacities come from "
                            "the memory left after weights.")
          .integer("block_tokens", &KvCacheConfig::blockTokens, optional("16"), between(1, 65536),
                   "tokens per KV block (the paging granularity; a request holds ceil(tokens / block_tokens) blocks)")
          .implementation("placement", &KvCacheConfig::placement, kvPlacementPolicyNames(),
                          optional("{impl: local_first}"),
                          "policy choosing the tier of each new block: local_first (SRAM then local HBM, preempt when "
                          "full), spill_to_remote (then a remote chip's HBM), offload_to_host (then host memory)")
          .choice("preemption", &KvCacheConfig::preemption,
                  {{"recompute", KvPreemption::kRecompute}, {"swap", KvPreemption::kSwap}}, optional("recompute"),
                  "fate of the newest request when no tier has room: drop its blocks and recompute it later, or "
                  "swap its blocks out to host memory")
          .flag("prefix_sharing", &KvCacheConfig::prefixSharing, optional("false"),
                "requests declaring the same prefix id share the full blocks of their common prefix");
  return s;
}

}  // namespace scoville::hw
