// sc_spawn (one issuing thread per chip) needs dynamic processes, declared before <systemc>.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "hw/network/Collective.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "tlm/OpExtension.h"
#include "tlm/PayloadBuilder.h"

namespace scoville::hw {

using namespace scoville::config;

const char* collectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllToAll: return "all_to_all";
  }
  return "?";
}

const char* collectiveAlgorithmName(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return "ring";
    case CollectiveAlgorithm::kDirect: return "direct";
    case CollectiveAlgorithm::kTree: return "tree";
    case CollectiveAlgorithm::kAuto: return "auto";
  }
  return "?";
}

namespace {

using Step = std::vector<Send>;

int mod(int a, int n) {
  return ((a % n) + n) % n;
}

class Expander {
 public:
  Expander(int chips, uint64_t bytes) : m_n(chips), m_bytes(bytes) { m_schedule.chips = chips; }

  /// Size of chunk c when the buffer is cut into `chips` chunks.
  uint64_t chunk(int c) const {
    const auto n = static_cast<uint64_t>(m_n);
    return m_bytes / n + (static_cast<uint64_t>(c) < m_bytes % n ? 1 : 0);
  }

  /// N-1 steps around the ring; at step k chip i sends chunk (i + offset - k) to chip i + 1.
  void ring(int offset) {
    for (int k = 0; k < m_n - 1; ++k) {
      Step step;
      for (int i = 0; i < m_n; ++i) step.push_back(Send{i, mod(i + 1, m_n), chunk(mod(i + offset - k, m_n))});
      m_schedule.steps.push_back(std::move(step));
    }
  }

  /// One step; chip i sends bytesFor(i, dst) to every peer, peers in rotated order (i+1, i+2, ...)
  /// so that at each position of the issue order the destinations form a permutation.
  template <class F>
  void direct(F bytesFor) {
    Step step;
    for (int k = 1; k < m_n; ++k) {
      for (int i = 0; i < m_n; ++i) step.push_back(Send{i, mod(i + k, m_n), bytesFor(i, mod(i + k, m_n))});
    }
    m_schedule.steps.push_back(std::move(step));
  }

  /// Heap-ordered binary tree (parent of i is (i-1)/2): reduce level by level toward chip 0, then
  /// broadcast level by level back down.
  void tree() {
    const int depth = static_cast<int>(std::floor(std::log2(static_cast<double>(m_n))));
    auto level = [](int i) { return static_cast<int>(std::floor(std::log2(static_cast<double>(i + 1)))); };
    for (int d = depth; d >= 1; --d) {
      Step step;
      for (int i = 1; i < m_n; ++i) {
        if (level(i) == d) step.push_back(Send{i, (i - 1) / 2, m_bytes});
      }
      m_schedule.steps.push_back(std::move(step));
    }
    for (int d = 1; d <= depth; ++d) {
      Step step;
      for (int i = 1; i < m_n; ++i) {
        if (level(i) == d) step.push_back(Send{(i - 1) / 2, i, m_bytes});
      }
      m_schedule.steps.push_back(std::move(step));
    }
  }

  Schedule take() { return std::move(m_schedule); }

 private:
  int m_n;
  uint64_t m_bytes;
  Schedule m_schedule;
};

[[noreturn]] void unsupported(CollectiveKind kind, CollectiveAlgorithm algorithm, const char* supported) {
  throw std::invalid_argument(std::string("collective ") + collectiveKindName(kind) + " does not support algorithm " +
                              collectiveAlgorithmName(algorithm) + " (supported: " + supported + ")");
}

}  // namespace

Schedule expandCollective(CollectiveKind kind, CollectiveAlgorithm algorithm, int chips, uint64_t bytesPerChip) {
  if (chips < 1) throw std::invalid_argument("a collective needs at least one chip, got " + std::to_string(chips));
  if (bytesPerChip < static_cast<uint64_t>(chips)) {
    throw std::invalid_argument("a collective over " + std::to_string(chips) +
                                " chips needs at least that many bytes "
                                "per chip, got " +
                                std::to_string(bytesPerChip));
  }
  if (algorithm == CollectiveAlgorithm::kAuto) unsupported(kind, algorithm, "ring, direct, tree: resolve auto first");
  Expander x(chips, bytesPerChip);
  if (chips == 1) return x.take();
  switch (kind) {
    case CollectiveKind::kAllReduce:
      if (algorithm == CollectiveAlgorithm::kRing) {
        x.ring(0);  // reduce-scatter: chip i ends with the sum of chunk i + 1
        x.ring(1);  // all-gather of the reduced chunks
      } else if (algorithm == CollectiveAlgorithm::kDirect) {
        x.direct([&](int, int) { return bytesPerChip; });
      } else {
        x.tree();
      }
      break;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      if (algorithm == CollectiveAlgorithm::kTree) unsupported(kind, algorithm, "ring, direct");
      if (algorithm == CollectiveAlgorithm::kRing) {
        x.ring(0);
      } else if (kind == CollectiveKind::kAllGather) {
        x.direct([&](int src, int) { return x.chunk(src); });  // my chunk to everyone
      } else {
        x.direct([&](int, int dst) { return x.chunk(dst); });  // chunk j to its owner j
      }
      break;
    case CollectiveKind::kAllToAll:
      if (algorithm != CollectiveAlgorithm::kDirect) unsupported(kind, algorithm, "direct");
      x.direct([&](int, int dst) { return x.chunk(dst); });
      break;
  }
  return x.take();
}

Schedule CollectiveConfig::expand(int chips) const {
  return expandCollective(kind, algorithm, chips, static_cast<uint64_t>(bytesPerChip));
}

const Schema<CollectiveConfig>& CollectiveConfig::schema() {
  static const Schema<CollectiveConfig> s =
      Schema<CollectiveConfig>("collective", "A collective operation played over the inter-chip fabric.")
          .choice("op", &CollectiveConfig::kind,
                  {{"all_reduce", CollectiveKind::kAllReduce},
                   {"all_gather", CollectiveKind::kAllGather},
                   {"reduce_scatter", CollectiveKind::kReduceScatter},
                   {"all_to_all", CollectiveKind::kAllToAll}},
                  required(), "the collective")
          .choice("algorithm", &CollectiveConfig::algorithm,
                  {{"ring", CollectiveAlgorithm::kRing},
                   {"direct", CollectiveAlgorithm::kDirect},
                   {"tree", CollectiveAlgorithm::kTree}},
                  required(),
                  "ring (all but all_to_all), direct (one shot, every collective), tree (binary tree, "
                  "all_reduce only)")
          .quantity("bytes_per_chip", &CollectiveConfig::bytesPerChip, dim::kBytes, required(), positive(),
                    "full buffer per chip (all_gather: the gathered output; reduce_scatter: the input)")
          .rule("bytes_per_chip", "bytes_per_chip must be a whole number of bytes",
                [](const CollectiveConfig& c) { return std::floor(c.bytesPerChip) == c.bytesPerChip; })
          .rule("algorithm", "all_to_all supports only direct; tree supports only all_reduce",
                [](const CollectiveConfig& c) {
                  if (c.kind == CollectiveKind::kAllToAll) return c.algorithm == CollectiveAlgorithm::kDirect;
                  return c.algorithm != CollectiveAlgorithm::kTree || c.kind == CollectiveKind::kAllReduce;
                });
  return s;
}

CollectiveEngine::CollectiveEngine(const sc_core::sc_module_name& name, Schedule schedule)
    : sc_core::sc_module(name),
      sockets("socket", static_cast<std::size_t>(schedule.chips)),
      m_schedule(std::move(schedule)),
      m_stats("collective", "collective engine"),
      m_sends(m_stats.counter("sends", "", "point-to-point sends completed")),
      m_bytes(m_stats.counter("bytes", "B", "payload bytes sent")) {
  m_stats.formula("collective_time", "s", "start to end of the last finished step",
                  [this] { return totalTime().to_seconds(); });
  const auto chips = static_cast<std::size_t>(m_schedule.chips);
  m_sendsOf.assign(m_schedule.steps.size(), std::vector<std::vector<Send>>(chips));
  for (std::size_t s = 0; s < m_schedule.steps.size(); ++s) {
    for (const Send& send : m_schedule.steps[s]) {
      if (send.src < 0 || send.src >= m_schedule.chips) {
        throw std::invalid_argument(std::string(this->name()) + ": send from chip " + std::to_string(send.src) +
                                    " outside the schedule's " + std::to_string(m_schedule.chips) + " chips");
      }
      m_sendsOf[s][static_cast<std::size_t>(send.src)].push_back(send);
    }
  }
  for (int c = 0; c < m_schedule.chips; ++c) {
    sc_core::sc_spawn([this, c] { runChip(c); }, (std::string("issue") + std::to_string(c)).c_str());
  }
}

void CollectiveEngine::runChip(int chip) {
  for (const auto& step : m_sendsOf) {
    // Sends leave at the step's start, one per delta cycle, so that the chips' issue orders
    // interleave: in LT the call order is the first-come order at shared ports.
    sc_core::sc_time latest = sc_core::SC_ZERO_TIME;
    bool first = true;
    for (const Send& send : step[static_cast<std::size_t>(chip)]) {
      if (!first) wait(sc_core::SC_ZERO_TIME);
      first = false;
      tlm::PayloadRef payload(tlm::PayloadBuilder(tlm::OpKind::kSend)
                                  .bytes(send.bytes)
                                  .chips(send.src, send.dst)
                                  .phase(tlm::LlmPhase::kCommunication)
                                  .build(m_pool));
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      sockets[static_cast<std::size_t>(chip)]->b_transport(*payload, delay);
      if (payload->get_response_status() != ::tlm::TLM_OK_RESPONSE) {
        SC_REPORT_ERROR("scoville/collective", (std::string(name()) + ": send " + std::to_string(send.src) + " -> " +
                                                std::to_string(send.dst) + " failed: " + payload->get_response_string())
                                                   .c_str());
        return;
      }
      latest = std::max(latest, delay);
      m_sends.add();
      m_bytes.add(static_cast<double>(send.bytes));
    }
    wait(latest);
    barrier();
  }
}

void CollectiveEngine::barrier() {
  if (++m_arrived == m_schedule.chips) {
    m_arrived = 0;
    m_stepEnds.push_back(sc_core::sc_time_stamp());
    m_stepDone.notify(sc_core::SC_ZERO_TIME);
  }
  wait(m_stepDone);
}

}  // namespace scoville::hw
