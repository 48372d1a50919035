#include "hw/kv/KvPlacementPolicy.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace scoville::hw {

namespace {

/// Takes the first tier of a fixed preference order that has a free block.
class TierOrderPlacement : public KvPlacementPolicy {
 public:
  TierOrderPlacement(std::string name, std::vector<KvTier> order)
      : m_name(std::move(name)), m_order(std::move(order)) {}

  const std::string& name() const override { return m_name; }
  bool mayUse(KvTier tier) const override { return std::find(m_order.begin(), m_order.end(), tier) != m_order.end(); }
  std::optional<KvTier> place(const KvTierBlocks& freeBlocks, const KvPlacementQuery&) const override {
    for (KvTier tier : m_order) {
      if (freeBlocks[kvTierIndex(tier)] > 0) return tier;
    }
    return std::nullopt;
  }

 private:
  std::string m_name;
  std::vector<KvTier> m_order;
};

class LocalFirstPlacement : public TierOrderPlacement {
 public:
  LocalFirstPlacement() : TierOrderPlacement("local_first", {KvTier::kSram, KvTier::kLocalHbm}) {}
};

class SpillToRemotePlacement : public TierOrderPlacement {
 public:
  SpillToRemotePlacement()
      : TierOrderPlacement("spill_to_remote", {KvTier::kSram, KvTier::kLocalHbm, KvTier::kRemoteHbm}) {}
};

class OffloadToHostPlacement : public TierOrderPlacement {
 public:
  OffloadToHostPlacement() : TierOrderPlacement("offload_to_host", {KvTier::kSram, KvTier::kLocalHbm, KvTier::kHost}) {}
};

struct Registration {
  std::string name;
  std::function<std::unique_ptr<KvPlacementPolicy>()> make;
};

const std::vector<Registration>& placementPolicies() {
  static const std::vector<Registration> policies = {
      {"local_first", [] { return std::make_unique<LocalFirstPlacement>(); }},
      {"spill_to_remote", [] { return std::make_unique<SpillToRemotePlacement>(); }},
      {"offload_to_host", [] { return std::make_unique<OffloadToHostPlacement>(); }},
  };
  return policies;
}

}  // namespace

std::unique_ptr<KvPlacementPolicy> makeKvPlacementPolicy(const std::string& name) {
  for (const Registration& r : placementPolicies()) {
    if (r.name == name) return r.make();
  }
  throw std::invalid_argument(
      fmt::format("unknown KV placement policy '{}' (known: {})", name, fmt::join(kvPlacementPolicyNames(), ", ")));
}

const std::vector<std::string>& kvPlacementPolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Registration& r : placementPolicies()) out.push_back(r.name);
    return out;
  }();
  return names;
}

}  // namespace scoville::hw
