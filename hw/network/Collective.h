#pragma once
// Collective communication over the inter-chip fabric.
//
// expandCollective() turns a collective into a schedule of point-to-point sends; it holds no
// timing. CollectiveEngine plays a schedule through the chips' SwitchPorts, so the collective's
// time emerges from the links and the switch: the sends of a step are issued together, and the
// next step starts when every send of the step has reached its destination (a barrier across all
// chips).

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "tlm/PayloadPool.h"
#include "config/Schema.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

/// ring: neighbour exchange around a ring; direct: one shot, every chip sends to every peer at
/// once; tree: binary-tree reduce to chip 0 then broadcast (all_reduce only).
/// kAuto is not an algorithm: the caller picks one of the others per message (CollectiveGroup
/// does, by an alpha-beta estimate); expandCollective rejects it.
enum class CollectiveAlgorithm { kRing, kDirect, kTree, kAuto };

const char* collectiveKindName(CollectiveKind kind);
const char* collectiveAlgorithmName(CollectiveAlgorithm algorithm);

/// One point-to-point message.
struct Send {
  int src = 0;
  int dst = 0;
  uint64_t bytes = 0;
};

/// Steps run one after another; the sends of a step run concurrently. Each step lists a chip's
/// sends in the order that chip issues them.
struct Schedule {
  int chips = 0;
  std::vector<std::vector<Send>> steps;
};

/// Expands a collective over `chips` chips. `bytesPerChip` (B) is the full buffer each chip holds:
/// all_reduce reduces B bytes; all_gather produces B bytes from B/chips per chip; reduce_scatter
/// reduces B bytes into B/chips per chip; all_to_all sends B/chips to every chip. When B is not a
/// multiple of chips, chunk c holds one extra byte for c < B mod chips.
///
/// Volumes per chip: ring all_reduce 2(N-1) steps of B/N; ring all_gather and reduce_scatter N-1
/// steps of B/N; direct all_gather, reduce_scatter and all_to_all 1 step of N-1 sends of B/N;
/// direct all_reduce (one shot) 1 step of N-1 sends of B; tree all_reduce 2 floor(log2 N) steps in
/// which chips of one tree level send B to their parent (reduce) or receive B from it (broadcast).
/// One chip gives an empty schedule. Throws std::invalid_argument for chips < 1, B < chips or an
/// algorithm the collective does not support.
Schedule expandCollective(CollectiveKind kind, CollectiveAlgorithm algorithm, int chips, uint64_t bytesPerChip);

/// A collective as written in YAML.
struct CollectiveConfig {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  double bytesPerChip = 0.0;

  Schedule expand(int chips) const;
  static const config::Schema<CollectiveConfig>& schema();
};

class CollectiveEngine : public sc_core::sc_module {
 public:
  /// sockets[c] issues chip c's sends (kSend, srcChip = c); bind it to chip c's SwitchPort::fromChip.
  sc_core::sc_vector<tlm_utils::simple_initiator_socket<CollectiveEngine>> sockets;

  /// Plays `schedule` from time zero. A send answered with an error response is an SC_REPORT_ERROR.
  CollectiveEngine(const sc_core::sc_module_name& name, Schedule schedule);
  CollectiveEngine(const CollectiveEngine&) = delete;
  CollectiveEngine& operator=(const CollectiveEngine&) = delete;

  bool done() const { return m_stepEnds.size() == m_schedule.steps.size(); }
  /// Completion time of each finished step (the last byte of its slowest send).
  const std::vector<sc_core::sc_time>& stepEnds() const { return m_stepEnds; }
  /// Time from start to the end of the last step; valid once done().
  sc_core::sc_time totalTime() const { return m_stepEnds.empty() ? sc_core::SC_ZERO_TIME : m_stepEnds.back(); }
  const Schedule& schedule() const { return m_schedule; }
  const stats::Group& stats() const { return m_stats; }

 private:
  void runChip(int chip);
  void barrier();

  Schedule m_schedule;
  std::vector<std::vector<std::vector<Send>>> m_sendsOf;  // [step][chip] in issue order
  std::vector<sc_core::sc_time> m_stepEnds;
  int m_arrived = 0;
  sc_core::sc_event m_stepDone;
  tlm::PayloadPool m_pool;

  stats::Group m_stats;
  stats::Counter& m_sends;
  stats::Counter& m_bytes;
};

}  // namespace scoville::hw
