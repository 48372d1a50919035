// ServingEngine's KV off the chips: swap preemption (the host swap space of a replica's KV cache,
// the chips' copy engines, and the block copies that run before a step) and the off-chip
// placements' fetch engines (see ServingEngine.h).
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "runtime/ServingEngine.h"
#include "tlm/config/ConfigError.h"
#include "tlm/config/Units.h"

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file drives

uint64_t ServingEngine::swapSpace(const platform::PlatformConfig& config, const Replica& r,
                                  const hw::KvModelShape& shape, uint64_t blockTokens,
                                  const std::string& platformFile) const {
  // Every chip swaps its slice of each block to its own share of its host's memory; the chip
  // whose share holds the fewest of its slices bounds the replica's swap space.
  const uint64_t share = platform::hostMemoryPerChip(config);
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
    throw config::ConfigError(
        config::ErrorKind::kInvalidConfig, platformFile,
        fmt::format("{}, but each chip's share of host memory "
                    "('platform.host.memory' {} / 'platform.host.chips_per_host' {} = {}) cannot hold one KV block "
                    "of model '{}' on a chip ({}, {} tokens): give the host more memory, or {}",
                    m_kvMode->hostTier ? "KV-cache placement is offload_to_host"
                                       : "'platform.placement.kv_cache.preemption' is swap",
                    config::formatQuantity(config.host.memoryBytes, config::dim::kBytes), config.host.chipsPerHost,
                    config::formatQuantity(static_cast<double>(share), config::dim::kBytes), m_model.name,
                    config::formatQuantity(static_cast<double>(tightestSlice), config::dim::kBytes), blockTokens,
                    m_kvMode->hostTier ? "place KV locally" : "use preemption recompute"));
  }
  return blocks * shape.bytesPerTokenPerLayer * shape.layers * blockTokens;
}

hw::KvModelShape ServingEngine::kvShape(const Replica& r) const {
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

hw::KvTierCapacities ServingEngine::kvCapacities(const platform::PlatformConfig& config, const Replica& r,
                                                 uint64_t kvBytes, const hw::KvModelShape& shape,
                                                 const std::string& platformFile) const {
  hw::KvTierCapacities capacities;
  capacities.localHbmBytes = kvBytes;
  const hw::KvCacheConfig& cache = config.placement.kvCache;
  if (cache.preemption == hw::KvPreemption::kSwap || m_kvMode->hostTier) {
    capacities.hostBytes = swapSpace(config, r, shape, static_cast<uint64_t>(cache.blockTokens), platformFile);
  }
  if (m_kvMode->remoteTier) {
    // Each chip lends its share to the previous chip of the pool (attachFetchers) and keeps the rest.
    capacities.remoteHbmBytes = static_cast<uint64_t>(m_scenario.serving.kvRemoteShare * static_cast<double>(kvBytes));
    capacities.localHbmBytes = kvBytes - capacities.remoteHbmBytes;
  }
  return capacities;
}

void ServingEngine::attachFetchers(platform::Platform& platform, tlm::TimingMode mode, const ScenarioFiles& files,
                                   std::vector<std::string>& misfits) {
  const platform::PlatformConfig& config = platform.config();
  const bool spill = m_kvMode->remoteTier;
  const auto bytesText = [](double bytes) { return config::formatQuantity(bytes, config::dim::kBytes); };
  // The chips of each pool in replica order; a chip's donor is the next one, the last chip's the first.
  std::map<Role, std::vector<std::pair<Replica*, std::size_t>>> pools;
  for (const auto& r : m_replicas) {
    for (std::size_t c = 0; c < r->chips.size(); ++c) pools[r->role].emplace_back(r.get(), c);
  }
  for (const auto& [role, members] : pools) {
    if (spill && members.size() < 2) {
      const bool own = m_scenario.serving.kvCachePlacement != ServingPolicyConfig::KvPlacement::kPlatform;
      throw config::ConfigError(
          config::ErrorKind::kInvalidConfig, own ? files.scenario : files.platform,
          fmt::format("KV-cache placement spill_to_remote ({}) on platform '{}': the serving pool has one chip, so "
                      "no other chip can lend it HBM; use local or offload_to_host",
                      own ? "serving.kv_cache_placement" : "the platform's placement.kv_cache.placement", config.name));
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
        const hw::ChipConfig& donorChip = config.chipConfig(donor);
        const double limit = donorChip.hbm.capacityBytes - config.placement.activationBytes;
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
          std::make_unique<KvFetcher>(fmt::format("kv_fetch{}", chip).c_str(), chip, donor, base, mode));
      KvFetcher& f = *r.fetchers.back();
      if (spill) {
        f.donorMemory().socket.bind(platform.chip(donor).socket());
        f.fromDonor.bind(platform.fabric(donor).fromChip);
        f.toDonor.bind(platform.fabric(chip).fromChip);
      } else {
        f.host.bind(platform.hostLink(chip).socket);
      }
      r.drivers[c]->attachFetcher(&f);
    }
  }
}

const KvFetcher* ServingEngine::kvFetcher(int chip) const {
  for (const auto& r : m_replicas) {
    for (const auto& f : r->fetchers) {
      if (f->chip() == chip) return f.get();
    }
  }
  return nullptr;
}

void ServingEngine::attachSwappers(Replica& r, platform::Platform& platform, tlm::TimingMode mode) {
  const uint64_t blockTokens = static_cast<uint64_t>(platform.config().placement.kvCache.blockTokens);
  for (std::size_t c = 0; c < r.chips.size(); ++c) {
    const int chip = r.chips[c];
    const StepPlanner& planner = *r.planners[c];
    r.swappers.push_back(
        std::make_unique<KvSwapper>(fmt::format("kv_swap{}", chip).c_str(), chip, r.scheduler->kv().shape().layers,
                                    planner.kvBytesPerTokenPerLayer() * blockTokens, planner.kvBase(), mode));
    r.swappers.back()->hbm.socket.bind(platform.chip(chip).socket());
    r.swappers.back()->host.bind(platform.hostLink(chip).socket);
  }
}

bool ServingEngine::runSwaps(const std::vector<Replica*>& replicas) {
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  auto pending = std::make_shared<int>(0);
  auto done = std::make_shared<sc_core::sc_event>();
  std::vector<Replica*> waiting;
  for (Replica* r : replicas) {
    const std::vector<KvSwap>& swaps = r->scheduler->swaps();
    if (swaps.empty()) continue;
    waiting.push_back(r);
    for (const KvSwap& swap : swaps) {
      // Every chip's slice counts, mirrored or not, so that mirroring never shows in the results.
      for (const auto& swapper : r->swappers) {
        (swap.toHost ? r->stats.swapOutBytes : r->stats.swapInBytes) +=
            static_cast<double>(swapper->bytesFor(swap.moves.size()));
      }
    }
    // Mirrors would copy exactly what their leader copies, in the same time: only leaders copy.
    for (std::size_t c = 0; c < r->swappers.size(); ++c) {
      if (r->mirrors[c]) continue;
      ++*pending;
      KvSwapper* swapper = r->swappers[c].get();
      const hw::KvBlockAllocator* kv = &r->scheduler->kv();
      const std::vector<KvSwap>* list = &swaps;
      sc_core::sc_spawn(
          [swapper, kv, list, pending, done] {
            for (const KvSwap& swap : *list) {
              if (!swapper->copy(*kv, swap)) break;
            }
            if (--*pending == 0) done->notify();
          },
          sc_core::sc_gen_unique_name("kv_swap"));
    }
  }
  if (*pending > 0) sc_core::wait(*done);
  for (Replica* r : waiting) {
    for (const auto& swapper : r->swappers) {
      if (!swapper->error().empty() && m_error.empty()) m_error = swapper->error();
    }
    r->stats.swapS += (sc_core::sc_time_stamp() - start).to_seconds();
  }
  if (m_error.empty()) return true;
  sc_core::sc_stop();
  return false;
}

}  // namespace scoville::runtime
