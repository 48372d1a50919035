#pragma once
// Replica classes: how a closed-loop serving run over alike, uncoupled replicas is simulated with
// one replica per class of identical load (pure decisions; runtime/ServingEngine applies them).
//
// A closed-loop user always enters the same replica (user modulo the replicas; RequestRouter), so
// with C users on R replicas, q = C / R and m = C % R, replicas 0 .. m-1 serve q + 1 users each
// and replicas m .. R-1 serve q. Replicas that share no link, no memory and no expert, and serve
// the same number of users from the same length distribution, are statistically identical: one
// representative per class is simulated with its users, and the others mirror it (their chips
// report its chips' power and activity, their requests are its requests again).
//
// The representatives' load is the scenario's scaled by the users simulated, Cs = (q + 1 if m > 0)
// + (q if q > 0): Cs users (user u enters representative u modulo the classes, which gives the
// first class q + 1 users and the second q), and warm-up and measured requests in the same
// proportion, rounded up, so that every user does the same rounds as in the full run. Replicas
// without users (C < R) are idle in both runs and are not mirrored.
//
// What it costs: the metrics come from fewer distinct requests (about measured x Cs / C), each
// standing for its class's replicas. With fixed lengths (random_range_ratio 1) a class's replicas
// run identically and the metrics agree with the full run's; with drawn lengths they agree within
// the sampling error of that many requests, which the report states.

#include <cstdint>
#include <vector>

namespace scoville::workload {

/// Replicas serving the same number of users: `representative` is simulated, `followers` mirror it.
struct ReplicaClass {
  int representative = 0;
  std::vector<int> followers;
  int users = 0;  ///< per replica
};

struct ReplicaClassPlan {
  std::vector<ReplicaClass> classes;  ///< the simulated ones, in representative order
  int users = 0;                      ///< users the representatives serve together (Cs)
  uint64_t warmup = 0;                ///< warm-up requests of the simulated load
  uint64_t measured = 0;              ///< measured requests of the simulated load
  std::vector<int> leaderOf;          ///< per replica: the representative it mirrors, or -1

  /// True when some replica mirrors another (the plan saves simulation).
  bool mirrors() const;
  /// The representatives, in the order requests enter them (user u enters entries()[u % size]).
  std::vector<int> entries() const;
};

/// The classes of `replicas` replicas under `users` closed-loop users, with `warmup` warm-up and
/// `measured` measured requests. Throws std::invalid_argument for replicas < 1 or users < 1.
ReplicaClassPlan planReplicaClasses(int replicas, int users, uint64_t warmup, uint64_t measured);

}  // namespace scoville::workload
