#include "hw/network/GraphFabric.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

namespace {

std::string nodeName(const FabricGraph& g, int node) {
  if (node >= 0 && node < g.chips) return "chip " + std::to_string(node);
  return "switch node " + std::to_string(node);
}

std::string edgeName(int index, const FabricGraph::Edge& e) {
  return "edge " + std::to_string(index) + " (" + std::to_string(e.a) + "-" + std::to_string(e.b) + ")";
}

void checkLink(const std::string& where, const LinkConfig& link) {
  if (!(link.bandwidthBytesPerS > 0.0) || !std::isfinite(link.bandwidthBytesPerS)) {
    throw std::invalid_argument(where + ": link bandwidth must be positive");
  }
  if (!(link.latencyS >= 0.0) || !std::isfinite(link.latencyS)) {
    throw std::invalid_argument(where + ": link latency must be non-negative");
  }
  if (!(link.mtuBytes >= 1.0) || std::floor(link.mtuBytes) != link.mtuBytes) {
    throw std::invalid_argument(where + ": link mtu must be a whole number of bytes >= 1");
  }
  if (!(link.headerBytes >= 0.0) || std::floor(link.headerBytes) != link.headerBytes) {
    throw std::invalid_argument(where + ": link header must be a whole number of bytes >= 0");
  }
}

void checkCount(const char* builder, const char* what, int value, int least) {
  if (value < least) {
    throw std::invalid_argument(std::string(builder) + ": " + what + " must be at least " + std::to_string(least) +
                                ", got " + std::to_string(value));
  }
}

LinkConfig bundle(const LinkConfig& link, int links) {
  LinkConfig aggregated = link;
  aggregated.bandwidthBytesPerS *= links;
  return aggregated;
}

/// Dinic max flow on doubles; arcs are added in pairs (i, i ^ 1).
class MaxFlow {
 public:
  explicit MaxFlow(int nodes) : m_first(static_cast<std::size_t>(nodes)) {}

  /// An edge usable at `capacity` in each direction (a full-duplex link).
  void addUndirected(int a, int b, double capacity) { addPair(a, b, capacity, capacity); }
  void addDirected(int a, int b, double capacity) { addPair(a, b, capacity, 0.0); }

  double run(int source, int sink) {
    double maxCapacity = 0.0;
    for (const Arc& arc : m_arcs) maxCapacity = std::max(maxCapacity, arc.capacity);
    m_epsilon = maxCapacity * 1e-12;
    double flow = 0.0;
    while (levels(source, sink)) {
      m_next.assign(m_first.size(), 0);
      while (true) {
        const double pushed = augment(source, sink, std::numeric_limits<double>::infinity());
        if (pushed <= m_epsilon) break;
        flow += pushed;
      }
    }
    return flow;
  }

 private:
  struct Arc {
    int to = 0;
    double capacity = 0.0;
  };

  void addPair(int a, int b, double forward, double backward) {
    m_first[static_cast<std::size_t>(a)].push_back(static_cast<int>(m_arcs.size()));
    m_arcs.push_back(Arc{b, forward});
    m_first[static_cast<std::size_t>(b)].push_back(static_cast<int>(m_arcs.size()));
    m_arcs.push_back(Arc{a, backward});
  }

  bool levels(int source, int sink) {
    m_level.assign(m_first.size(), -1);
    std::queue<int> frontier;
    m_level[static_cast<std::size_t>(source)] = 0;
    frontier.push(source);
    while (!frontier.empty()) {
      const int node = frontier.front();
      frontier.pop();
      for (int arc : m_first[static_cast<std::size_t>(node)]) {
        const Arc& a = m_arcs[static_cast<std::size_t>(arc)];
        if (a.capacity > m_epsilon && m_level[static_cast<std::size_t>(a.to)] < 0) {
          m_level[static_cast<std::size_t>(a.to)] = m_level[static_cast<std::size_t>(node)] + 1;
          frontier.push(a.to);
        }
      }
    }
    return m_level[static_cast<std::size_t>(sink)] >= 0;
  }

  double augment(int node, int sink, double limit) {
    if (node == sink) return limit;
    auto& arcs = m_first[static_cast<std::size_t>(node)];
    for (std::size_t& i = m_next[static_cast<std::size_t>(node)]; i < arcs.size(); ++i) {
      const int arc = arcs[i];
      Arc& a = m_arcs[static_cast<std::size_t>(arc)];
      if (a.capacity <= m_epsilon ||
          m_level[static_cast<std::size_t>(a.to)] != m_level[static_cast<std::size_t>(node)] + 1) {
        continue;
      }
      const double pushed = augment(a.to, sink, std::min(limit, a.capacity));
      if (pushed > m_epsilon) {
        a.capacity -= pushed;
        m_arcs[static_cast<std::size_t>(arc ^ 1)].capacity += pushed;
        return pushed;
      }
    }
    return 0.0;
  }

  std::vector<std::vector<int>> m_first;  // by node: its arcs
  std::vector<Arc> m_arcs;
  std::vector<int> m_level;
  std::vector<std::size_t> m_next;
  double m_epsilon = 0.0;
};

/// Minimum edge cut between the chips with inA[c] and the others; switches fall on either side.
double cutCapacity(const FabricGraph& g, const std::vector<bool>& inA) {
  const int source = g.nodes();
  const int sink = source + 1;
  double total = 0.0;
  for (const auto& e : g.edges) total += e.link.bandwidthBytesPerS;
  MaxFlow flow(g.nodes() + 2);
  for (const auto& e : g.edges) flow.addUndirected(e.a, e.b, e.link.bandwidthBytesPerS);
  const double unbounded = 2.0 * total + 1.0;
  for (int c = 0; c < g.chips; ++c) {
    if (inA[static_cast<std::size_t>(c)]) {
      flow.addDirected(source, c, unbounded);
    } else {
      flow.addDirected(c, sink, unbounded);
    }
  }
  return flow.run(source, sink);
}

}  // namespace

FabricAdjacency adjacency(const FabricGraph& g) {
  FabricAdjacency adj(static_cast<std::size_t>(g.nodes()));
  for (std::size_t e = 0; e < g.edges.size(); ++e) {
    const int forward = static_cast<int>(2 * e);
    adj[static_cast<std::size_t>(g.edges[e].a)].emplace_back(g.edges[e].b, forward);
    adj[static_cast<std::size_t>(g.edges[e].b)].emplace_back(g.edges[e].a, forward + 1);
  }
  for (auto& neighbours : adj) std::sort(neighbours.begin(), neighbours.end());
  return adj;
}

std::vector<int> hopDistances(const FabricAdjacency& adj, int from) {
  std::vector<int> dist(adj.size(), -1);
  std::queue<int> frontier;
  dist[static_cast<std::size_t>(from)] = 0;
  frontier.push(from);
  while (!frontier.empty()) {
    const int node = frontier.front();
    frontier.pop();
    for (const auto& [next, link] : adj[static_cast<std::size_t>(node)]) {
      (void)link;
      if (dist[static_cast<std::size_t>(next)] < 0) {
        dist[static_cast<std::size_t>(next)] = dist[static_cast<std::size_t>(node)] + 1;
        frontier.push(next);
      }
    }
  }
  return dist;
}

int FabricGraph::nodes() const {
  return chips + static_cast<int>(switchHopLatencyS.size());
}

void FabricGraph::validate() const {
  if (chips < 1) throw std::invalid_argument("fabric graph: needs at least one chip, got " + std::to_string(chips));
  const int n = nodes();
  for (std::size_t s = 0; s < switchHopLatencyS.size(); ++s) {
    if (!(switchHopLatencyS[s] >= 0.0) || !std::isfinite(switchHopLatencyS[s])) {
      throw std::invalid_argument("fabric graph: hop latency of " + nodeName(*this, chips + static_cast<int>(s)) +
                                  " must be non-negative");
    }
  }
  if (!(chipForwardLatencyS >= 0.0) || !std::isfinite(chipForwardLatencyS)) {
    throw std::invalid_argument("fabric graph: chip forward latency must be non-negative");
  }
  std::vector<std::vector<int>> seen(static_cast<std::size_t>(n));  // by lower node: higher nodes, edge index
  std::vector<std::vector<int>> seenEdge(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const Edge& e = edges[i];
    const std::string where = "fabric graph: " + edgeName(static_cast<int>(i), e);
    for (int node : {e.a, e.b}) {
      if (node < 0 || node >= n) {
        throw std::invalid_argument(where + ": node " + std::to_string(node) + " is out of range [0, " +
                                    std::to_string(n) + ") (" + std::to_string(chips) + " chips, " +
                                    std::to_string(switchHopLatencyS.size()) + " switches)");
      }
    }
    if (e.a == e.b) throw std::invalid_argument(where + ": self loop on " + nodeName(*this, e.a));
    const int lo = std::min(e.a, e.b);
    const int hi = std::max(e.a, e.b);
    auto& higher = seen[static_cast<std::size_t>(lo)];
    const auto dup = std::find(higher.begin(), higher.end(), hi);
    if (dup != higher.end()) {
      const int first = seenEdge[static_cast<std::size_t>(lo)][static_cast<std::size_t>(dup - higher.begin())];
      throw std::invalid_argument(where + ": second edge between " + nodeName(*this, lo) + " and " +
                                  nodeName(*this, hi) + " (edge " + std::to_string(first) +
                                  "); aggregate parallel links into one edge");
    }
    higher.push_back(hi);
    seenEdge[static_cast<std::size_t>(lo)].push_back(static_cast<int>(i));
    checkLink(where, e.link);
  }
  const auto adj = adjacency(*this);
  for (int s = chips; s < n; ++s) {
    if (adj[static_cast<std::size_t>(s)].empty()) {
      throw std::invalid_argument("fabric graph: dangling switch: " + nodeName(*this, s) + " has no edge");
    }
  }
  const std::vector<int> dist = hopDistances(adj, 0);
  for (int c = 1; c < chips; ++c) {
    if (dist[static_cast<std::size_t>(c)] < 0) {
      throw std::invalid_argument("fabric graph: chip 0 cannot reach chip " + std::to_string(c) +
                                  " (the graph is disconnected)");
    }
  }
  for (int s = chips; s < n; ++s) {
    if (dist[static_cast<std::size_t>(s)] < 0) {
      throw std::invalid_argument("fabric graph: " + nodeName(*this, s) + " is not connected to any chip");
    }
  }
}

FabricGraph fullMeshGraph(int chips, const LinkConfig& link, int linksPerPair) {
  checkCount("fullMeshGraph", "chips", chips, 2);
  checkCount("fullMeshGraph", "linksPerPair", linksPerPair, 1);
  FabricGraph g;
  g.chips = chips;
  const LinkConfig pair = bundle(link, linksPerPair);
  for (int a = 0; a < chips; ++a) {
    for (int b = a + 1; b < chips; ++b) g.edges.push_back({a, b, pair});
  }
  return g;
}

FabricGraph ringGraph(int chips, const LinkConfig& link, int linksPerNeighbour) {
  checkCount("ringGraph", "chips", chips, 2);
  checkCount("ringGraph", "linksPerNeighbour", linksPerNeighbour, 1);
  return torusGraph({chips}, link, linksPerNeighbour);
}

FabricGraph torusGraph(const std::vector<int>& dims, const LinkConfig& link, int linksPerNeighbour) {
  if (dims.empty()) throw std::invalid_argument("torusGraph: needs at least one dimension");
  checkCount("torusGraph", "linksPerNeighbour", linksPerNeighbour, 1);
  int64_t chips = 1;
  for (int d : dims) {
    checkCount("torusGraph", "every dimension", d, 1);
    chips *= d;
    if (chips > (1 << 24)) throw std::invalid_argument("torusGraph: more than 2^24 chips");
  }
  if (chips < 2) throw std::invalid_argument("torusGraph: needs at least 2 chips");
  std::vector<int64_t> stride(dims.size(), 1);
  for (std::size_t j = dims.size() - 1; j > 0; --j) stride[j - 1] = stride[j] * dims[j];

  FabricGraph g;
  g.chips = static_cast<int>(chips);
  const LinkConfig neighbour = bundle(link, linksPerNeighbour);
  const LinkConfig both = bundle(link, 2 * linksPerNeighbour);
  for (int64_t id = 0; id < chips; ++id) {
    for (std::size_t j = 0; j < dims.size(); ++j) {
      const int size = dims[j];
      const int64_t coord = (id / stride[j]) % size;
      if (size < 2 || (size == 2 && coord == 1)) continue;
      const int64_t next = id + ((coord + 1) % size - coord) * stride[j];
      g.edges.push_back({static_cast<int>(id), static_cast<int>(next), size == 2 ? both : neighbour});
    }
  }
  return g;
}

FabricGraph leafSpineGraph(int chips, int chipsPerLeaf, int spines, const LinkConfig& chipLink, int linksPerChip,
                           const LinkConfig& uplink, int uplinksPerLeafPerSpine, double leafHopS, double spineHopS) {
  checkCount("leafSpineGraph", "chips", chips, 2);
  checkCount("leafSpineGraph", "chipsPerLeaf", chipsPerLeaf, 1);
  checkCount("leafSpineGraph", "spines", spines, 0);
  checkCount("leafSpineGraph", "linksPerChip", linksPerChip, 1);
  const int leaves = (chips + chipsPerLeaf - 1) / chipsPerLeaf;
  if (spines == 0 && leaves > 1) {
    throw std::invalid_argument("leafSpineGraph: " + std::to_string(leaves) +
                                " leaves need at least one spine (spines == 0 only with a single leaf)");
  }
  if (spines > 0) checkCount("leafSpineGraph", "uplinksPerLeafPerSpine", uplinksPerLeafPerSpine, 1);

  FabricGraph g;
  g.chips = chips;
  g.switchHopLatencyS.assign(static_cast<std::size_t>(leaves), leafHopS);
  g.switchHopLatencyS.insert(g.switchHopLatencyS.end(), static_cast<std::size_t>(spines), spineHopS);
  const LinkConfig down = bundle(chipLink, linksPerChip);
  for (int c = 0; c < chips; ++c) g.edges.push_back({c, chips + c / chipsPerLeaf, down});
  if (spines > 0) {
    const LinkConfig up = bundle(uplink, uplinksPerLeafPerSpine);
    for (int l = 0; l < leaves; ++l) {
      for (int s = 0; s < spines; ++s) g.edges.push_back({chips + l, chips + leaves + s, up});
    }
  }
  return g;
}

double bisectionBandwidth(const FabricGraph& g) {
  g.validate();
  const int n = g.chips;
  if (n < 2) return 0.0;
  const int half = n / 2;
  double worst = std::numeric_limits<double>::infinity();
  std::vector<bool> inA(static_cast<std::size_t>(n), false);

  if (n <= kExactBisectionChips) {
    // Every subset of `half` chips (Gosper's hack); for even n, those holding chip 0 suffice, as a
    // split and its mirror have the same cut.
    const uint32_t last = 1u << n;
    for (uint32_t mask = (1u << half) - 1; mask < last;) {
      if (n % 2 == 1 || (mask & 1u) != 0) {
        for (int c = 0; c < n; ++c) inA[static_cast<std::size_t>(c)] = ((mask >> c) & 1u) != 0;
        worst = std::min(worst, cutCapacity(g, inA));
      }
      const uint32_t low = mask & (~mask + 1u);
      const uint32_t ripple = mask + low;
      mask = (((ripple ^ mask) >> 2) / low) | ripple;
    }
    return worst;
  }

  std::vector<int> order(static_cast<std::size_t>(n));
  for (int stride = 1; stride <= n; ++stride) {
    if (n % stride != 0) continue;
    for (int period = 2; static_cast<int64_t>(stride) * period <= n; ++period) {
      if (n % (stride * period) != 0) continue;
      for (int c = 0; c < n; ++c) order[static_cast<std::size_t>(c)] = c;
      std::stable_sort(order.begin(), order.end(),
                       [&](int x, int y) { return (x / stride) % period < (y / stride) % period; });
      std::fill(inA.begin(), inA.end(), false);
      for (int i = 0; i < half; ++i) inA[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = true;
      worst = std::min(worst, cutCapacity(g, inA));
    }
  }
  return worst;
}

FabricRoutes::FabricRoutes(const FabricGraph& graph) : m_chips(graph.chips) {
  graph.validate();
  for (const FabricGraph::Edge& e : graph.edges) {
    m_linkTo.push_back(e.b);
    m_linkTo.push_back(e.a);
  }
  // Shortest paths toward each destination; ECMP picks among equal-cost next hops by flow hash.
  const auto adj = adjacency(graph);
  m_paths.resize(static_cast<std::size_t>(m_chips) * static_cast<std::size_t>(m_chips));
  std::vector<std::pair<int, int>> candidates;
  for (int dst = 0; dst < m_chips; ++dst) {
    const std::vector<int> dist = hopDistances(adj, dst);
    for (int src = 0; src < m_chips; ++src) {
      std::vector<int>& path = m_paths[static_cast<std::size_t>(src) * m_chips + dst];
      const uint64_t hash = static_cast<uint64_t>(src) * 31u + static_cast<uint64_t>(dst);
      for (int node = src; node != dst;) {
        candidates.clear();
        for (const auto& step : adj[static_cast<std::size_t>(node)]) {
          if (dist[static_cast<std::size_t>(step.first)] == dist[static_cast<std::size_t>(node)] - 1) {
            candidates.push_back(step);
          }
        }
        const auto& [next, link] = candidates[hash % candidates.size()];
        path.push_back(link);
        node = next;
      }
    }
  }
}

const std::vector<int>& FabricRoutes::links(int src, int dst) const {
  if (src < 0 || src >= m_chips || dst < 0 || dst >= m_chips) {
    throw std::out_of_range("fabric route " + std::to_string(src) + " -> " + std::to_string(dst) + ": chips are [0, " +
                            std::to_string(m_chips) + ")");
  }
  return m_paths[static_cast<std::size_t>(src) * m_chips + dst];
}

std::vector<int> FabricRoutes::pathNodes(int src, int dst) const {
  const std::vector<int>& path = links(src, dst);
  std::vector<int> nodes{src};
  for (int link : path) nodes.push_back(m_linkTo[static_cast<std::size_t>(link)]);
  return nodes;
}

GraphFabric::GraphFabric(const sc_core::sc_module_name& name, FabricGraph graph)
    : sc_core::sc_module(name),
      socket("socket"),
      m_graph(std::move(graph)),
      m_routes(m_graph),
      m_stats("fabric", "graph-routed inter-chip fabric (direct mesh, ring, torus, leaf/spine)"),
      m_messages(m_stats.counter("messages", "", "messages delivered")),
      m_bytes(m_stats.counter("bytes", "B", "payload bytes delivered")),
      m_wireBytes(
          m_stats.counter("wire_bytes", "B", "wire bytes delivered (first hop's framing), counted once per message")),
      m_packets(m_stats.counter("packets", "", "packets delivered")),
      m_hops(m_stats.counter("hops", "", "link hops crossed by all messages (summed)")),
      m_queueTime(m_stats.counter("queue_time", "s", "time message heads waited for busy links (summed over hops)")) {
  socket.register_b_transport(this, &GraphFabric::bTransport);
  m_stats.formula("mean_hops", "", "link hops per message",
                  [this] { return m_messages.value() > 0 ? m_hops.value() / m_messages.value() : 0.0; });
  m_stats.formula("mean_queue_time", "s", "queueing time per message",
                  [this] { return m_messages.value() > 0 ? m_queueTime.value() / m_messages.value() : 0.0; });

  const int nodes = m_graph.nodes();
  m_forwarding.reserve(static_cast<std::size_t>(nodes));
  for (int node = 0; node < nodes; ++node) {
    m_forwarding.push_back(
        tlm::durationCeil(isSwitch(node) ? m_graph.switchHopLatencyS[static_cast<std::size_t>(node - m_graph.chips)]
                                         : m_graph.chipForwardLatencyS));
  }
  for (const FabricGraph::Edge& e : m_graph.edges) {
    for (const auto& [from, to] : {std::pair{e.a, e.b}, std::pair{e.b, e.a}}) {
      m_links.push_back(DirectedLink{from, to, &e.link, tlm::durationCeil(e.link.latencyS)});
      const std::string prefix = "link_" + std::to_string(from) + "_" + std::to_string(to);
      m_directions.emplace_back(m_stats, prefix, "from " + nodeName(m_graph, from) + " to " + nodeName(m_graph, to));
    }
  }
}

void GraphFabric::bTransport(int /*input*/, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  const int chips = m_graph.chips;
  // A mirrored group's rotation is served by hw::Switch only (CollectiveGroup::setMirrored).
  if (op.kind != tlm::OpKind::kSend || op.rotation != nullptr || op.srcChip < 0 || op.srcChip >= chips ||
      op.bytes == 0) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (op.dstChip < 0 || op.dstChip >= chips) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (op.srcChip == op.dstChip) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const std::vector<int>& path = m_routes.links(op.srcChip, op.dstChip);

  // Each hop carries the message in its own link's framing (MTU and header), so a hop with
  // smaller packets or larger headers serialises more wire bytes. Totals count the injected bytes.
  const LinkConfig& first = *m_links[static_cast<std::size_t>(path.front())].config;
  const uint64_t injectedPackets = first.packetsFor(op.bytes);
  const uint64_t injectedWire = first.wireBytesFor(op.bytes);

  sc_core::sc_time head = sc_core::sc_time_stamp() + delay;  // header ready to enter the hop's link
  sc_core::sc_time previousEnd = sc_core::SC_ZERO_TIME;      // last byte left the previous hop's node
  sc_core::sc_time previousLatency = sc_core::SC_ZERO_TIME;
  for (std::size_t h = 0; h < path.size(); ++h) {
    const auto id = static_cast<std::size_t>(path[h]);
    const DirectedLink& link = m_links[id];
    LinkDirection& direction = m_directions[id];
    const uint64_t packets = link.config->packetsFor(op.bytes);
    const uint64_t wire = link.config->wireBytesFor(op.bytes);
    const double serialS = static_cast<double>(wire) / link.config->bandwidthBytesPerS;
    const sc_core::sc_time start = std::max(head, direction.busyUntil());
    sc_core::sc_time end = start + tlm::durationCeil(serialS);
    if (h > 0) {
      end = std::max(end, previousEnd + previousLatency + m_forwarding[static_cast<std::size_t>(link.from)]);
    }
    direction.occupy(head, start, end, op.bytes, wire, packets, serialS);
    m_queueTime.add((start - head).to_seconds());
    // Each chip end of the link moves the bytes through its port; a switch end is the switch's.
    if (!isSwitch(link.from))
      m_activity.emit(tlm::Activity::kLinkBytes, static_cast<double>(wire), op, start, end, link.from);
    if (!isSwitch(link.to))
      m_activity.emit(tlm::Activity::kLinkBytes, static_cast<double>(wire), op, start, end, link.to);
    if (isSwitch(link.from)) {
      m_activity.emit(tlm::Activity::kSwitchBytes, static_cast<double>(wire), op, start, end);
      m_activity.emit(tlm::Activity::kSwitchPackets, static_cast<double>(packets), op, start, end);
    }
    if (h + 1 < path.size()) head = start + link.latency + m_forwarding[static_cast<std::size_t>(link.to)];
    previousEnd = end;
    previousLatency = link.latency;
  }
  const sc_core::sc_time lastByteIn = previousEnd + previousLatency;

  m_messages.add();
  m_bytes.add(static_cast<double>(op.bytes));
  m_wireBytes.add(static_cast<double>(injectedWire));
  m_packets.add(static_cast<double>(injectedPackets));
  m_hops.add(static_cast<double>(path.size()));

  delay = lastByteIn - sc_core::sc_time_stamp();
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
}

}  // namespace scoville::hw
