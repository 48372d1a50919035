#include "workloads/CollectiveGroup.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "tlm/OpExtension.h"

namespace scoville::workload {

hw::CollectiveAlgorithm resolveAutoAlgorithm(hw::CollectiveKind kind, int members, uint64_t bytes,
                                             const CollectiveCost& cost) {
  if (kind != hw::CollectiveKind::kAllReduce || members < 2) return hw::CollectiveAlgorithm::kDirect;
  const double n = members;
  const double b = static_cast<double>(bytes);
  const double beta = cost.bandwidthBytesPerS > 0 ? cost.bandwidthBytesPerS : 1.0;
  const double a = cost.latencyS;
  const double ring = 2.0 * (n - 1.0) * (a + b / (n * beta));
  const double direct = a + (n - 1.0) * b / beta;
  const double tree = 2.0 * std::ceil(std::log2(n)) * (a + b / beta);
  if (direct <= ring && direct <= tree) return hw::CollectiveAlgorithm::kDirect;
  return ring <= tree ? hw::CollectiveAlgorithm::kRing : hw::CollectiveAlgorithm::kTree;
}

CollectiveGroup::CollectiveGroup(const sc_core::sc_module_name& name, std::vector<int> chips,
                                 hw::CollectiveAlgorithm allReduce, const CollectiveCost& cost)
    : sc_core::sc_module(name),
      sockets("socket", chips.size()),
      m_chips(std::move(chips)),
      m_algorithm(allReduce),
      m_cost(cost),
      m_stats(basename(), "collectives of one tensor-parallel group"),
      m_collectives(m_stats.counter("collectives", "", "collectives run (counted once per group)")),
      m_sends(m_stats.counter("sends", "", "point-to-point sends of all members")),
      m_bytes(m_stats.counter("bytes", "B", "payload bytes sent by all members")),
      m_time(m_stats.counter("time", "s",
                             "time from the first member entering a collective to the last leaving "
                             "it, summed over collectives")) {}

const hw::Schedule& CollectiveGroup::schedule(const PlannedCollective& collective) {
  const auto key = std::make_pair(static_cast<int>(collective.kind), collective.bytes);
  auto it = m_schedules.find(key);
  if (it == m_schedules.end()) {
    const hw::CollectiveKind kind = collective.kind == PlannedCollective::Kind::kAllReduce
                                        ? hw::CollectiveKind::kAllReduce
                                        : hw::CollectiveKind::kAllGather;
    // A buffer smaller than the group cannot be cut into one chunk per member: round it up.
    const uint64_t bytes = std::max<uint64_t>(collective.bytes, static_cast<uint64_t>(size()));
    hw::CollectiveAlgorithm algorithm = m_algorithm;
    if (algorithm == hw::CollectiveAlgorithm::kAuto) algorithm = resolveAutoAlgorithm(kind, size(), bytes, m_cost);
    if (kind == hw::CollectiveKind::kAllGather && algorithm == hw::CollectiveAlgorithm::kTree) {
      algorithm = hw::CollectiveAlgorithm::kRing;  // tree is defined for all-reduce only
    }
    it = m_schedules.emplace(key, hw::expandCollective(kind, algorithm, size(), bytes)).first;
  }
  return it->second;
}

void CollectiveGroup::barrier() {
  const uint64_t generation = m_generation;
  if (++m_arrived == size()) {
    m_arrived = 0;
    ++m_generation;
    m_release.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  while (m_generation == generation) sc_core::wait(m_release);
}

bool CollectiveGroup::send(int rank, const hw::Send& send, uint32_t layer, sc_core::sc_time& latest) {
  tlm::PayloadRef payload(m_pool);
  tlm::OpExtension& op = payload.op();
  op.kind = tlm::OpKind::kSend;
  op.phase = tlm::LlmPhase::kDecode;
  op.layer = layer;
  op.bytes = send.bytes;
  op.srcChip = m_chips[static_cast<std::size_t>(rank)];
  op.dstChip = m_chips[static_cast<std::size_t>(send.dst)];
  payload->set_command(::tlm::TLM_WRITE_COMMAND);
  payload->set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  sockets[static_cast<std::size_t>(rank)]->b_transport(*payload, delay);
  if (payload->get_response_status() != ::tlm::TLM_OK_RESPONSE) {
    if (m_error.empty()) {
      m_error = fmt::format("layer {}: send of {} bytes from chip {} to chip {} failed: {}", layer, send.bytes,
                            op.srcChip, op.dstChip, payload->get_response_string());
    }
    return false;
  }
  m_sends.add();
  m_bytes.add(static_cast<double>(send.bytes));
  latest = std::max(latest, delay);
  return true;
}

bool CollectiveGroup::run(int rank, const PlannedCollective& collective, uint32_t layer) {
  if (collective.kind == PlannedCollective::Kind::kNone || size() < 2) return true;
  barrier();  // a collective starts when every member has its input
  if (rank == 0) m_collectives.add();
  const sc_core::sc_time entered = sc_core::sc_time_stamp();
  if (collective.kind == PlannedCollective::Kind::kAllToAll) {
    // Each member sends its own bytes to every other member (none to itself), in n - 1 rounds:
    // in round k to the member k places after it, so every link carries one message per round.
    if (collective.sendBytes.size() != static_cast<std::size_t>(size())) {
      m_error = fmt::format("layer {}: all-to-all of rank {} lists {} members' bytes, the group has {}", layer, rank,
                            collective.sendBytes.size(), size());
      return false;
    }
    sc_core::sc_time latest = sc_core::SC_ZERO_TIME;
    for (int k = 1; k < size(); ++k) {
      const int dst = (rank + k) % size();
      const uint64_t bytes = collective.sendBytes[static_cast<std::size_t>(dst)];
      if (bytes > 0 && !send(rank, hw::Send{rank, dst, bytes}, layer, latest)) return false;
      if (k + 1 < size()) barrier();
    }
    if (latest > sc_core::SC_ZERO_TIME) sc_core::wait(latest);
    barrier();
    if (rank == 0) m_time.add((sc_core::sc_time_stamp() - entered).to_seconds());
    return true;
  }
  for (const std::vector<hw::Send>& step : schedule(collective).steps) {
    // The sends of a step are issued in rounds: every member's k-th send before anyone's
    // (k+1)-th, all at the current time. Loosely-timed targets serve in call order, so issuing
    // rank by rank would let one member's later sends take the links ahead of the others' first
    // ones; rounds keep the order the hardware would see (each member's engine pushing its
    // messages out one after another, all members at once).
    std::vector<const hw::Send*> mine;
    std::size_t rounds = 0;
    {
      std::vector<std::size_t> perRank(static_cast<std::size_t>(size()), 0);
      for (const hw::Send& send : step) {
        ++perRank[static_cast<std::size_t>(send.src)];
        if (send.src == rank) mine.push_back(&send);
      }
      rounds = *std::max_element(perRank.begin(), perRank.end());
    }
    sc_core::sc_time latest = sc_core::SC_ZERO_TIME;
    for (std::size_t round = 0; round < rounds; ++round) {
      if (round < mine.size() && !send(rank, *mine[round], layer, latest)) return false;
      if (round + 1 < rounds) barrier();
    }
    if (latest > sc_core::SC_ZERO_TIME) sc_core::wait(latest);
    barrier();
  }
  if (rank == 0) m_time.add((sc_core::sc_time_stamp() - entered).to_seconds());
  return true;
}

}  // namespace scoville::workload
