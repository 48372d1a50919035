#include "runtime/KvPlacementMode.h"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace scoville::runtime {

namespace {

constexpr std::array<KvPlacementMode, 3> kModes{{
    {"local_first", false, false},
    {"spill_to_remote", true, false},
    {"offload_to_host", false, true},
}};

}  // namespace

const KvPlacementMode& KvPlacementMode::of(const std::string& name) {
  for (const KvPlacementMode& mode : kModes) {
    if (name == mode.policy) return mode;
  }
  throw std::invalid_argument(
      fmt::format("unknown KV placement policy '{}' (known: {})", name, fmt::join(names(), ", ")));
}

std::vector<std::string> KvPlacementMode::names() {
  std::vector<std::string> out;
  for (const KvPlacementMode& mode : kModes) out.emplace_back(mode.policy);
  return out;
}

}  // namespace scoville::runtime
