// Graph-routed inter-chip fabric: timing scenarios with one SystemC elaboration per test (one
// process per test under ctest); builders, routing and bisection are in test/unit/FabricGraphTest.cpp.
// Expectations are hand arithmetic, written out in the comments.
//
// Link used throughout: 100 GB/s per direction, 250 ns, 4096 B MTU, 64 B header. A 1 MiB message
// is 256 packets, W = 1048576 + 256 x 64 = 1064960 wire bytes, serialised in S = 10649.6 ns; all
// values are whole picoseconds, so simulated times are exact.
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/network/GraphFabric.h"
#include "test/support/BurstSender.h"
#include "test/support/Elaboration.h"
#include "test/support/NetworkFixtures.h"
#include "test/support/TrafficGenerator.h"
#include "tlm/ActivityBus.h"

namespace scoville::hw {
namespace {

using test::expectInvalidArgument;
using test::NetworkActivityTotals;

using test::BurstSender;
using test::TrafficGenerator;

constexpr double kBandwidth = 100e9;  // test::testLink()'s rate and latency
constexpr double kLatency = 250e-9;
constexpr double kForward = 50e-9;    // chip forwarding latency (ring, torus)
constexpr double kLeafHop = 100e-9;   // leaf switch
constexpr double kSpineHop = 200e-9;  // spine switch
constexpr uint64_t kMiB = 1 << 20;
constexpr double kWire = 1064960;               // wire bytes of 1 MiB
constexpr double kSerial = kWire / kBandwidth;  // 10649.6 ns
constexpr double kTick = 1e-12;                 // kernel resolution: slack for exact-bound comparisons

sc_core::sc_time ps(double picoseconds) {
  return sc_core::sc_time(picoseconds, sc_core::SC_PS);
}

// ---------------------------------------------------------------------------------------------
// Timing scenarios (one elaboration each)

TEST(FabricScenario, SingleHopTakesLatencyPlusSerialisation) {
  test::claimElaboration();
  GraphFabric fabric("mesh", fullMeshGraph(4, test::testLink(), 1));
  // 1 MiB: 250 ns + 10649.6 ns = 10899.6 ns. 100 B: 1 packet, 164 wire bytes, 1.64 ns + 250 ns.
  TrafficGenerator gen("gen", {test::sendRequest(0, 1, kMiB), test::sendRequest(0, 2, 100)});
  gen.bind(fabric.socket);
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 2u);
  for (const auto& c : gen.completions()) EXPECT_EQ(c.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(gen.completions()[0].end - gen.completions()[0].start, ps(10899600));
  EXPECT_EQ(gen.completions()[1].end - gen.completions()[1].start, ps(251640));
  const stats::Group& s = fabric.stats();
  EXPECT_DOUBLE_EQ(s.value("messages"), 2);
  EXPECT_DOUBLE_EQ(s.value("bytes"), kMiB + 100.0);
  EXPECT_DOUBLE_EQ(s.value("mean_hops"), 1);
  EXPECT_DOUBLE_EQ(s.value("link_0_1_wire_bytes"), kWire);
  EXPECT_DOUBLE_EQ(s.value("link_0_1_packets"), 256);
  EXPECT_DOUBLE_EQ(s.value("link_0_2_wire_bytes"), 164);
  EXPECT_DOUBLE_EQ(s.value("link_1_0_messages"), 0);  // the reverse direction stayed idle
  EXPECT_DOUBLE_EQ(s.value("link_0_1_busy_time"), kSerial);
  EXPECT_DOUBLE_EQ(s.value("queue_time"), 0);
}

TEST(FabricScenario, RingIsCutThroughAcrossForwardingChips) {
  test::claimElaboration();
  FabricGraph ring = ringGraph(8, test::testLink(), 1);
  ring.chipForwardLatencyS = kForward;
  GraphFabric fabric("ring", ring);
  // 0 -> 4 over 4 links and 3 forwarding chips, one serialisation (cut-through):
  // 4 x 250 + 3 x 50 + 10649.6 = 11799.6 ns. Store-and-forward would pay 4 x 10649.6.
  TrafficGenerator gen("gen", {test::sendRequest(0, 4, kMiB)});
  gen.bind(fabric.socket);
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 1u);
  const sc_core::sc_time t = gen.completions()[0].end - gen.completions()[0].start;
  EXPECT_EQ(t, ps(11799600));
  EXPECT_GE(t.to_seconds() + kTick, kWire / kBandwidth);
  EXPECT_DOUBLE_EQ(fabric.stats().value("mean_hops"), 4);
  for (const char* hop : {"link_0_1", "link_1_2", "link_2_3", "link_3_4"}) {
    EXPECT_DOUBLE_EQ(fabric.stats().value(std::string(hop) + "_wire_bytes"), kWire) << hop;
  }
}

TEST(FabricScenario, LeafSpineCrossingEmitsLinkAndSwitchActivity) {
  test::claimElaboration();
  GraphFabric fabric("clos", leafSpineGraph(16, 4, 2, test::testLink(), 1, test::testLink(), 1, kLeafHop, kSpineHop));
  NetworkActivityTotals totals;
  tlm::ActivityBus bus;
  bus.subscribe(totals);
  fabric.attachActivity(bus);
  // 0 -> 4: chip, leaf 16, spine 20, leaf 17, chip: 4 x 250 + 100 + 200 + 100 + 10649.6 = 12049.6 ns.
  // 0 -> 1 afterwards: chip, leaf, chip: 2 x 250 + 100 + 10649.6 = 11249.6 ns.
  TrafficGenerator gen("gen", {test::sendRequest(0, 4, kMiB), test::sendRequest(0, 1, kMiB)});
  gen.bind(fabric.socket);
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 2u);
  EXPECT_EQ(gen.completions()[0].end - gen.completions()[0].start, ps(12049600));
  EXPECT_EQ(gen.completions()[1].end - gen.completions()[1].start, ps(11249600));
  // Link bytes at the chips' ports only (the first and the last hop of each message: 2 + 2; the
  // switch ends are the switches'), switch bytes and packets out of every switch (3 + 1).
  EXPECT_DOUBLE_EQ(totals.link, 4 * kWire);
  EXPECT_DOUBLE_EQ(totals.switched, 4 * kWire);
  EXPECT_DOUBLE_EQ(totals.packets, 4 * 256.0);
  EXPECT_DOUBLE_EQ(fabric.stats().value("mean_hops"), 3);
  EXPECT_DOUBLE_EQ(fabric.stats().value("link_16_20_messages"), 1);
  EXPECT_DOUBLE_EQ(fabric.stats().value("link_20_17_messages"), 1);
}

TEST(FabricScenario, SlowUplinkSetsTheRateOfTheWholePath) {
  test::claimElaboration();
  // Uplinks at 50 GB/s: serialisation there is 2 x 10649.6 = 21299.2 ns. Hop by hop (ns):
  //   h0 chip->leaf:   start 0,    end 10649.6
  //   h1 leaf->spine:  start 350,  end max(350 + 21299.2, 10649.6 + 350) = 21649.2
  //   h2 spine->leaf:  start 800,  end max(800 + 21299.2, 21649.2 + 450) = 22099.2
  //   h3 leaf->chip:   start 1150, end max(1150 + 10649.6, 22099.2 + 350) = 22449.2
  // last byte in 22449.2 + 250 = 22699.2 = slowest serialisation + 4 latencies + the 3 switch hops.
  GraphFabric fabric("clos",
                     leafSpineGraph(8, 4, 1, test::testLink(), 1, test::testLink(50e9), 1, kLeafHop, kSpineHop));
  TrafficGenerator gen("gen", {test::sendRequest(0, 4, kMiB)});
  gen.bind(fabric.socket);
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 1u);
  EXPECT_EQ(gen.completions()[0].end - gen.completions()[0].start, ps(22699200));
}

TEST(FabricScenario, EveryHopSerialisesItsOwnFraming) {
  test::claimElaboration();
  // Uplinks with 1 KiB packets and 256-byte headers: 1 MiB is 1024 packets, 1310720 wire bytes
  // there (13107.2 ns at 100 GB/s) against 1064960 (10649.6 ns) on the chip links. Hop by hop (ns):
  //   h0 chip->leaf:   start 0,    end 10649.6
  //   h1 leaf->spine:  start 350,  end max(350 + 13107.2, 10649.6 + 350) = 13457.2
  //   h2 spine->leaf:  start 800,  end max(800 + 13107.2, 13457.2 + 450) = 13907.2
  //   h3 leaf->chip:   start 1150, end max(1150 + 10649.6, 13907.2 + 350) = 14257.2
  // last byte in 14257.2 + 250 = 14507.2.
  LinkConfig small = test::testLink();
  small.mtuBytes = 1024;
  small.headerBytes = 256;
  GraphFabric fabric("clos", leafSpineGraph(8, 4, 1, test::testLink(), 1, small, 1, kLeafHop, kSpineHop));
  TrafficGenerator gen("gen", {test::sendRequest(0, 4, kMiB)});
  gen.bind(fabric.socket);
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 1u);
  EXPECT_EQ(gen.completions()[0].end - gen.completions()[0].start, ps(14507200));
  const std::vector<int> path = fabric.pathNodes(0, 4);
  ASSERT_EQ(path.size(), 5u);
  const std::string up = "link_" + std::to_string(path[1]) + "_" + std::to_string(path[2]) + "_wire_bytes";
  EXPECT_DOUBLE_EQ(fabric.stats().value(up), 1310720.0);
}

TEST(FabricScenario, MessagesSharingADirectedLinkSerialise) {
  test::claimElaboration();
  FabricGraph ring = ringGraph(8, test::testLink(), 1);
  ring.chipForwardLatencyS = kForward;
  GraphFabric fabric("ring", ring);
  // A: 0 -> 3 (0,1,2,3) at 0; B: 1 -> 3 (1,2,3) at 1 ns shares links 1->2 and 2->3.
  // A: hop 1->2 ends at 250 + 50 + 10649.6 = 10949.6; 2->3 ends at 11249.6; in at 3 x 250 + 2 x 50
  //    + 10649.6 = 11499.6 ns.
  // B: 1->2 starts when A leaves it, 10949.6, ends 21599.2; its head reaches 2->3 at 11249.6 (free
  //    then), ends max(11249.6 + 10649.6, 21599.2 + 300) = 21899.2; in at 22149.2 ns = A + S.
  TrafficGenerator a("a", {test::sendRequest(0, 3, kMiB)});
  TrafficGenerator b("b", {test::sendRequest(1, 3, kMiB, sc_core::sc_time(1, sc_core::SC_NS))});
  a.bind(fabric.socket);
  b.bind(fabric.socket);
  sc_core::sc_start();
  ASSERT_EQ(a.completions().size(), 1u);
  ASSERT_EQ(b.completions().size(), 1u);
  EXPECT_EQ(a.completions()[0].end, ps(11499600));
  EXPECT_EQ(b.completions()[0].end, ps(22149200));
  EXPECT_GE(b.completions()[0].end, a.completions()[0].end + ps(10649600));
  // B's head waited on 1->2 from 1 ns to 10949.6 ns.
  EXPECT_NEAR(fabric.stats().value("link_1_2_queue_time"), 10948.6e-9, 1e-15);
  EXPECT_NEAR(fabric.stats().value("queue_time"), 10948.6e-9, 1e-15);
  EXPECT_DOUBLE_EQ(fabric.stats().value("link_2_3_messages"), 2);
  EXPECT_DOUBLE_EQ(fabric.stats().value("link_0_1_messages"), 1);
}

TEST(FabricScenario, OppositeDirectionsOfOneLinkDoNotInterfere) {
  test::claimElaboration();
  GraphFabric fabric("pair", fullMeshGraph(2, test::testLink(), 1));
  // Both at time 0, each on its own direction: 250 + 10649.6 = 10899.6 ns each.
  TrafficGenerator a("a", {test::sendRequest(0, 1, kMiB)});
  TrafficGenerator b("b", {test::sendRequest(1, 0, kMiB)});
  a.bind(fabric.socket);
  b.bind(fabric.socket);
  sc_core::sc_start();
  ASSERT_EQ(a.completions().size(), 1u);
  ASSERT_EQ(b.completions().size(), 1u);
  EXPECT_EQ(a.completions()[0].end, ps(10899600));
  EXPECT_EQ(b.completions()[0].end, ps(10899600));
  EXPECT_DOUBLE_EQ(fabric.stats().value("queue_time"), 0);
}

TEST(FabricScenario, NoMessageBeatsTheRoofline) {
  test::claimElaboration();
  // Every chip of a 4 x 4 torus fires 40 messages of 64 KiB .. 1 MiB at pseudo-random peers, all at
  // time zero: heavy contention on shared links.
  FabricGraph torus = torusGraph({4, 4}, test::testLink(), 1);
  torus.chipForwardLatencyS = kForward;
  GraphFabric fabric("torus", torus);
  const int chips = 16;
  std::vector<std::unique_ptr<BurstSender>> senders;
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int c = 0; c < chips; ++c) {
    std::vector<TrafficGenerator::Request> sends;
    for (int i = 0; i < 40; ++i) {
      const int dst = (c + 1 + static_cast<int>(next() % (chips - 1))) % chips;
      sends.push_back(test::sendRequest(c, dst, (64 << 10) * (1 + next() % 16)));
    }
    senders.push_back(std::make_unique<BurstSender>(("sender" + std::to_string(c)).c_str(), sends));
    senders.back()->socket.bind(fabric.socket);
  }
  sc_core::sc_start();
  const double elapsed = sc_core::sc_time_stamp().to_seconds();
  for (const auto& sender : senders) {
    ASSERT_EQ(sender->arrivals.size(), sender->sends().size());
    double wire = 0;
    for (std::size_t i = 0; i < sender->sends().size(); ++i) {
      const tlm::OpExtension& op = sender->sends()[i].op;
      const double w = static_cast<double>(test::testLink().wireBytesFor(op.bytes));
      const int h = fabric.hops(op.srcChip, op.dstChip);
      // Alone on its path: h latencies, h - 1 forwards, one serialisation; and never above link rate.
      const double alone = h * kLatency + (h - 1) * kForward + w / kBandwidth;
      EXPECT_GE(sender->arrivals[i].to_seconds() + kTick, alone) << "send " << i;
      EXPECT_GE(sender->arrivals[i].to_seconds() + kTick, op.bytes / kBandwidth);
      wire += w;
    }
    // A chip's 4 outgoing links together carry at most 4 x 100 GB/s.
    double last = 0;
    for (const auto& t : sender->arrivals) last = std::max(last, t.to_seconds());
    EXPECT_GE(last + kTick, wire / (4 * kBandwidth));
  }
  // No directed link was ever busy for longer than the run.
  for (const auto& e : torus.edges) {
    for (const auto& [from, to] : {std::pair{e.a, e.b}, std::pair{e.b, e.a}}) {
      const std::string prefix = "link_" + std::to_string(from) + "_" + std::to_string(to);
      EXPECT_LE(fabric.stats().value(prefix + "_busy_time"), elapsed + kTick) << prefix;
      EXPECT_LE(fabric.stats().value(prefix + "_utilization"), 1.0) << prefix;
    }
  }
  EXPECT_GT(fabric.stats().value("queue_time"), 0.0);
  EXPECT_DOUBLE_EQ(fabric.stats().value("messages"), 16 * 40);
  std::cout << "16 x 40 sends on a 4x4 torus: done at " << elapsed * 1e6 << " us, mean hops "
            << fabric.stats().value("mean_hops") << ", mean queue " << fabric.stats().value("mean_queue_time") * 1e6
            << " us\n";
}

TEST(FabricScenario, MalformedSendsGetTheDocumentedResponses) {
  test::claimElaboration();
  GraphFabric fabric("mesh", fullMeshGraph(3, test::testLink(), 1));
  TrafficGenerator::Request read = test::sendRequest(0, 1, 100);
  read.op.kind = tlm::OpKind::kRead;
  TrafficGenerator gen("gen",
                       {test::sendRequest(0, 0, 100), read, test::sendRequest(0, 3, 100), test::sendRequest(0, -1, 100),
                        test::sendRequest(7, 1, 100), test::sendRequest(-1, 1, 100), test::sendRequest(0, 1, 0),
                        test::sendRequest(0, 1, 100)});
  gen.bind(fabric.socket);
  sc_core::sc_start();
  const std::vector<::tlm::tlm_response_status> expected = {
      ::tlm::TLM_COMMAND_ERROR_RESPONSE,  // src == dst
      ::tlm::TLM_COMMAND_ERROR_RESPONSE,  // not kSend
      ::tlm::TLM_ADDRESS_ERROR_RESPONSE,  // dst beyond the chips
      ::tlm::TLM_ADDRESS_ERROR_RESPONSE,  // negative dst
      ::tlm::TLM_COMMAND_ERROR_RESPONSE,  // src beyond the chips
      ::tlm::TLM_COMMAND_ERROR_RESPONSE,  // negative src
      ::tlm::TLM_COMMAND_ERROR_RESPONSE,  // empty message
      ::tlm::TLM_OK_RESPONSE,
  };
  ASSERT_EQ(gen.completions().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(gen.completions()[i].status, expected[i]) << "send " << i;
    if (expected[i] != ::tlm::TLM_OK_RESPONSE) {
      EXPECT_EQ(gen.completions()[i].end, gen.completions()[i].start) << "a rejected send takes no time";
    }
  }
  EXPECT_EQ(gen.completions().back().end - gen.completions().back().start, ps(251640));
  EXPECT_DOUBLE_EQ(fabric.stats().value("messages"), 1);
}

TEST(FabricScenario, ConstructorRejectsAnInvalidGraph) {
  test::claimElaboration();
  FabricGraph dangling = fullMeshGraph(2, test::testLink(), 1);
  dangling.switchHopLatencyS = {kLeafHop};
  expectInvalidArgument([&] { GraphFabric fabric("bad", dangling); }, {"dangling switch", "node 2"});
}

}  // namespace
}  // namespace scoville::hw
