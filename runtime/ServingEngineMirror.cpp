// ServingEngine's mirrored ranks: which ranks of a replica mirror their stage's rank 0, the
// groups whose collectives rank 0 then runs for all, and the mirrors as the report lists them
// (see ServingEngine.h).
#include <algorithm>

#include "runtime/ServingEngine.h"

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file drives

void ServingEngine::decideMirrors(Replica& r, bool mirror, const platform::PlatformConfig& config) {
  for (int c = 0; c < m_tp * m_pp; ++c) {
    // Rank r of a stage mirrors the stage's rank 0 when it plans like it.
    const auto leader = static_cast<std::size_t>(c / m_tp * m_tp);
    r.leaderOf.push_back(leader);
    // Off-chip KV reaches other chips' memories and links, which mirroring would not see.
    r.mirrors.push_back(mirror && !offChipKv() && c % m_tp > 0 &&
                        r.planners[static_cast<std::size_t>(c)]->plansLike(*r.planners[leader]));
  }
  // A group whose ranks all mirror rank 0 is run by rank 0 alone, each block of its collectives
  // as one rotation (CollectiveGroup::setMirrored): on a single switched stage, where a
  // rotation is exact and no pipeline send needs the mirrors.
  if (m_pp == 1 && r.groups.size() == 1 && config.network.topology == platform::Topology::kSwitched &&
      std::all_of(r.mirrors.begin() + 1, r.mirrors.end(), [](bool m) { return m; })) {
    r.groups.front()->setMirrored(true);
  }
}

std::vector<int> ServingEngine::mirrorOfChips() const {
  std::vector<int> mirrorOf;
  for (const auto& r : m_replicas) {
    for (std::size_t c = 0; c < r->mirrors.size(); ++c) {
      const auto chip = static_cast<std::size_t>(r->chips[c]);
      if (mirrorOf.size() <= chip) mirrorOf.resize(chip + 1, -1);
      if (r->mirrors[c]) mirrorOf[chip] = r->chips[r->leaderOf[c]];
    }
  }
  return mirrorOf;
}

int ServingEngine::mirroredChips() const {
  int mirrored = 0;
  for (const auto& r : m_replicas) mirrored += static_cast<int>(std::count(r->mirrors.begin(), r->mirrors.end(), true));
  return mirrored;
}

}  // namespace scoville::runtime
