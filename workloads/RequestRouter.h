#pragma once
// The serving front end's decisions, without time: which replica each request enters at, which
// decode replica a prefilled request hands its KV to, the record of every request, and when the
// measurement is complete. The runtime (runtime/ServingFrontEnd) sends the requests and moves the
// KV; this class only decides and records.
//
// Entry: a closed-loop user always enters at the same replica (user modulo the entry replicas);
// open-loop requests go round robin over them. Entry replicas are every replica, or the prefill
// pool under disaggregation, whose prefilled requests go round robin over the decode pool.
//
// Measurement: requests are numbered in sending order from 1; the first `warmup` are warm-up,
// the next `measured` are measured. The run is complete when the last measured one finishes;
// the window runs from the first measured request's arrival to the last one's finish.
//
// Replica classes (ReplicaClasses.h): a replica that mirrors a representative serves no request
// of its own; the metrics count each of the representative's requests once more for it.

#include <cstdint>
#include <vector>

#include "workloads/LoadGenerator.h"
#include "workloads/ServingMetrics.h"

namespace scoville::workload {

class RequestRouter {
 public:
  /// `entries`: the replicas requests enter at (non-empty); `decoders`: the decode pool under
  /// disaggregation (empty without it). Throws std::invalid_argument for no entry replica.
  RequestRouter(std::vector<int> entries, std::vector<int> decoders, uint64_t warmup, uint64_t measured);

  /// Records `arrival`, sent at `now`, and returns the replica it enters at.
  int admit(const Arrival& arrival, double now);
  /// Disaggregation: the decode replica that takes the next prefilled request (round robin).
  /// Throws std::logic_error without a decode pool.
  int nextDecoder();
  /// Replica r with leaderOf[r] >= 0 mirrors replica leaderOf[r] (call before the run).
  void setMirrors(std::vector<int> leaderOf) { m_leaderOf = std::move(leaderOf); }
  /// Request `id` produced an output token at `now`.
  void tokenProduced(uint64_t id, double now);
  /// Request `id` produced its last token at `now`, after `preemptions` preemptions. Completes
  /// the run when it is the last measured request still running.
  void finished(uint64_t id, double now, int preemptions);

  /// True once every measured request has finished.
  bool completed() const { return m_completed; }
  /// Request `id` (1-based); throws std::out_of_range for one never admitted.
  const RequestRecord& record(uint64_t id) const { return m_records[indexOf(id)]; }
  /// Every request admitted, in the order they were sent (ids need not be: a user that thinks
  /// before its next turn sends it after one that starts a conversation at once).
  const std::vector<RequestRecord>& records() const { return m_records; }
  /// The records the metrics count: finished requests as they are, unfinished ones cut to the
  /// tokens they produced (unmeasured; their tokens inside the window still count towards
  /// throughput), requests without any token left out. Then, for every mirroring replica in
  /// replica order, its representative's records again with its index and ids above every
  /// request sent.
  std::vector<RequestRecord> metricRecords() const;
  /// From the first measured request's arrival to the last one's finish; {0, 0} until every
  /// measured request was admitted.
  ServingWindow window() const;

 private:
  std::vector<int> m_entries;
  std::vector<int> m_decoders;
  std::size_t m_nextEntry = 0;
  std::size_t m_nextDecoder = 0;
  uint64_t m_firstMeasured = 1;  ///< ids [m_firstMeasured, m_lastMeasured] are measured
  uint64_t m_lastMeasured = 0;
  uint64_t m_measuredLeft = 0;
  bool m_completed = false;
  std::vector<RequestRecord> m_records;  ///< in sending order
  std::vector<int> m_leaderOf;           ///< per replica: the representative it mirrors, or -1
  static constexpr std::size_t kNotSent = ~std::size_t{0};
  std::vector<std::size_t> m_position;  ///< by id - 1: the index of its record, or kNotSent

  /// The index of request `id`'s record; throws std::out_of_range for one never admitted.
  std::size_t indexOf(uint64_t id) const;
};

}  // namespace scoville::workload
