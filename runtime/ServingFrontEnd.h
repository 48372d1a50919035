#pragma once
// The serving front end: it drives the load into the replicas and hands prefilled requests
// over. RequestRouter (workloads/) decides where each request goes and keeps the records; this
// class does it in simulated time.
//
// Closed loop: each finished request makes its user send the next at once; with a warm-up
// barrier, the users hold their first measured request until every warm-up request finished,
// then all send at once. Open loop: a source thread sends the requests at their arrival times.
// A sent request reaches its replica's scheduler after the front end's time per request (the
// software stack's request_overhead and request_overhead_per_token; TTFT and E2E count from the
// send) and wakes the replica's runner. Under disaggregation the prefill pool produces only the
// first token; the prompt's KV then moves, every rank to the same rank of a decode replica over
// the fabric, and the decode replica produces the rest. After the last measured request nothing
// new is sent; steps and transfers in flight finish.

#include <cstdint>
#include <set>
#include <systemc>
#include <vector>

#include "runtime/Replica.h"
#include "workloads/LoadGenerator.h"
#include "workloads/RequestRouter.h"
#include "workloads/ServingScheduler.h"

namespace scoville::runtime {

/// How the front end paces requests: the warm-up phase and its per-request time.
struct FrontEndPolicy {
  uint64_t warmup = 0;         ///< warm-up requests (the first sent)
  bool warmupBarrier = false;  ///< closed loop: measured requests wait for every warm-up to finish
  double requestOverheadS = 0.0;
  double requestOverheadPerTokenS = 0.0;
  /// The time from sending a request of `inputTokens` prompt tokens to its arrival at the scheduler.
  double delayOf(uint64_t inputTokens) const {
    return requestOverheadS + requestOverheadPerTokenS * static_cast<double>(inputTokens);
  }
};

class ServingFrontEnd {
 public:
  ServingFrontEnd(ReplicaSet& set, workload::LoadGenerator& load, workload::RequestRouter& router, RunStatus& status,
                  FrontEndPolicy policy = {})
      : m_set(set), m_load(load), m_router(router), m_status(status), m_policy(policy) {}

  /// Spawns the load's thread: the closed loop's users, or the open loop's source.
  void start();
  /// Replica `r` finished a step with `outcomes`: token times, finished requests, hand-offs and
  /// the users' next requests.
  void stepDone(Replica& r, const std::vector<workload::StepOutcome>& outcomes);
  /// True once every measured request has finished.
  bool completed() const { return m_router.completed(); }
  /// Notified with every request submitted to any replica.
  const sc_core::sc_event& anyWork() const { return m_anyWork; }

  /// Disaggregation: prompt KV transfers done, their bytes (all ranks) and summed time.
  uint64_t kvTransfers() const { return m_kvTransfers; }
  double kvTransferBytes() const { return m_kvTransferBytes; }
  double kvTransferTimeS() const { return m_kvTransferTimeS; }

 private:
  void send(const workload::Arrival& arrival);
  /// Queues request `request` at replica `replica`'s scheduler (after the front end's time).
  void submit(int replica, const workload::ServingRequest& request);
  /// Closed loop: user `user`'s request finished at `now`; sends its next one, or holds it at the
  /// warm-up barrier.
  void nextOf(int user, uint64_t finished, double now);
  void openLoopSource();
  /// Moves request `id`'s prompt KV from prefill replica `from` to decode replica `to` (every
  /// rank to the same rank), then queues it there.
  void transferKv(uint64_t id, int from, int to);

  ReplicaSet& m_set;
  workload::LoadGenerator& m_load;
  workload::RequestRouter& m_router;
  RunStatus& m_status;
  FrontEndPolicy m_policy;
  std::set<uint64_t> m_thinking;  ///< requests whose user is still thinking before sending them
  uint64_t m_warmupsFinished = 0;
  std::vector<int> m_held;  ///< users waiting at the warm-up barrier
  sc_core::sc_event m_anyWork;
  uint64_t m_kvTransfers = 0;
  double m_kvTransferBytes = 0.0;
  double m_kvTransferTimeS = 0.0;
};

}  // namespace scoville::runtime
