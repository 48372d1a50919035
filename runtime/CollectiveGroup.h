#pragma once
// The chips of one tensor-parallel group running collectives in lockstep over the platform's
// fabric.
//
// Each member's compute stream calls run() when its op's result must be combined. The collective
// is expanded into a schedule of point-to-point sends (hw::expandCollective). A step starts when
// every member has reached it; the last to arrive issues the step's sends of all members through
// their chips' fabric interfaces at that time, in rounds (everyone's first send in rank order,
// then everyone's second, ...: the order the links would see them, each link serialising what it
// carries), and every member leaves the step when the last send has arrived. The collective's
// time thus comes from the links and switches, and a slow member delays the whole group, as on
// hardware. (Issuing from one thread costs two context switches per member and step, not one
// per round.)
#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <map>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "hw/network/Collective.h"
#include "tlm/PayloadPool.h"
#include "stats/StatsGroup.h"
#include "workloads/StepPlan.h"

namespace scoville::runtime {

using workload::PlannedCollective;
using workload::StepPlan;

/// What the alpha-beta estimate behind CollectiveAlgorithm::kAuto knows of a member chip.
struct CollectiveCost {
  double latencyS = 0.0;            ///< alpha: one message's latency (a link's)
  double bandwidthBytesPerS = 0.0;  ///< beta: what one chip injects into the fabric (all its ports)
};

/// The algorithm `auto` resolves to for `kind` over `members` chips holding `bytes` each: the
/// lowest of ring 2(n-1)(a + B/(n b)), direct a + (n-1) B/b and tree 2 ceil(log2 n)(a + B/b) for
/// an all-reduce; direct for an all-gather (it is never slower in this estimate). An estimate
/// chooses the algorithm only; its time comes from the fabric.
hw::CollectiveAlgorithm resolveAutoAlgorithm(hw::CollectiveKind kind, int members, uint64_t bytes,
                                             const CollectiveCost& cost);

class CollectiveGroup : public sc_core::sc_module {
 public:
  /// sockets[r] carries rank r's sends; bind it to the fabric interface of chips[r].
  sc_core::sc_vector<tlm_utils::simple_initiator_socket<CollectiveGroup>> sockets;

  /// `chips`: the platform chip of each rank. `allReduce`: algorithm of all-reduces (all-gathers
  /// use ring unless allReduce is direct).
  CollectiveGroup(const sc_core::sc_module_name& name, std::vector<int> chips, hw::CollectiveAlgorithm allReduce,
                  const CollectiveCost& cost = {});
  CollectiveGroup(const CollectiveGroup&) = delete;
  CollectiveGroup& operator=(const CollectiveGroup&) = delete;

  int size() const { return static_cast<int>(m_chips.size()); }
  /// Mirrored: every rank but 0 mirrors rank 0 (identical plans, StepDriver's mirrors), so only
  /// rank 0 calls run() and it runs every member's part: the sends of all members, each block in
  /// which member i sends the same bytes to member i + k as one rotation (and consecutive such
  /// blocks of a step as one batch) transaction through rank 0's socket (hw::Switch serves it as
  /// those messages). Set before the simulation starts; only
  /// over a switched fabric (a graph fabric refuses rotations).
  void setMirrored(bool mirrored) { m_mirrored = mirrored; }
  bool mirrored() const { return m_mirrored; }
  /// Runs `collective` for rank `rank`; call from that rank's SC_THREAD, every rank the same
  /// collectives in the same order. Returns false (with error() set) when a send fails.
  bool run(int rank, const PlannedCollective& collective, uint32_t layer);
  const std::string& error() const { return m_error; }
  const stats::Group& stats() const { return m_stats; }

 private:
  /// A run of a step's issue order: one send, or (shift > 0) `size()` sends in which member i
  /// sends the same bytes to member i + shift, members in order.
  struct Block {
    std::size_t first = 0;
    std::size_t count = 1;
    int shift = 0;
  };
  /// A schedule with each step's sends in issue order (round by round, ranks ascending).
  struct Ordered {
    hw::Schedule schedule;
    std::vector<std::vector<const hw::Send*>> issueOrder;
    std::vector<std::vector<Block>> blocks;  ///< per step, the issue order cut into blocks
  };
  const Ordered& schedule(const PlannedCollective& collective);
  /// Waits until every member has called it; the last to arrive runs `issue` (which sets
  /// m_stepEnd) for all. Everyone returns at m_stepEnd, false when there was an error.
  template <typename Issue>
  bool step(Issue&& issue);
  /// One kSend payload of `bytes` through rank `rank`'s socket to rank `dst` (shift > 0:
  /// `rotations` rotations by shift, shift + 1, ..., from rank 0); its completion delay raises
  /// `latest`. False on an error.
  bool transport(int rank, int dst, uint64_t bytes, int shift, uint32_t layer, sc_core::sc_time& latest,
                 int rotations = 1);
  /// Issues one send of rank `rank`; its completion delay raises `latest`. False on an error.
  bool send(int rank, const hw::Send& send, uint32_t layer, sc_core::sc_time& latest);
  /// Issues `rotations` consecutive rotation blocks (every member sends `bytes` to the member
  /// `shift`, then `shift + 1`, ... after it) as one transaction through rank 0's socket.
  bool sendRotations(uint64_t bytes, int shift, int rotations, uint32_t layer, sc_core::sc_time& latest);
  /// Issues one step's sends in issue order; false on an error.
  bool issueStep(const Ordered& ordered, std::size_t step, uint32_t layer, sc_core::sc_time& latest);

  std::vector<int> m_chips;
  hw::CollectiveAlgorithm m_algorithm;
  CollectiveCost m_cost;
  std::map<std::pair<int, uint64_t>, Ordered> m_schedules;
  std::vector<const PlannedCollective*> m_pending;  ///< each rank's collective in the current step
  sc_core::sc_time m_stepEnd;                       ///< when the current step's last send arrives
  int m_arrived = 0;
  uint64_t m_generation = 0;
  sc_core::sc_event m_release;
  tlm::PayloadPool m_pool;
  std::string m_error;
  bool m_mirrored = false;

  stats::Group m_stats;
  stats::Counter& m_collectives;
  stats::Counter& m_sends;
  stats::Counter& m_bytes;
  stats::Counter& m_time;
};

}  // namespace scoville::runtime
