#include "runtime/Replica.h"

#include <algorithm>

namespace scoville::runtime {

std::vector<int> ReplicaSet::entries() const {
  std::vector<int> out;
  for (const auto& r : replicas) {
    if (r->role != ReplicaRole::kDecode) out.push_back(r->index);
  }
  return out;
}

std::vector<int> ReplicaSet::decoders() const {
  std::vector<int> out;
  for (const auto& r : replicas) {
    if (r->role == ReplicaRole::kDecode) out.push_back(r->index);
  }
  return out;
}

std::string ReplicaSet::moduleError() const {
  for (const auto& r : replicas) {
    for (const auto& d : r->drivers) {
      if (!d->error().empty()) return d->error();
    }
    for (const auto& group : r->groups) {
      if (!group->error().empty()) return group->error();
    }
    for (const auto& link : r->links) {
      if (!link->error().empty()) return link->error();
    }
  }
  return "";
}

const KvFetcher* ReplicaSet::kvFetcher(int chip) const {
  for (const auto& r : replicas) {
    for (const auto& f : r->fetchers) {
      if (f->chip() == chip) return f.get();
    }
  }
  return nullptr;
}

std::vector<int> ReplicaSet::mirrorOfChips() const {
  std::vector<int> mirrorOf;
  for (const auto& r : replicas) {
    for (std::size_t c = 0; c < r->mirrors.size(); ++c) {
      const auto chip = static_cast<std::size_t>(r->chips[c]);
      if (mirrorOf.size() <= chip) mirrorOf.resize(chip + 1, -1);
      if (r->mirrors[c]) mirrorOf[chip] = r->chips[r->leaderOf[c]];
    }
  }
  for (const auto& r : replicas) {
    const Replica& lead = at(source(r->index));
    if (&lead == r.get()) continue;
    for (std::size_t c = 0; c < r->chips.size(); ++c) {
      const int own = lead.chips[c];
      const auto chip = static_cast<std::size_t>(std::max(own, r->chips[c]));
      if (mirrorOf.size() <= chip) mirrorOf.resize(chip + 1, -1);
      const int simulated = mirrorOf[static_cast<std::size_t>(own)];
      mirrorOf[static_cast<std::size_t>(r->chips[c])] = simulated >= 0 ? simulated : own;
    }
  }
  return mirrorOf;
}

int ReplicaSet::mirroredChips() const {
  int mirrored = 0;
  for (const auto& r : replicas) {
    mirrored += source(r->index) != r->index ? static_cast<int>(r->chips.size())
                                             : static_cast<int>(std::count(r->mirrors.begin(), r->mirrors.end(), true));
  }
  return mirrored;
}

std::size_t ReplicaSet::maxResidentOf(ReplicaRole role) const {
  const auto it = maxResident.find(role);
  return it == maxResident.end() ? 0 : it->second;
}

}  // namespace scoville::runtime
