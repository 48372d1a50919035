// ReplicaBuilder's KV tiers and engines: a replica cache's shape and the bytes each tier gives it,
// the host swap space, and the swap and fetch engines on the chips (see ReplicaBuilder.h).
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "config/ConfigError.h"
#include "config/Units.h"
#include "runtime/ReplicaBuilder.h"

namespace scoville::runtime {

using namespace workload;  // the planner and configuration types this file reads

hw::KvModelShape ReplicaBuilder::kvShape(const Replica& r) const {
  const StepPlanner& lead = *r.planners.front();
  hw::KvModelShape shape{lead.stageLayers(), lead.kvBytesPerTokenPerLayer()};
  uint32_t full = 0;
  uint32_t window = 0;
  for (const auto& planner : r.planners) {
    full = std::max(full, planner->stageLayers() - planner->kvWindowLayers());
    window = std::max(window, planner->kvWindowLayers());
  }
  if (full > 0 && window > 0) {
    shape.layers = full;
    shape.windowSlots = (window + full - 1) / full;
    shape.windowTokens = static_cast<uint64_t>(m_model.slidingWindow);
  }
  return shape;
}

uint64_t ReplicaBuilder::swapSpace(const Replica& r, const hw::KvModelShape& shape, uint64_t blockTokens) const {
  // Every chip swaps its slice of each block to its own share of its host's memory; the chip
  // whose share holds the fewest of its slices bounds the replica's swap space.
  const uint64_t share = platform::hostMemoryPerChip(m_config);
  uint64_t blocks = ~uint64_t{0};
  uint64_t tightestSlice = 0;
  for (const auto& planner : r.planners) {
    const uint64_t slice = std::max<uint64_t>(1, planner->kvBytesPerTokenPerLayer() * shape.layers * blockTokens);
    if (share / slice < blocks) {
      blocks = share / slice;
      tightestSlice = slice;
    }
  }
  if (blocks == 0) {
    const bool host = m_set->kvMode->hostTier;
    const bool swap = m_config.placement.kvCache.preemption == hw::KvPreemption::kSwap;
    const std::string why = host   ? "KV-cache placement is offload_to_host"
                            : swap ? "'platform.placement.kv_cache.preemption' is swap"
                                   : "'scenario.serving.prefix_cache_offload' is host";
    const std::string instead = host   ? "place KV locally"
                                : swap ? "use preemption recompute"
                                       : "use prefix_cache_offload: none";
    throw config::ConfigError(
        config::ErrorKind::kInvalidConfig, m_files.platform,
        fmt::format("{}, but each chip's share of host memory "
                    "('platform.host.memory' {} / 'platform.host.chips_per_host' {} = {}) cannot hold one KV block "
                    "of model '{}' on a chip ({}, {} tokens): give the host more memory, or {}",
                    why, config::formatQuantity(m_config.host.memoryBytes, config::dim::kBytes),
                    m_config.host.chipsPerHost, config::formatQuantity(static_cast<double>(share), config::dim::kBytes),
                    m_model.name, config::formatQuantity(static_cast<double>(tightestSlice), config::dim::kBytes),
                    blockTokens, instead));
  }
  return blocks * shape.bytesPerTokenPerLayer * shape.layers * blockTokens;
}

hw::KvTierCapacities ReplicaBuilder::kvCapacities(const Replica& r, uint64_t kvBytes,
                                                  const hw::KvModelShape& shape) const {
  hw::KvTierCapacities capacities;
  capacities.localHbmBytes = kvBytes;
  const hw::KvCacheConfig& cache = m_config.placement.kvCache;
  const bool offload = m_scenario.serving.prefixCaching &&
                       m_scenario.serving.prefixCacheOffload == ServingPolicyConfig::PrefixCacheOffload::kHost;
  if (cache.preemption == hw::KvPreemption::kSwap || m_set->kvMode->hostTier || offload) {
    capacities.hostBytes = swapSpace(r, shape, static_cast<uint64_t>(cache.blockTokens));
  }
  if (m_set->kvMode->remoteTier) {
    // Each chip lends its share to the previous chip of the pool (attachFetchers) and keeps the rest.
    capacities.remoteHbmBytes = static_cast<uint64_t>(m_scenario.serving.kvRemoteShare * static_cast<double>(kvBytes));
    capacities.localHbmBytes = kvBytes - capacities.remoteHbmBytes;
  }
  return capacities;
}

void ReplicaBuilder::attachSwappers(Replica& r) {
  const uint64_t blockTokens = static_cast<uint64_t>(m_config.placement.kvCache.blockTokens);
  for (std::size_t c = 0; c < r.chips.size(); ++c) {
    const int chip = r.chips[c];
    const StepPlanner& planner = *r.planners[c];
    r.swappers.push_back(
        std::make_unique<KvSwapper>(fmt::format("kv_swap{}", chip).c_str(), chip, r.scheduler->kv().shape().layers,
                                    planner.kvBytesPerTokenPerLayer() * blockTokens, planner.kvBase(), m_mode));
    r.swappers.back()->hbm.socket.bind(m_platform.chip(chip).socket());
    r.swappers.back()->host.bind(m_platform.hostLink(chip).socket);
  }
}

void ReplicaBuilder::attachFetchers(std::vector<std::string>& misfits) {
  const bool spill = m_set->kvMode->remoteTier;
  const auto bytesText = [](double bytes) { return config::formatQuantity(bytes, config::dim::kBytes); };
  // The chips of each pool in replica order; a chip's donor is the next one, the last chip's the first.
  std::map<ReplicaRole, std::vector<std::pair<Replica*, std::size_t>>> pools;
  for (const auto& r : m_set->replicas) {
    for (std::size_t c = 0; c < r->chips.size(); ++c) pools[r->role].emplace_back(r.get(), c);
  }
  for (const auto& [role, members] : pools) {
    if (spill && members.size() < 2) {
      const bool own = m_scenario.serving.kvCachePlacement != ServingPolicyConfig::KvPlacement::kPlatform;
      throw config::ConfigError(
          config::ErrorKind::kInvalidConfig, own ? m_files.scenario : m_files.platform,
          fmt::format("KV-cache placement spill_to_remote ({}) on platform '{}': the serving pool has one chip, so "
                      "no other chip can lend it HBM; use local or offload_to_host",
                      own ? "serving.kv_cache_placement" : "the platform's placement.kv_cache.placement",
                      m_config.name));
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
      Replica& r = *members[i].first;
      const std::size_t c = members[i].second;
      const int chip = r.chips[c];
      int donor = -1;
      uint64_t base = 0;
      if (spill) {
        const auto& [dr, dc] = members[(i + 1) % members.size()];
        donor = dr->chips[dc];
        const hw::KvBlockAllocator& own = dr->scheduler->kv();
        const hw::KvBlockAllocator& lent = r.scheduler->kv();
        base = dr->planners[dc]->kvBase() + own.capacityBlocks(hw::KvTier::kLocalHbm) * own.blockBytes();
        const double end = static_cast<double>(base + lent.capacityBlocks(hw::KvTier::kRemoteHbm) * lent.blockBytes());
        const hw::ChipConfig& donorChip = m_config.chipConfig(donor);
        const double limit = donorChip.hbm.capacityBytes - m_config.placement.activationBytes;
        if (end > limit) {
          misfits.push_back(fmt::format(
              "{} ({}): its own KV cache and the {} it lends {} for spill_to_remote end at {}, above the {} "
              "its HBM has below the activation memory",
              platform::PlatformConfig::chipName(donor), donorChip.name,
              bytesText(static_cast<double>(lent.capacityBlocks(hw::KvTier::kRemoteHbm) * lent.blockBytes())),
              platform::PlatformConfig::chipName(chip), bytesText(end), bytesText(limit)));
          continue;
        }
      }
      r.fetchers.push_back(
          std::make_unique<KvFetcher>(fmt::format("kv_fetch{}", chip).c_str(), chip, donor, base, m_mode));
      KvFetcher& f = *r.fetchers.back();
      if (spill) {
        f.donorMemory().socket.bind(m_platform.chip(donor).socket());
        f.fromDonor.bind(m_platform.fabric(donor).fromChip);
        f.toDonor.bind(m_platform.fabric(chip).fromChip);
      } else {
        f.host.bind(m_platform.hostLink(chip).socket);
      }
      r.drivers[c]->attachFetcher(&f);
    }
  }
}

}  // namespace scoville::runtime
