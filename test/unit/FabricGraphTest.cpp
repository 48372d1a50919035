// Graph-routed inter-chip fabric as plain logic: builders, validation, routing and bisection
// (test/integration/FabricScenarioTest.cpp times messages through the SystemC module).
// Link used throughout: 100 GB/s per direction, 250 ns, 4096 B MTU, 64 B header.
#include <gtest/gtest.h>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/network/GraphFabric.h"
#include "test/support/NetworkFixtures.h"

namespace scoville::hw {
namespace {

using test::expectInvalidArgument;
using test::NetworkActivityTotals;

constexpr double kBandwidth = 100e9;  // test::testLink()'s rate and latency
constexpr double kLatency = 250e-9;
constexpr double kLeafHop = 100e-9;   // leaf switch
constexpr double kSpineHop = 200e-9;  // spine switch

// ---------------------------------------------------------------------------------------------
// Builders and validation

TEST(FabricGraph, FullMeshHasOneBundlePerPair) {
  const FabricGraph g = fullMeshGraph(8, test::testLink(), 2);
  EXPECT_EQ(g.chips, 8);
  EXPECT_EQ(g.nodes(), 8);
  ASSERT_EQ(g.edges.size(), 28u);  // 8 x 7 / 2
  for (const auto& e : g.edges) {
    EXPECT_LT(e.a, e.b);
    EXPECT_DOUBLE_EQ(e.link.bandwidthBytesPerS, 2 * kBandwidth);  // two parallel links aggregated
    EXPECT_DOUBLE_EQ(e.link.latencyS, kLatency);
  }
  EXPECT_EQ(g.edges.front().a, 0);
  EXPECT_EQ(g.edges.front().b, 1);
  EXPECT_EQ(g.edges.back().a, 6);
  EXPECT_EQ(g.edges.back().b, 7);
  EXPECT_NO_THROW(g.validate());
}

TEST(FabricGraph, RingHasOneEdgePerChipAndTwoChipsShareOne) {
  const FabricGraph ring = ringGraph(8, test::testLink(), 1);
  ASSERT_EQ(ring.edges.size(), 8u);
  EXPECT_EQ(ring.edges.back().a, 7);  // the closing edge 7 - 0
  EXPECT_EQ(ring.edges.back().b, 0);
  EXPECT_NO_THROW(ring.validate());
  const FabricGraph pair = ringGraph(2, test::testLink(), 3);
  ASSERT_EQ(pair.edges.size(), 1u);  // both neighbour bundles join the same pair: 2 x 3 links
  EXPECT_DOUBLE_EQ(pair.edges[0].link.bandwidthBytesPerS, 6 * kBandwidth);
}

TEST(FabricGraph, TorusWrapsEveryDimension) {
  // 4 x 4: two dimensions of size 4, one +1 edge per chip per dimension: 2 x 16 = 32.
  const FabricGraph t44 = torusGraph({4, 4}, test::testLink(), 1);
  EXPECT_EQ(t44.chips, 16);
  EXPECT_EQ(t44.edges.size(), 32u);
  EXPECT_NO_THROW(t44.validate());
  // Row-major ids: chip 0 = (0,0) links to (0,1) = 1 and (1,0) = 4; chip 3 = (0,3) wraps to 0.
  EXPECT_EQ(t44.edges[0].b, 4);
  EXPECT_EQ(t44.edges[1].b, 1);
  EXPECT_EQ(t44.edges[7].a, 3);
  EXPECT_EQ(t44.edges[7].b, 0);
  // 4 x 2: size-4 dimension 8 edges, size-2 dimension one double edge per pair: 4.
  const FabricGraph t42 = torusGraph({4, 2}, test::testLink(), 1);
  EXPECT_EQ(t42.edges.size(), 12u);
  int doubled = 0;
  for (const auto& e : t42.edges) doubled += e.link.bandwidthBytesPerS == 2 * kBandwidth ? 1 : 0;
  EXPECT_EQ(doubled, 4);
  // 3 x 1 x 3: the size-1 dimension adds nothing: 9 + 9.
  EXPECT_EQ(torusGraph({3, 1, 3}, test::testLink(), 1).edges.size(), 18u);
  // 2 x 2 x 2: 4 double edges per dimension.
  EXPECT_EQ(torusGraph({2, 2, 2}, test::testLink(), 1).edges.size(), 12u);
  // A one-dimensional torus is a ring.
  const FabricGraph ring = ringGraph(5, test::testLink(), 2);
  const FabricGraph t5 = torusGraph({5}, test::testLink(), 2);
  ASSERT_EQ(ring.edges.size(), t5.edges.size());
  for (std::size_t i = 0; i < ring.edges.size(); ++i) {
    EXPECT_EQ(ring.edges[i].a, t5.edges[i].a);
    EXPECT_EQ(ring.edges[i].b, t5.edges[i].b);
  }
}

TEST(FabricGraph, LeafSpineConnectsEveryLeafToEverySpine) {
  // 16 chips, 4 per leaf: 4 leaves (nodes 16..19), 2 spines (20, 21); 16 chip edges + 4 x 2 uplinks.
  const FabricGraph g = leafSpineGraph(16, 4, 2, test::testLink(), 2, test::testLink(), 3, kLeafHop, kSpineHop);
  EXPECT_EQ(g.nodes(), 22);
  ASSERT_EQ(g.switchHopLatencyS.size(), 6u);
  EXPECT_DOUBLE_EQ(g.switchHopLatencyS[3], kLeafHop);
  EXPECT_DOUBLE_EQ(g.switchHopLatencyS[4], kSpineHop);
  ASSERT_EQ(g.edges.size(), 24u);
  EXPECT_EQ(g.edges[5].a, 5);
  EXPECT_EQ(g.edges[5].b, 17);
  EXPECT_DOUBLE_EQ(g.edges[5].link.bandwidthBytesPerS, 2 * kBandwidth);
  EXPECT_EQ(g.edges[16].a, 16);
  EXPECT_EQ(g.edges[16].b, 20);
  EXPECT_DOUBLE_EQ(g.edges[16].link.bandwidthBytesPerS, 3 * kBandwidth);
  EXPECT_NO_THROW(g.validate());
  // 10 chips, 4 per leaf: ceil(10 / 4) = 3 leaves (the last holds 2), 3 spines: 10 + 9 edges.
  const FabricGraph partial = leafSpineGraph(10, 4, 3, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop);
  EXPECT_EQ(partial.nodes(), 16);
  EXPECT_EQ(partial.edges.size(), 19u);
  EXPECT_EQ(partial.edges[9].b, 12);  // chip 9 on leaf 2 = node 10 + 2
  // A single leaf needs no spine.
  const FabricGraph single = leafSpineGraph(8, 8, 0, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop);
  EXPECT_EQ(single.edges.size(), 8u);
  EXPECT_NO_THROW(single.validate());
}

TEST(FabricGraph, BuildersRejectImpossibleShapes) {
  expectInvalidArgument([] { ringGraph(1, test::testLink(), 1); }, {"ringGraph", "chips"});
  expectInvalidArgument([] { fullMeshGraph(4, test::testLink(), 0); }, {"fullMeshGraph", "linksPerPair"});
  expectInvalidArgument([] { torusGraph({4, 0}, test::testLink(), 1); }, {"torusGraph", "dimension"});
  expectInvalidArgument([] { torusGraph({1, 1}, test::testLink(), 1); }, {"torusGraph", "2 chips"});
  expectInvalidArgument([] { leafSpineGraph(16, 4, 0, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop); },
                        {"leafSpineGraph", "4 leaves", "spine"});
}

TEST(FabricGraph, ValidateNamesTheProblem) {
  FabricGraph split;  // chips {0, 1} and {2, 3} never meet
  split.chips = 4;
  split.edges = {{0, 1, test::testLink()}, {2, 3, test::testLink()}};
  expectInvalidArgument([&] { split.validate(); }, {"chip 0 cannot reach chip 2"});

  FabricGraph dangling;  // switch node 2 has no edge
  dangling.chips = 2;
  dangling.switchHopLatencyS = {kLeafHop};
  dangling.edges = {{0, 1, test::testLink()}};
  expectInvalidArgument([&] { dangling.validate(); }, {"dangling switch", "node 2"});

  FabricGraph loop = fullMeshGraph(3, test::testLink(), 1);
  loop.edges.push_back({1, 1, test::testLink()});
  expectInvalidArgument([&] { loop.validate(); }, {"edge 3", "self loop", "chip 1"});

  FabricGraph outside = fullMeshGraph(3, test::testLink(), 1);
  outside.edges.push_back({0, 5, test::testLink()});
  expectInvalidArgument([&] { outside.validate(); }, {"edge 3", "node 5", "out of range [0, 3)"});
  FabricGraph negative = fullMeshGraph(3, test::testLink(), 1);
  negative.edges[1].a = -1;
  expectInvalidArgument([&] { negative.validate(); }, {"edge 1", "node -1", "out of range"});

  FabricGraph twice = fullMeshGraph(3, test::testLink(), 1);
  twice.edges.push_back({2, 0, test::testLink()});
  expectInvalidArgument([&] { twice.validate(); }, {"edge 3", "chip 0", "chip 2", "edge 1"});

  FabricGraph stalled = fullMeshGraph(3, test::testLink(), 1);
  stalled.edges[2].link.bandwidthBytesPerS = 0;
  expectInvalidArgument([&] { stalled.validate(); }, {"edge 2", "bandwidth"});

  // The constructors of the routes and of the module refuse the same graphs.
  expectInvalidArgument([&] { FabricRoutes routes(split); }, {"chip 0 cannot reach chip 2"});
}

// ---------------------------------------------------------------------------------------------
// Routing

TEST(FabricRouting, FullMeshIsOneHopEverywhere) {
  const FabricRoutes routes(fullMeshGraph(8, test::testLink(), 1));
  for (int s = 0; s < 8; ++s) {
    for (int d = 0; d < 8; ++d) EXPECT_EQ(routes.hops(s, d), s == d ? 0 : 1);
  }
  EXPECT_EQ(routes.pathNodes(3, 6), (std::vector<int>{3, 6}));
  EXPECT_EQ(routes.pathNodes(2, 2), (std::vector<int>{2}));
  EXPECT_THROW(routes.hops(0, 8), std::out_of_range);
}

TEST(FabricRouting, RingTakesTheShorterWayRound) {
  const FabricRoutes routes(ringGraph(8, test::testLink(), 1));
  EXPECT_EQ(routes.hops(0, 4), 4);
  EXPECT_EQ(routes.hops(0, 3), 3);
  EXPECT_EQ(routes.hops(0, 5), 3);
  EXPECT_EQ(routes.pathNodes(0, 3), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(routes.pathNodes(0, 5), (std::vector<int>{0, 7, 6, 5}));
  // Opposite chips: both ways are 4 hops. 0 -> 4: neighbours {1, 7}, hash 0 x 31 + 4 = 4, 4 mod 2 = 0
  // -> 1. 4 -> 0: neighbours {3, 5}, hash 124 mod 2 = 0 -> 3. 1 -> 5: {0, 2}, hash 36 mod 2 = 0 -> 0.
  // 2 -> 6: {1, 3}, hash 68 mod 2 = 0 -> 1. 3 -> 7: {2, 4}, hash 100 mod 2 = 0 -> 2.
  EXPECT_EQ(routes.pathNodes(0, 4), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(routes.pathNodes(4, 0), (std::vector<int>{4, 3, 2, 1, 0}));
  EXPECT_EQ(routes.pathNodes(1, 5), (std::vector<int>{1, 0, 7, 6, 5}));
  // 5 -> 1: neighbours {4, 6}, hash 156 mod 2 = 0 -> 4.
  EXPECT_EQ(routes.pathNodes(5, 1), (std::vector<int>{5, 4, 3, 2, 1}));
  for (int s = 0; s < 8; ++s) {
    for (int d = 0; d < 8; ++d) {
      const int around = (d - s + 8) % 8;
      EXPECT_EQ(routes.hops(s, d), std::min(around, 8 - around)) << s << " -> " << d;
    }
  }
}

TEST(FabricRouting, TorusHopsAreTheWrappedManhattanDistance) {
  const FabricRoutes routes(torusGraph({4, 4}, test::testLink(), 1));
  EXPECT_EQ(routes.hops(0, 10), 4);  // (0,0) -> (2,2): 2 + 2
  EXPECT_EQ(routes.hops(0, 15), 2);  // (0,0) -> (3,3): 1 + 1 over the wrap-around links
  EXPECT_EQ(routes.hops(5, 6), 1);
  int longest = 0;
  for (int s = 0; s < 16; ++s) {
    for (int d = 0; d < 16; ++d) {
      const int dr = std::abs(s / 4 - d / 4);
      const int dc = std::abs(s % 4 - d % 4);
      EXPECT_EQ(routes.hops(s, d), std::min(dr, 4 - dr) + std::min(dc, 4 - dc)) << s << " -> " << d;
      longest = std::max(longest, routes.hops(s, d));
    }
  }
  EXPECT_EQ(longest, 4);  // the diameter of a 4 x 4 torus
}

TEST(FabricRouting, LeafSpineGoesUpOnlyBetweenLeaves) {
  const FabricRoutes routes(leafSpineGraph(16, 4, 2, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop));
  // Same leaf: chip -> leaf 16 -> chip.
  EXPECT_EQ(routes.hops(0, 1), 2);
  EXPECT_EQ(routes.pathNodes(0, 3), (std::vector<int>{0, 16, 3}));
  // Across leaves: chip -> leaf -> spine -> leaf -> chip. At leaf 16 both spines (20, 21) are on a
  // shortest path: 0 -> 4 hashes 4, 4 mod 2 = 0 -> spine 20; 1 -> 4 hashes 35 mod 2 = 1 -> spine 21.
  EXPECT_EQ(routes.hops(0, 4), 4);
  EXPECT_EQ(routes.pathNodes(0, 4), (std::vector<int>{0, 16, 20, 17, 4}));
  EXPECT_EQ(routes.pathNodes(1, 4), (std::vector<int>{1, 16, 21, 17, 4}));
  EXPECT_EQ(routes.hops(15, 0), 4);
  // With one leaf and no spine every pair is two hops.
  const FabricRoutes single(leafSpineGraph(8, 8, 0, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop));
  EXPECT_EQ(single.pathNodes(2, 7), (std::vector<int>{2, 8, 7}));
}

TEST(FabricRouting, EcmpIsDeterministicAndSpreadsFlowsOverSpines) {
  const FabricGraph g = leafSpineGraph(16, 4, 4, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop);
  const FabricRoutes a(g);
  const FabricRoutes b(g);
  // Spines are nodes 20..23. For src s the hash is 31 s + d = 3 s + d (mod 4); each other leaf holds
  // four consecutive ids, one of each residue, so every spine carries 3 flows per source: 48 of the
  // 16 x 12 = 192 cross-leaf flows.
  std::vector<int> perSpine(4, 0);
  for (int s = 0; s < 16; ++s) {
    for (int d = 0; d < 16; ++d) {
      EXPECT_EQ(a.pathNodes(s, d), b.pathNodes(s, d));
      EXPECT_EQ(a.pathNodes(s, d), a.pathNodes(s, d));
      if (s / 4 == d / 4) continue;
      const std::vector<int> path = a.pathNodes(s, d);
      ASSERT_EQ(path.size(), 5u);
      EXPECT_EQ(path[2], 20 + static_cast<int>((31u * s + d) % 4));
      ++perSpine[static_cast<std::size_t>(path[2] - 20)];
    }
  }
  EXPECT_EQ(perSpine, (std::vector<int>{48, 48, 48, 48}));
  // A torus pair with several shortest paths always takes the same one.
  const FabricRoutes t1(torusGraph({4, 4}, test::testLink(), 1));
  const FabricRoutes t2(torusGraph({4, 4}, test::testLink(), 1));
  EXPECT_EQ(t1.pathNodes(0, 10), t2.pathNodes(0, 10));
  EXPECT_EQ(t1.pathNodes(0, 10).size(), 5u);
}

// ---------------------------------------------------------------------------------------------
// Bisection bandwidth (bytes/s per direction); up to 16 chips every balanced split is tried, above
// that the structured candidates.

TEST(FabricBisection, FullMeshCutsHalfTimesHalfPairs) {
  // 8 chips, 2 links per pair: 4 x 4 pairs cross, each 200 GB/s.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(fullMeshGraph(8, test::testLink(), 2)), 16 * 2 * kBandwidth);
  // 5 chips: 2 x 3 pairs.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(fullMeshGraph(5, test::testLink(), 1)), 6 * kBandwidth);
  // 32 chips (candidate cuts): 16 x 16 pairs.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(fullMeshGraph(32, test::testLink(), 1)), 256 * kBandwidth);
}

TEST(FabricBisection, RingCutsTwoLinks) {
  EXPECT_DOUBLE_EQ(bisectionBandwidth(ringGraph(8, test::testLink(), 1)), 2 * kBandwidth);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(ringGraph(5, test::testLink(), 2)), 2 * 2 * kBandwidth);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(ringGraph(2, test::testLink(), 1)), 2 * kBandwidth);  // one double edge
  EXPECT_DOUBLE_EQ(bisectionBandwidth(ringGraph(32, test::testLink(), 1)), 2 * kBandwidth);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(ringGraph(33, test::testLink(), 1)), 2 * kBandwidth);
}

TEST(FabricBisection, TorusCutsAcrossItsLargestDimension) {
  // Cutting across a dimension of size d severs 2 N / d neighbour bundles (the middle plane and the
  // wrap-around plane).
  EXPECT_DOUBLE_EQ(bisectionBandwidth(torusGraph({4, 4}, test::testLink(), 1)), 8 * kBandwidth);  // 2 x 16 / 4
  // 4 x 2: across the 4: 2 x 8 / 4 = 4 bundles; across the 2: 4 double edges = 8 links.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(torusGraph({4, 2}, test::testLink(), 1)), 4 * kBandwidth);
  // 3 x 3 (odd): every 4-chip set has at most 4 internal edges (rows and columns are triangles),
  // so a 4 | 5 split cuts 4 x 4 - 2 x 4 = 8 edges, not 2 N / d = 6.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(torusGraph({3, 3}, test::testLink(), 1)), 8 * kBandwidth);
  // Above 16 chips (candidate cuts): 8 x 8: 2 x 64 / 8 = 16; 4 x 4 x 4: 2 x 64 / 4 = 32;
  // 2 x 4 x 8: across the 8, 16 bundles.
  EXPECT_DOUBLE_EQ(bisectionBandwidth(torusGraph({8, 8}, test::testLink(), 1)), 16 * kBandwidth);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(torusGraph({4, 4, 4}, test::testLink(), 1)), 32 * kBandwidth);
  EXPECT_DOUBLE_EQ(bisectionBandwidth(torusGraph({2, 4, 8}, test::testLink(), 2)), 16 * 2 * kBandwidth);
}

TEST(FabricBisection, LeafSpineIsTheSmallerOfChipAndUplinkSides) {
  // 16 chips, 4 leaves, 2 spines: half the chips = 2 leaves; chip side 8 x 100, uplink side
  // 2 leaves x 2 spines x 100 = 400 GB/s.
  EXPECT_DOUBLE_EQ(
      bisectionBandwidth(leafSpineGraph(16, 4, 2, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop)),
      4 * kBandwidth);
  // Four uplinks per leaf and spine: uplink side 1600, chip side 800.
  EXPECT_DOUBLE_EQ(
      bisectionBandwidth(leafSpineGraph(16, 4, 2, test::testLink(), 1, test::testLink(), 4, kLeafHop, kSpineHop)),
      8 * kBandwidth);
  // 10 chips on leaves of 4, 4, 2 with 2 spines: a 5 | 5 split must split a leaf; the best is
  // leaf 0 plus one chip of leaf 1: that chip's link plus leaf 0's two uplinks = 3 links.
  EXPECT_DOUBLE_EQ(
      bisectionBandwidth(leafSpineGraph(10, 4, 2, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop)),
      3 * kBandwidth);
  // One leaf, no spine: 4 chip links.
  EXPECT_DOUBLE_EQ(
      bisectionBandwidth(leafSpineGraph(8, 8, 0, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop)),
      4 * kBandwidth);
  // 64 chips, 8 leaves, 4 spines (candidate cuts): chip side 32 x 100, uplink side 4 x 4 x 100.
  EXPECT_DOUBLE_EQ(
      bisectionBandwidth(leafSpineGraph(64, 8, 4, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop)),
      16 * kBandwidth);
  EXPECT_DOUBLE_EQ(
      bisectionBandwidth(leafSpineGraph(64, 8, 4, test::testLink(), 1, test::testLink(), 4, kLeafHop, kSpineHop)),
      32 * kBandwidth);
}

}  // namespace
}  // namespace scoville::hw
