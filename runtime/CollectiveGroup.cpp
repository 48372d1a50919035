#include "runtime/CollectiveGroup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>

#include "tlm/OpExtension.h"
#include "tlm/PayloadBuilder.h"

namespace scoville::runtime {

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

const CollectiveGroup::Ordered& CollectiveGroup::schedule(const PlannedCollective& collective) {
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
    it = m_schedules.emplace(key, Ordered{hw::expandCollective(kind, algorithm, size(), bytes), {}, {}}).first;
    Ordered& ordered = it->second;
    // Round k holds every member's k-th send of the step, ranks ascending.
    for (const std::vector<hw::Send>& sends : ordered.schedule.steps) {
      std::vector<std::vector<const hw::Send*>> byRank(static_cast<std::size_t>(size()));
      for (const hw::Send& send : sends) byRank[static_cast<std::size_t>(send.src)].push_back(&send);
      std::vector<const hw::Send*> order;
      for (std::size_t round = 0; order.size() < sends.size(); ++round) {
        for (const auto& mine : byRank) {
          if (round < mine.size()) order.push_back(mine[round]);
        }
      }
      // Cut it into blocks; a block of `size()` sends in which member i sends the same bytes
      // to member i + k (the direct and evenly cut ring schedules) can go as one rotation.
      const auto n = static_cast<std::size_t>(size());
      std::vector<Block> blocks;
      for (std::size_t i = 0; i < order.size();) {
        const int shift = (order[i]->dst - order[i]->src + size()) % size();
        bool rotation = order[i]->src == 0 && shift > 0 && i + n <= order.size();
        for (std::size_t j = 0; rotation && j < n; ++j) {
          const hw::Send& s = *order[i + j];
          rotation = s.src == static_cast<int>(j) &&
                     s.dst == static_cast<int>((j + static_cast<std::size_t>(shift)) % n) && s.bytes == order[i]->bytes;
        }
        blocks.push_back(rotation ? Block{i, n, shift} : Block{i, 1, 0});
        i += rotation ? n : 1;
      }
      ordered.issueOrder.push_back(std::move(order));
      ordered.blocks.push_back(std::move(blocks));
    }
  }
  return it->second;
}

template <typename Issue>
bool CollectiveGroup::step(Issue&& issue) {
  const uint64_t generation = m_generation;
  if (++m_arrived == (m_mirrored ? 1 : size())) {
    m_arrived = 0;
    ++m_generation;
    m_stepEnd = sc_core::sc_time_stamp();
    if (m_error.empty()) issue();
    m_release.notify(sc_core::SC_ZERO_TIME);
  } else {
    while (m_generation == generation) sc_core::wait(m_release);
  }
  if (m_stepEnd > sc_core::sc_time_stamp()) sc_core::wait(m_stepEnd - sc_core::sc_time_stamp());
  return m_error.empty();
}

bool CollectiveGroup::transport(int rank, int dst, uint64_t bytes, int shift, uint32_t layer, sc_core::sc_time& latest,
                                int rotations) {
  tlm::PayloadBuilder message(tlm::OpKind::kSend);
  message.phase(tlm::LlmPhase::kDecode)
      .layer(layer)
      .bytes(bytes)
      .chips(m_chips[static_cast<std::size_t>(rank)], m_chips[static_cast<std::size_t>(dst)]);
  if (shift > 0) message.rotation(&m_chips, shift, static_cast<uint32_t>(rotations));
  tlm::PayloadRef payload(message.build(m_pool));
  const tlm::OpExtension& op = payload.op();
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  sockets[static_cast<std::size_t>(rank)]->b_transport(*payload, delay);
  if (payload->get_response_status() != ::tlm::TLM_OK_RESPONSE) {
    if (m_error.empty()) {
      m_error = shift > 0
                    ? fmt::format("layer {}: {} rotation(s) of {} bytes by {} (and on) over chips {} failed: {}", layer,
                                  rotations, bytes, shift, fmt::join(m_chips, ","), payload->get_response_string())
                    : fmt::format("layer {}: send of {} bytes from chip {} to chip {} failed: {}", layer, bytes,
                                  op.srcChip, op.dstChip, payload->get_response_string());
    }
    return false;
  }
  latest = std::max(latest, delay);
  return true;
}

bool CollectiveGroup::send(int rank, const hw::Send& send, uint32_t layer, sc_core::sc_time& latest) {
  if (!transport(rank, send.dst, send.bytes, 0, layer, latest)) return false;
  m_sends.add();
  m_bytes.add(static_cast<double>(send.bytes));
  return true;
}

bool CollectiveGroup::sendRotations(uint64_t bytes, int shift, int rotations, uint32_t layer,
                                    sc_core::sc_time& latest) {
  if (!transport(0, shift, bytes, shift, layer, latest, rotations)) return false;
  for (int i = 0; i < size() * rotations; ++i) {
    m_sends.add();
    m_bytes.add(static_cast<double>(bytes));
  }
  return true;
}

bool CollectiveGroup::issueStep(const Ordered& ordered, std::size_t step, uint32_t layer, sc_core::sc_time& latest) {
  const std::vector<const hw::Send*>& order = ordered.issueOrder[step];
  const std::vector<Block>& blocks = ordered.blocks[step];
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const Block& block = blocks[b];
    if (m_mirrored && block.shift > 0) {
      // Rotations by consecutive shifts of the same bytes, one after another, go as one batch.
      const uint64_t bytes = order[block.first]->bytes;
      int rotations = 1;
      while (b + 1 < blocks.size() && blocks[b + 1].shift == block.shift + rotations &&
             order[blocks[b + 1].first]->bytes == bytes) {
        ++rotations;
        ++b;
      }
      if (!sendRotations(bytes, block.shift, rotations, layer, latest)) return false;
      continue;
    }
    for (std::size_t i = block.first; i < block.first + block.count; ++i) {
      if (!send(order[i]->src, *order[i], layer, latest)) return false;
    }
  }
  return true;
}

bool CollectiveGroup::run(int rank, const PlannedCollective& collective, uint32_t layer) {
  if (collective.kind == PlannedCollective::Kind::kNone || size() < 2) return true;
  if (m_mirrored && rank != 0) {
    m_error =
        fmt::format("layer {}: rank {} ran a collective of a mirrored group (only rank 0 runs them)", layer, rank);
    return false;
  }
  if (rank == 0) m_collectives.add();
  const sc_core::sc_time entered = sc_core::sc_time_stamp();
  // Each step ends when its last send has arrived: the latest completion over all of them.
  const auto finish = [this](sc_core::sc_time latest) { m_stepEnd = sc_core::sc_time_stamp() + latest; };
  if (collective.kind == PlannedCollective::Kind::kAllToAll) {
    // Each member sends its own bytes to every other member (none to itself), in n - 1 rounds:
    // in round k to the member k places after it, so every link carries one message per round.
    if (collective.sendBytes.size() != static_cast<std::size_t>(size()) && m_error.empty()) {
      m_error = fmt::format("layer {}: all-to-all of rank {} lists {} members' bytes, the group has {}", layer, rank,
                            collective.sendBytes.size(), size());
    }
    m_pending.resize(static_cast<std::size_t>(size()));
    m_pending[static_cast<std::size_t>(rank)] = &collective;  // the issuer reads every member's bytes
    // A mirrored group's members plan alike: rank 0's bytes are every member's.
    if (m_mirrored) std::fill(m_pending.begin(), m_pending.end(), &collective);
    const bool ok = step([&] {
      sc_core::sc_time latest = sc_core::SC_ZERO_TIME;
      for (int k = 1; k < size(); ++k) {
        for (int src = 0; src < size(); ++src) {
          const int dst = (src + k) % size();
          const uint64_t bytes = m_pending[static_cast<std::size_t>(src)]->sendBytes[static_cast<std::size_t>(dst)];
          if (bytes > 0 && !send(src, hw::Send{src, dst, bytes}, layer, latest)) return;
        }
      }
      finish(latest);
    });
    if (rank == 0) m_time.add((sc_core::sc_time_stamp() - entered).to_seconds());
    return ok;
  }
  const Ordered& ordered = schedule(collective);
  for (std::size_t k = 0; k < ordered.issueOrder.size(); ++k) {
    const bool ok = step([&] {
      sc_core::sc_time latest = sc_core::SC_ZERO_TIME;
      if (issueStep(ordered, k, layer, latest)) finish(latest);
    });
    if (!ok) return false;
  }
  if (rank == 0) m_time.add((sc_core::sc_time_stamp() - entered).to_seconds());
  return true;
}

}  // namespace scoville::runtime
