#pragma once
// A graph-routed inter-chip fabric: a direct full mesh, a ring, a torus, a leaf/spine, or any
// connected graph of chips and switches joined by full-duplex links. Where Switch models one
// switch stage, GraphFabric routes each message over a path of H link hops through forwarding
// chips and switches.
//
// Routing: static shortest paths with ECMP by flow hash (see FabricRoutes).
//
// Timing model (LT, computed per message from busy-until times per directed link; no event per
// packet): Switch's cut-through, output-queued model generalised to H hops. A message of P
// payload bytes is carried on each hop in that hop's framing: W_h wire bytes (packetsFor,
// wireBytesFor of the hop's link). With a = the message's arrival and, for hop h over link l_h
// out of node n_h:
//   head_0  = a
//   start_h = max(head_h, busyUntil(l_h))                       the link sends one message at a time
//   end_h   = start_h + W_h / bw_h                               for h = 0
//   end_h   = max(start_h + W_h / bw_h, end_{h-1} + lat_{h-1} + node(n_h)) for h > 0 (cut-through:
//             a hop cannot finish before its last byte has arrived and been forwarded)
//   busyUntil(l_h) = end_h,  head_{h+1} = start_h + lat_h + node(n_{h+1})
// where node(n) is the switch hop latency of a switch node and chipForwardLatencyS of a chip that
// forwards. The last byte reaches the destination at end_{H-1} + lat_{H-1}: the annotated
// completion time. Buffers are unbounded (no credit loop): a busy link delays the message's head,
// never its upstream links. Every duration is rounded up to the kernel resolution
// (tlm::durationCeil), so simulated time never beats the physical bound.

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <deque>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "hw/network/NetworkConfig.h"
#include "hw/network/SwitchPort.h"
#include "stats/StatsGroup.h"
#include "tlm/ActivityBus.h"

namespace scoville::hw {

/// The fabric's topology. Nodes [0, chips) are chips, nodes [chips, chips + switchHopLatencyS.size())
/// are switches.
struct FabricGraph {
  int chips = 0;
  std::vector<double> switchHopLatencyS;  ///< one entry per switch node: header in -> header out
  double chipForwardLatencyS = 0.0;       ///< a chip that forwards a message (ring/torus) adds this per pass
  /// One full-duplex link (or bundle of parallel links aggregated into one) between nodes a and b;
  /// both directions are identical and independent.
  struct Edge {
    int a = 0;
    int b = 0;
    LinkConfig link;
  };
  std::vector<Edge> edges;

  /// Chips plus switches.
  int nodes() const;
  /// Throws std::invalid_argument naming the problem: no chips, a node id out of range, a self
  /// loop, a second edge between the same two nodes (aggregate parallel links into one edge), a
  /// link with a non-positive bandwidth or invalid framing, a negative latency, a switch with no
  /// edge ("dangling switch") or cut off from the chips, a chip that cannot reach every other chip
  /// (naming both chips).
  void validate() const;
};

/// Neighbours of every node of a graph as (neighbour, directed link id: 2e from edge e's a to b,
/// 2e+1 back), sorted by neighbour id.
using FabricAdjacency = std::vector<std::vector<std::pair<int, int>>>;
FabricAdjacency adjacency(const FabricGraph& graph);

/// Hops from node `from` to every node (-1 where unreachable), by breadth-first search: the
/// distances FabricRoutes' shortest paths follow.
std::vector<int> hopDistances(const FabricAdjacency& adj, int from);

/// Direct all-to-all: one edge per chip pair carrying `linksPerPair` parallel links (bandwidth
/// linksPerPair x link's, latency and framing the link's). chips >= 2; N(N-1)/2 edges, in order
/// (0,1), (0,2), ..., (N-2,N-1).
FabricGraph fullMeshGraph(int chips, const LinkConfig& link, int linksPerPair);

/// Bidirectional ring: edge (i, i+1 mod N) of `linksPerNeighbour` links for each chip i, N edges.
/// chips >= 2; with two chips both neighbour bundles join the same pair, so the ring is a single
/// edge of 2 x linksPerNeighbour links.
FabricGraph ringGraph(int chips, const LinkConfig& link, int linksPerNeighbour);

/// Torus of dims[0] x dims[1] x ..., chip id = row-major index (the last dimension varies
/// fastest), with wrap-around in each dimension: each chip has an edge of `linksPerNeighbour`
/// links to its +1 neighbour in every dimension of size >= 3. A dimension of size 2 gets one edge
/// per chip pair carrying both the +1 and the wrap-around bundle (2 x linksPerNeighbour links, as
/// ringGraph(2)); a dimension of size 1 adds nothing. Every dimension >= 1, at least 2 chips.
FabricGraph torusGraph(const std::vector<int>& dims, const LinkConfig& link, int linksPerNeighbour);

/// Two-tier Clos. Leaves = ceil(chips / chipsPerLeaf); chip c attaches to leaf c / chipsPerLeaf
/// with `linksPerChip` chip links; every leaf connects to every spine with
/// `uplinksPerLeafPerSpine` uplinks. Nodes: chips, then leaves (hop latency leafHopS), then spines
/// (spineHopS). Edges: one per chip, then leaf x spine in leaf-major order. spines == 0 is allowed
/// only with a single leaf.
FabricGraph leafSpineGraph(int chips, int chipsPerLeaf, int spines, const LinkConfig& chipLink, int linksPerChip,
                           const LinkConfig& uplink, int uplinksPerLeafPerSpine, double leafHopS, double spineHopS);

/// Chips up to which bisectionBandwidth tries every balanced split.
inline constexpr int kExactBisectionChips = 16;

/// Bisection bandwidth in bytes/s per direction: the capacity of the worst balanced cut of the
/// chips into halves of floor(N/2) and ceil(N/2) chips.
///
/// Method. Switches may fall on either side of a cut, so the capacity of one split of the chips is
/// the minimum edge cut between its halves (max flow from one half to the other, each edge counted
/// at its per-direction bandwidth). Up to kExactBisectionChips chips every balanced split is tried:
/// exact for any graph. Above that, the minimum is taken over structured candidate splits: for
/// every stride s and period p >= 2 with s * p dividing N, the chips are ordered by
/// ((id / s) mod p, id) and the first floor(N/2) form one half. These include the worst cut of
/// every builder above: any half of a full mesh (floor(N/2) x ceil(N/2) pair bundles); a contiguous
/// half of a ring (2 edges); the cut across the largest dimension d of a torus (2N/d link bundles;
/// the known minimum when that dimension is even); the first half of the chips of a leaf/spine,
/// whose capacity is min(that half's chip links, its leaves' uplinks). For other large graphs the
/// result is an upper bound on the true bisection. Throws std::invalid_argument if `g` is invalid.
double bisectionBandwidth(const FabricGraph& g);

/// Static routes between every chip pair of a graph: the shortest path in hops (BFS from the
/// destination). Where several next hops lie on a shortest path, they are sorted by node id and
/// the one at index (src * 31 + dst) mod count is taken, at every node along the way: ECMP by flow
/// hash, so a pair always takes the same path and different pairs spread over equal-cost links.
/// Chips may forward (ring, torus); nothing forbids a path through a chip in a mixed graph.
/// Directed link ids: 2e runs edges[e].a -> edges[e].b, 2e + 1 runs edges[e].b -> edges[e].a.
class FabricRoutes {
 public:
  /// Validates `graph` (std::invalid_argument, see FabricGraph::validate) and computes the route of
  /// every ordered chip pair.
  explicit FabricRoutes(const FabricGraph& graph);

  int chips() const { return m_chips; }
  /// Directed link ids from chip `src` to chip `dst`, in order (empty when src == dst). Throws
  /// std::out_of_range for a chip outside [0, chips).
  const std::vector<int>& links(int src, int dst) const;
  /// The nodes the route visits, both ends included ({src} when src == dst).
  std::vector<int> pathNodes(int src, int dst) const;
  /// Links the route crosses.
  int hops(int src, int dst) const { return static_cast<int>(links(src, dst).size()); }

 private:
  int m_chips = 0;
  std::vector<int> m_linkTo;              // by directed link id: the node it reaches
  std::vector<std::vector<int>> m_paths;  // by src * chips + dst
};

class GraphFabric : public sc_core::sc_module {
 public:
  /// Any number of initiators bind; a payload is routed by its OpExtension's srcChip and dstChip,
  /// not by the binding it arrived on. Accepted: kSend with srcChip in [0, chips), dstChip in
  /// [0, chips), srcChip != dstChip and bytes > 0; the annotated delay returned is the arrival of
  /// the message's last byte at dstChip. A dstChip outside [0, chips) is answered
  /// TLM_ADDRESS_ERROR_RESPONSE; anything else not accepted TLM_COMMAND_ERROR_RESPONSE. Rejected
  /// payloads leave the delay unchanged.
  tlm_utils::multi_passthrough_target_socket<GraphFabric> socket;

  /// Validates `graph` (std::invalid_argument, see FabricGraph::validate) and precomputes every
  /// chip pair's route (FabricRoutes).
  GraphFabric(const sc_core::sc_module_name& name, FabricGraph graph);
  GraphFabric(const GraphFabric&) = delete;
  GraphFabric& operator=(const GraphFabric&) = delete;

  const FabricGraph& graph() const { return m_graph; }
  const FabricRoutes& routes() const { return m_routes; }
  /// The nodes a message from chip `src` to chip `dst` visits, both ends included ({src} when
  /// src == dst). Throws std::out_of_range for a chip outside [0, chips).
  std::vector<int> pathNodes(int src, int dst) const { return m_routes.pathNodes(src, dst); }
  /// Links a message from `src` to `dst` crosses (0 when src == dst). Throws std::out_of_range for
  /// a chip outside [0, chips).
  int hops(int src, int dst) const { return m_routes.hops(src, dst); }

  /// Sends this fabric's activity to `bus`: kLinkBytes (wire bytes) for every hop at that hop's
  /// end, kSwitchBytes and kSwitchPackets for every hop that leaves a switch.
  void attachActivity(const tlm::ActivityBus& bus) { m_activity.attach(bus, name()); }
  /// Group "fabric": totals, and per directed link "link_<from>_<to>_<stat>" (node ids).
  const stats::Group& stats() const { return m_stats; }

 private:
  /// One direction of an edge, by FabricRoutes' directed link id.
  struct DirectedLink {
    int from = 0;
    int to = 0;
    const LinkConfig* config = nullptr;
    sc_core::sc_time latency;
  };

  void bTransport(int input, ::tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  bool isSwitch(int node) const { return node >= m_graph.chips; }

  FabricGraph m_graph;
  FabricRoutes m_routes;
  std::vector<DirectedLink> m_links;           // by directed link id
  std::vector<sc_core::sc_time> m_forwarding;  // by node: latency added when a message passes through it

  tlm::ActivitySource m_activity;
  stats::Group m_stats;
  stats::Counter& m_messages;
  stats::Counter& m_bytes;
  stats::Counter& m_wireBytes;
  stats::Counter& m_packets;
  stats::Counter& m_hops;
  stats::Counter& m_queueTime;
  std::deque<LinkDirection> m_directions;  // by directed link id: busy-until and counters
};

}  // namespace scoville::hw
