#include "workloads/ReplicaClasses.h"

#include <algorithm>
#include <stdexcept>

namespace scoville::workload {

namespace {

/// ceil(n x num / den), for den > 0.
uint64_t scaledUp(uint64_t n, uint64_t num, uint64_t den) {
  return (n * num + den - 1) / den;
}

}  // namespace

bool ReplicaClassPlan::mirrors() const {
  for (const ReplicaClass& c : classes) {
    if (!c.followers.empty()) return true;
  }
  return false;
}

std::vector<int> ReplicaClassPlan::entries() const {
  std::vector<int> out;
  for (const ReplicaClass& c : classes) out.push_back(c.representative);
  return out;
}

ReplicaClassPlan planReplicaClasses(int replicas, int users, uint64_t warmup, uint64_t measured) {
  if (replicas < 1 || users < 1) throw std::invalid_argument("planReplicaClasses: needs a replica and a user");
  const int q = users / replicas;
  const int m = users % replicas;
  ReplicaClassPlan plan;
  plan.leaderOf.assign(static_cast<std::size_t>(replicas), -1);
  const auto addClass = [&](int first, int end, int perReplica) {
    if (first >= end || perReplica == 0) return;
    ReplicaClass c{first, {}, perReplica};
    for (int r = first + 1; r < end; ++r) {
      c.followers.push_back(r);
      plan.leaderOf[static_cast<std::size_t>(r)] = first;
    }
    plan.users += perReplica;
    plan.classes.push_back(std::move(c));
  };
  addClass(0, m, q + 1);     // the classes alternate entries: the first gets ceil(Cs / 2) = q + 1
  addClass(m, replicas, q);  // and the second floor(Cs / 2) = q users
  const auto cs = static_cast<uint64_t>(plan.users);
  const auto c = static_cast<uint64_t>(users);
  plan.warmup = scaledUp(warmup, cs, c);
  plan.measured = std::max<uint64_t>(1, scaledUp(measured, cs, c));
  return plan;
}

}  // namespace scoville::workload
