// Inter-chip network scenarios, one SystemC elaboration per test (one process per test under
// ctest). Expectations are closed-form link arithmetic, not recorded outputs.
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hw/network/Collective.h"
#include "hw/network/Switch.h"
#include "hw/network/SwitchPort.h"
#include "test/support/BurstSender.h"
#include "test/support/Elaboration.h"
#include "test/support/NetworkFixtures.h"
#include "test/support/TrafficGenerator.h"
#include "tlm/ActivityBus.h"
#include "tlm/PayloadPool.h"
#include "tlm/ProtocolChecker.h"

namespace scoville::hw {
namespace {

using test::expectInvalidArgument;
using test::NetworkActivityTotals;

using test::BurstSender;
using test::TrafficGenerator;

constexpr double kBandwidth = 100e9;
constexpr double kLatency = 250e-9;
constexpr double kHop = 100e-9;
constexpr double kMtu = 4096;
constexpr double kHeader = 64;
constexpr double kAlpha = 2 * kLatency + kHop;  // link -> switch -> link, per message
constexpr double kTick = 1e-12;                 // kernel resolution: slack for exact-bound comparisons

SwitchConfig fabricSwitch(FlowControl flowControl, double bufferBytes = 256 * 1024) {
  SwitchConfig c;
  c.ports = 16;
  c.hopLatencyS = kHop;
  c.inputBufferBytes = bufferBytes;
  c.flowControl = flowControl;
  return c;
}

/// Wire time of a `bytes` message: payload plus one header per MTU, at link rate.
double wireTime(double bytes) {
  return test::testLink().wireBytesFor(static_cast<uint64_t>(bytes)) / kBandwidth;
}

/// An initiator that never sends, for chips a scenario does not use (target sockets must be bound).
struct IdleInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<IdleInitiator> socket{"socket"};
  explicit IdleInitiator(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {}
};

/// A switch with `chips` attached ports.
struct Fabric {
  Switch fabric;
  std::vector<std::unique_ptr<SwitchPort>> ports;
  std::vector<std::unique_ptr<IdleInitiator>> idle;

  Fabric(const std::string& prefix, int chips, const SwitchConfig& config)
      : fabric((prefix + "_switch").c_str(), config) {
    for (int c = 0; c < chips; ++c) {
      ports.push_back(
          std::make_unique<SwitchPort>((prefix + "_port" + std::to_string(c)).c_str(), test::testLink(), c));
      fabric.attach(*ports.back());
    }
  }
  void leaveIdle(const std::vector<int>& chips) {
    for (int c : chips) {
      idle.push_back(
          std::make_unique<IdleInitiator>(("idle_" + std::string(fabric.basename()) + std::to_string(c)).c_str()));
      idle.back()->socket.bind(ports[static_cast<std::size_t>(c)]->fromChip);
    }
  }
  SwitchPort& port(int c) { return *ports[static_cast<std::size_t>(c)]; }
};

TEST(NetworkScenario, SingleMessageMeetsItsLinkBoundAndNoMore) {
  test::claimElaboration();
  Fabric net("net", 2, fabricSwitch(FlowControl::kCredit));
  const uint64_t big = 8 << 20;
  TrafficGenerator gen("gen", {test::sendRequest(0, 1, big), test::sendRequest(0, 1, 100)});
  gen.socket.bind(net.port(0).fromChip);
  net.leaveIdle({1});
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 2u);
  for (const auto& c : gen.completions()) EXPECT_EQ(c.status, ::tlm::TLM_OK_RESPONSE);
  const double tBig = (gen.completions()[0].end - gen.completions()[0].start).to_seconds();
  const double tSmall = (gen.completions()[1].end - gen.completions()[1].start).to_seconds();
  const double payloadBound = big / kBandwidth + kAlpha;
  const double wireBound = wireTime(big) + kAlpha;  // headers: 64 B per 4 KiB
  std::cout << "8 MiB message: " << tBig * 1e6 << " us (payload-only bound " << payloadBound * 1e6
            << " us, with headers " << wireBound * 1e6 << " us)\n";
  EXPECT_GE(tBig + kTick, wireBound);
  EXPECT_GT(tBig, payloadBound);
  EXPECT_LE(tBig, 1.03 * payloadBound);
  EXPECT_GE(tSmall + kTick, wireTime(100) + kAlpha);
  EXPECT_LE(tSmall, 1.01 * (wireTime(100) + kAlpha));
  EXPECT_DOUBLE_EQ(net.port(0).stats().value("tx_bytes"), big + 100.0);
  EXPECT_DOUBLE_EQ(net.port(1).stats().value("rx_packets"), 2048.0 + 1.0);
}

TEST(NetworkScenario, LinkNeverCarriesMoreThanItsRate) {
  test::claimElaboration();
  Fabric net("net", 4, fabricSwitch(FlowControl::kCredit));
  const uint64_t bytes = 64 << 10;
  const int messages = 3000;
  std::vector<TrafficGenerator::Request> burst;
  for (int i = 0; i < messages; ++i) burst.push_back(test::sendRequest(0, 1 + i % 3, bytes));
  BurstSender sender("sender", burst, sc_core::SC_ZERO_TIME);
  sender.socket.bind(net.port(0).fromChip);
  net.leaveIdle({1, 2, 3});
  sc_core::sc_start();
  ASSERT_EQ(sender.arrivals.size(), static_cast<std::size_t>(messages));
  for (int i = 0; i < messages; ++i) {
    // Message i cannot have arrived before i + 1 messages crossed the link at its rate.
    ASSERT_GE(sender.arrivals[static_cast<std::size_t>(i)].to_seconds() + kTick, (i + 1) * wireTime(bytes) + kAlpha)
        << i;
  }
  const double total = sender.arrivals.back().to_seconds();
  const double bound = messages * wireTime(bytes) + kAlpha;
  std::cout << messages << " x 64 KiB back to back: " << total * 1e6 << " us, link bound " << bound * 1e6
            << " us, tx utilisation " << net.port(0).stats().value("tx_utilization") << "\n";
  EXPECT_LE(total, 1.01 * bound) << "a deep queue keeps the link busy";
  EXPECT_LE(net.port(0).stats().value("tx_utilization"), 1.0);
  EXPECT_GT(net.port(0).stats().value("tx_utilization"), 0.99);
  for (int c = 1; c < 4; ++c) EXPECT_LE(net.port(c).stats().value("rx_utilization"), 1.0);
}

TEST(NetworkScenario, TwoSendersShareOneDestinationPortEqually) {
  test::claimElaboration();
  Fabric net("net", 3, fabricSwitch(FlowControl::kCredit));
  const uint64_t bytes = 1 << 20;
  const int messages = 100;
  std::vector<TrafficGenerator::Request> a, b;
  for (int i = 0; i < messages; ++i) {
    a.push_back(test::sendRequest(0, 2, bytes));
    b.push_back(test::sendRequest(1, 2, bytes));
  }
  TrafficGenerator genA("a", a), genB("b", b);
  genA.socket.bind(net.port(0).fromChip);
  genB.socket.bind(net.port(1).fromChip);
  net.leaveIdle({2});
  sc_core::sc_start();
  const double half = 0.5 * bytes / wireTime(bytes);  // payload rate of half the link
  const double rateA = messages * bytes / genA.lastEnd().to_seconds();
  const double rateB = messages * bytes / genB.lastEnd().to_seconds();
  std::cout << "shared destination: a " << rateA / 1e9 << " GB/s, b " << rateB / 1e9 << " GB/s, half link "
            << half / 1e9 << " GB/s\n";
  EXPECT_NEAR(rateA / half, 1.0, 0.1);
  EXPECT_NEAR(rateB / half, 1.0, 0.1);
  EXPECT_GT(net.fabric.stats().value("output_queue_time"), 0.0);
  EXPECT_LE(net.port(2).stats().value("rx_utilization"), 1.0);
}

TEST(NetworkScenario, CreditFlowControlStallsSendersOnlyUnderContention) {
  test::claimElaboration();
  // Two identical fabrics in one elaboration: 256 KiB input buffers (above the credit loop's
  // bandwidth-delay product) versus unbounded output queues. Chips 0 and 1 both send 4 MiB to chip
  // 2; chip 1 then sends 4 MiB to idle chip 3.
  const uint64_t bytes = 4 << 20;
  const sc_core::sc_time later(1, sc_core::SC_NS);  // chip 1 asks just after chip 0
  Fabric credit("credit", 4, fabricSwitch(FlowControl::kCredit));
  Fabric queued("queued", 4, fabricSwitch(FlowControl::kOutputQueued));
  BurstSender c0("c0", {test::sendRequest(0, 2, bytes)}, sc_core::SC_ZERO_TIME);
  BurstSender c1("c1", {test::sendRequest(1, 2, bytes), test::sendRequest(1, 3, bytes)}, later);
  BurstSender q0("q0", {test::sendRequest(0, 2, bytes)}, sc_core::SC_ZERO_TIME);
  BurstSender q1("q1", {test::sendRequest(1, 2, bytes), test::sendRequest(1, 3, bytes)}, later);
  c0.socket.bind(credit.port(0).fromChip);
  c1.socket.bind(credit.port(1).fromChip);
  q0.socket.bind(queued.port(0).fromChip);
  q1.socket.bind(queued.port(1).fromChip);
  credit.leaveIdle({2, 3});
  queued.leaveIdle({2, 3});
  sc_core::sc_start();
  const double t = wireTime(bytes);
  // Uncontended: the buffer covers the credit loop, so both fabrics deliver at link rate.
  EXPECT_EQ(c0.arrivals[0], q0.arrivals[0]);
  EXPECT_NEAR(c0.arrivals[0].to_seconds(), t + kAlpha, 1e-9);
  // Contended: output queued lets chip 1's link run on, so its message to chip 3 leaves after one
  // message time; with credits the link is held until chip 2's output drains chip 0's message.
  const double queuedToIdle = q1.arrivals[1].to_seconds();
  const double creditToIdle = c1.arrivals[1].to_seconds();
  std::cout << "message behind a congested output: output_queued " << queuedToIdle * 1e6 << " us, credit "
            << creditToIdle * 1e6 << " us (one message time " << t * 1e6 << " us)\n";
  EXPECT_NEAR(queuedToIdle, 2 * t + kAlpha, 0.02 * t);
  EXPECT_NEAR(creditToIdle, 3 * t, 0.05 * t);
  EXPECT_GT(creditToIdle, queuedToIdle);
  EXPECT_GE(c1.arrivals[0], q1.arrivals[0]);
  EXPECT_GT(credit.fabric.stats().value("credit_stall_time"), 0.5 * t);
  EXPECT_EQ(queued.fabric.stats().value("credit_stall_time"), 0.0);
  EXPECT_GT(credit.port(1).stats().value("tx_stall_time"), 0.5 * t);
}

TEST(NetworkScenario, CreditBufferBelowBandwidthDelayProductThrottlesAnIdlePath) {
  test::claimElaboration();
  const double packet = kMtu + kHeader;
  Fabric tiny("tiny", 2, fabricSwitch(FlowControl::kCredit, packet));  // stop-and-wait: one packet
  Fabric queued("queued", 2, fabricSwitch(FlowControl::kOutputQueued, packet));
  const uint64_t bytes = 1 << 20;
  TrafficGenerator a("a", {test::sendRequest(0, 1, bytes)}), b("b", {test::sendRequest(0, 1, bytes)});
  a.socket.bind(tiny.port(0).fromChip);
  b.socket.bind(queued.port(0).fromChip);
  tiny.leaveIdle({1});
  queued.leaveIdle({1});
  sc_core::sc_start();
  const double roundTrip = 2 * kLatency + kHop + packet / kBandwidth;  // send, forward, credit back
  const double windowBound = test::testLink().wireBytesFor(bytes) / packet * roundTrip;
  const double tTiny = a.lastEnd().to_seconds();
  std::cout << "1-packet credit buffer: " << tTiny * 1e6 << " us, window bound " << windowBound * 1e6
            << " us, output queued " << b.lastEnd().to_seconds() * 1e6 << " us\n";
  EXPECT_NEAR(b.lastEnd().to_seconds(), wireTime(bytes) + kAlpha, 1e-9);
  EXPECT_GE(tTiny + kTick, windowBound);
  EXPECT_LE(tTiny, 1.05 * windowBound);
}

/// Runs `schedule` on an 8-chip fabric and returns the collective's time in seconds.
double runCollective(CollectiveKind kind, CollectiveAlgorithm algorithm, uint64_t bytes, int chips = 8) {
  Fabric net("net", chips, fabricSwitch(FlowControl::kCredit));
  CollectiveEngine engine("engine", expandCollective(kind, algorithm, chips, bytes));
  for (int c = 0; c < chips; ++c) engine.sockets[static_cast<std::size_t>(c)].bind(net.port(c).fromChip);
  sc_core::sc_start();
  EXPECT_TRUE(engine.done());
  std::size_t sends = 0;
  for (const auto& step : engine.schedule().steps) sends += step.size();
  EXPECT_DOUBLE_EQ(engine.stats().value("sends"), static_cast<double>(sends));
  return engine.totalTime().to_seconds();
}

void report(const char* what, double simulated, double textbook) {
  std::cout << what << ": simulated " << simulated * 1e6 << " us, textbook " << textbook * 1e6 << " us (ratio "
            << simulated / textbook << ")\n";
}

TEST(NetworkScenario, RingAllReduceOverEightChipsMatchesTextbook) {
  test::claimElaboration();
  const int n = 8;
  const double bytes = 64 << 20;
  const double t = runCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, 64 << 20, n);
  const double textbook = 2.0 * (n - 1) / n * bytes / kBandwidth + 2 * (n - 1) * kAlpha;
  report("ring all_reduce 8 x 64 MiB", t, textbook);
  EXPECT_GE(t, textbook);
  EXPECT_NEAR(t / textbook, 1.0, 0.1);
}

TEST(NetworkScenario, DirectAllToAllOverEightChipsMatchesTextbook) {
  test::claimElaboration();
  const int n = 8;
  const double bytes = 64 << 20;
  const double t = runCollective(CollectiveKind::kAllToAll, CollectiveAlgorithm::kDirect, 64 << 20, n);
  const double textbook = (n - 1.0) / n * bytes / kBandwidth + kAlpha;
  report("direct all_to_all 8 x 64 MiB", t, textbook);
  EXPECT_GE(t, textbook);
  EXPECT_NEAR(t / textbook, 1.0, 0.1);
}

TEST(NetworkScenario, RingAllGatherOverEightChipsMatchesTextbook) {
  test::claimElaboration();
  const int n = 8;
  const double bytes = 64 << 20;
  const double t = runCollective(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, 64 << 20, n);
  const double textbook = (n - 1.0) / n * bytes / kBandwidth + (n - 1) * kAlpha;
  report("ring all_gather 8 x 64 MiB", t, textbook);
  EXPECT_GE(t, textbook);
  EXPECT_NEAR(t / textbook, 1.0, 0.1);
}

TEST(NetworkScenario, TreeAllReduceSerialisesTwoChildrenPerParent) {
  test::claimElaboration();
  // 8 chips in a heap tree (levels 1 | 2 | 4 | 1): six steps; the four middle ones move two
  // messages through one parent port, the outer two only one.
  const double bytes = 16 << 20;
  const double t = runCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kTree, 16 << 20, 8);
  const double textbook = 10 * bytes / kBandwidth + 6 * kAlpha;
  report("tree all_reduce 8 x 16 MiB", t, textbook);
  EXPECT_GE(t, textbook);
  EXPECT_NEAR(t / textbook, 1.0, 0.1);
}

// Switch ports take approximately-timed initiators too (simple_target_socket adapts nb_transport
// to their b_transport): the same sends time identically in both modes, protocol-clean.
TEST(NetworkScenario, ApproximatelyTimedSendersSeeTheSameTimesAsLooselyTimed) {
  test::claimElaboration();
  Fabric lt("lt", 2, fabricSwitch(FlowControl::kCredit));
  Fabric at("at", 2, fabricSwitch(FlowControl::kCredit));
  lt.leaveIdle({1});
  at.leaveIdle({1});
  std::vector<TrafficGenerator::Request> sends;
  for (uint64_t bytes : {100ull, 4096ull, 1ull << 20, 8ull << 20}) sends.push_back(test::sendRequest(0, 1, bytes));
  NetworkActivityTotals wire;
  tlm::ActivityBus bus;
  bus.subscribe(wire);
  lt.fabric.attachActivity(bus);
  TrafficGenerator viaLt("via_lt", sends, tlm::TimingMode::kLooselyTimed);
  TrafficGenerator viaAt("via_at", sends, tlm::TimingMode::kApproximatelyTimed);
  viaLt.bind(lt.port(0).fromChip);
  viaAt.bind(at.port(0).fromChip);
  sc_core::sc_start();
  ASSERT_EQ(viaAt.completions().size(), sends.size());
  for (std::size_t i = 0; i < sends.size(); ++i) {
    EXPECT_EQ(viaAt.completions()[i].status, ::tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(viaAt.completions()[i].end - viaAt.completions()[i].start,
              viaLt.completions()[i].end - viaLt.completions()[i].start)
        << "send " << i;
  }
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
  // Activity for the power model: each message crosses two link hops and one switch output.
  double expectedWire = 0, expectedPackets = 0;
  for (const auto& r : sends) {
    expectedWire += static_cast<double>(test::testLink().wireBytesFor(r.op.bytes));
    expectedPackets += static_cast<double>(test::testLink().packetsFor(r.op.bytes));
  }
  EXPECT_DOUBLE_EQ(wire.link, 2 * expectedWire);
  EXPECT_DOUBLE_EQ(wire.switched, expectedWire);
  EXPECT_DOUBLE_EQ(wire.packets, expectedPackets);
}

/// Sends, from one thread at time zero, every block k = 1..n-1 of a direct all-reduce over chips
/// 0..n-1 (chip i sends `bytes` to chip i + k): as one rotation transaction through chip 0's port
/// or as n messages through each chip's own port, in member order. First, optionally, one message
/// `preloadSrc` -> `preloadDst` that leaves those ports unlike the others.
struct RotationSender : sc_core::sc_module {
  sc_core::sc_vector<tlm_utils::simple_initiator_socket<RotationSender>> sockets;
  std::vector<int> chips;
  uint64_t bytes;
  bool asRotation;
  bool batched = false;  ///< asRotation: every block in one transaction (OpExtension::rotations)
  int batchShift = 1;    ///< batched: the first block's shift
  int preloadSrc = -1, preloadDst = -1;
  std::vector<sc_core::sc_time> blockEnds;
  std::vector<::tlm::tlm_response_status> statuses;

  RotationSender(const sc_core::sc_module_name& name, int n, uint64_t bytes, bool asRotation)
      : sc_core::sc_module(name), sockets("socket", static_cast<std::size_t>(n)), bytes(bytes), asRotation(asRotation) {
    for (int c = 0; c < n; ++c) chips.push_back(c);
    SC_HAS_PROCESS(RotationSender);
    SC_THREAD(run);
  }
  ::tlm::tlm_response_status send(int src, int dst, uint64_t size, int shift, sc_core::sc_time& delay,
                                  int rotations = 1) {
    tlm::PayloadRef payload(pool);
    payload.op().kind = tlm::OpKind::kSend;
    payload.op().bytes = size;
    payload.op().srcChip = src;
    payload.op().dstChip = dst;
    if (shift > 0) {
      payload.op().rotation = &chips;
      payload.op().rotationShift = shift;
      payload.op().rotations = static_cast<uint32_t>(rotations);
    }
    payload->set_command(::tlm::TLM_WRITE_COMMAND);
    payload->set_response_status(::tlm::TLM_INCOMPLETE_RESPONSE);
    sockets[static_cast<std::size_t>(src)]->b_transport(*payload, delay);
    return payload->get_response_status();
  }
  void run() {
    if (preloadSrc >= 0) {
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      statuses.push_back(send(preloadSrc, preloadDst, 3 * bytes, 0, d));
    }
    const int n = static_cast<int>(chips.size());
    if (asRotation && batched) {
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      statuses.push_back(send(0, batchShift, bytes, batchShift, d, n - 1));
      blockEnds.push_back(d);
      return;
    }
    for (int k = 1; k < n; ++k) {
      sc_core::sc_time latest = sc_core::SC_ZERO_TIME;
      for (int i = 0; i < (asRotation ? 1 : n); ++i) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        statuses.push_back(send(i, (i + k) % n, bytes, asRotation ? k : 0, d));
        latest = std::max(latest, d);
      }
      blockEnds.push_back(latest);
    }
  }
  tlm::PayloadPool pool;
};

/// Every network activity event, for exact comparison: each chip's link events in order, and
/// the switch's own events summed per (activity, interval) (an alike rotation emits them once for
/// its n messages; the amounts are integers, so the sums are exact).
struct ActivityLog : tlm::ActivityListener {
  std::vector<std::tuple<int, double, double, double, int, int, int>> links;
  std::map<std::tuple<int, double, double>, double> switchTotals;
  std::size_t switchEvents = 0;
  void onActivity(const tlm::ActivityEvent& e) override {
    if (e.chip >= 0) {
      links.emplace_back(static_cast<int>(e.activity), e.amount, e.start.to_seconds(), e.time.to_seconds(), e.chip,
                         e.srcChip, e.dstChip);
      return;
    }
    switchTotals[{static_cast<int>(e.activity), e.start.to_seconds(), e.time.to_seconds()}] += e.amount;
    ++switchEvents;
  }
};

void expectSameFabric(Fabric& a, Fabric& b, int chips) {
  for (const char* stat : {"messages", "bytes", "packets", "output_queue_time", "credit_stall_time"}) {
    EXPECT_EQ(a.fabric.stats().value(stat), b.fabric.stats().value(stat)) << stat;
  }
  for (int c = 0; c < chips; ++c) {
    for (const char* dir : {"tx", "rx"}) {
      for (const char* stat : {"messages", "bytes", "wire_bytes", "packets", "busy_time", "queue_time", "stall_time"}) {
        const std::string name = std::string(dir) + "_" + stat;
        EXPECT_EQ(a.port(c).stats().value(name), b.port(c).stats().value(name)) << "chip " << c << " " << name;
      }
    }
  }
}

/// A credit-flow fabric of `chips` chips whose activity goes to `log`, and a RotationSender bound
/// to its ports (named NAME_switch, NAME_port*, send_NAME).
struct RotationRig {
  Fabric net;
  ActivityLog log;
  tlm::ActivityBus bus;
  RotationSender sender;
  RotationRig(const std::string& name, int chips, uint64_t bytes, bool asRotation)
      : net(name, chips, fabricSwitch(FlowControl::kCredit)),
        sender(("send_" + name).c_str(), chips, bytes, asRotation) {
    bus.subscribe(log);
    net.fabric.attachActivity(bus);
    for (int c = 0; c < chips; ++c) sender.sockets[static_cast<std::size_t>(c)].bind(net.port(c).fromChip);
  }
  /// First one message chip 2 -> chip 4, which leaves those ports unlike the others.
  void preload() {
    sender.preloadSrc = 2;
    sender.preloadDst = 4;
  }
};

// A mirrored group's collective block sent as one rotation transaction is served as the n
// messages it stands for: the same completion times, port and switch statistics and activity,
// event for event, as sending them one by one; timed once when the ports are alike, one by one
// when a message sent before left some ports busier.
TEST(NetworkScenario, RotationIsServedExactlyAsItsMessagesOneByOne) {
  test::claimElaboration();
  constexpr int kChips = 6;
  const uint64_t bytes = 600 << 10;  // beyond the 256 KiB credit window: flow control engaged
  RotationRig rotA("rot_alike", kChips, bytes, true);
  RotationRig oneA("one_alike", kChips, bytes, false);
  RotationRig rotU("rot_unlike", kChips, bytes, true);
  RotationRig oneU("one_unlike", kChips, bytes, false);
  rotU.preload();
  oneU.preload();
  sc_core::sc_start();

  for (const RotationRig* r : {&rotA, &oneA, &rotU, &oneU}) {
    for (const auto status : r->sender.statuses) EXPECT_EQ(status, ::tlm::TLM_OK_RESPONSE);
  }
  ASSERT_EQ(rotA.sender.blockEnds.size(), static_cast<std::size_t>(kChips - 1));
  EXPECT_EQ(rotA.sender.blockEnds, oneA.sender.blockEnds);
  EXPECT_EQ(rotU.sender.blockEnds, oneU.sender.blockEnds);
  EXPECT_NE(rotA.sender.blockEnds, rotU.sender.blockEnds) << "the preloaded message must change the timing";
  expectSameFabric(rotA.net, oneA.net, kChips);
  expectSameFabric(rotU.net, oneU.net, kChips);
  EXPECT_EQ(rotA.log.links, oneA.log.links);
  EXPECT_EQ(rotU.log.links, oneU.log.links);
  EXPECT_EQ(rotA.log.links.size(), 2u * kChips * (kChips - 1)) << "each message's two link events";
  EXPECT_EQ(rotA.log.switchTotals, oneA.log.switchTotals);
  EXPECT_EQ(rotU.log.switchTotals, oneU.log.switchTotals);
  // The alike rotations' switch events: one per kind and rotation, not one per message.
  EXPECT_EQ(rotA.log.switchEvents, 2u * (kChips - 1));
  EXPECT_EQ(oneA.log.switchEvents, 2u * kChips * (kChips - 1));
  EXPECT_DOUBLE_EQ(rotA.net.fabric.stats().value("messages"), kChips * (kChips - 1));
  EXPECT_DOUBLE_EQ(rotA.net.fabric.stats().value("rotations"), kChips - 1);
  EXPECT_DOUBLE_EQ(rotA.net.fabric.stats().value("symmetric_rotations"), kChips - 1);
  EXPECT_DOUBLE_EQ(rotU.net.fabric.stats().value("rotations"), kChips - 1);
  EXPECT_LT(rotU.net.fabric.stats().value("symmetric_rotations"), kChips - 1) << "unlike ports are routed one by one";
}

// A step's rotation blocks by consecutive shifts sent as one transaction (a direct all-reduce's
// rounds) are served exactly as the rotations one by one: the same statistics and activity, event
// for event, and the batch ends with the last of them; alike or not.
TEST(NetworkScenario, ABatchOfRotationsIsServedExactlyAsItsRotationsOneByOne) {
  test::claimElaboration();
  constexpr int kChips = 6;
  const uint64_t bytes = 600 << 10;
  RotationRig batchA("batch_alike", kChips, bytes, true);
  RotationRig rotA("rot_alike", kChips, bytes, true);
  RotationRig batchU("batch_unlike", kChips, bytes, true);
  RotationRig rotU("rot_unlike", kChips, bytes, true);
  batchA.sender.batched = batchU.sender.batched = true;
  batchU.preload();
  rotU.preload();
  sc_core::sc_start();

  for (const RotationRig* r : {&batchA, &rotA, &batchU, &rotU}) {
    for (const auto status : r->sender.statuses) EXPECT_EQ(status, ::tlm::TLM_OK_RESPONSE);
  }
  for (const auto& [batch, one] : {std::pair{&batchA, &rotA}, std::pair{&batchU, &rotU}}) {
    ASSERT_EQ(batch->sender.blockEnds.size(), 1u);
    EXPECT_EQ(batch->sender.blockEnds[0],
              *std::max_element(one->sender.blockEnds.begin(), one->sender.blockEnds.end()));
    expectSameFabric(batch->net, one->net, kChips);
    EXPECT_EQ(batch->log.links, one->log.links);
    EXPECT_EQ(batch->log.switchTotals, one->log.switchTotals);
    EXPECT_EQ(batch->log.switchEvents, one->log.switchEvents);
    for (const char* stat : {"rotations", "symmetric_rotations"}) {
      EXPECT_EQ(batch->net.fabric.stats().value(stat), one->net.fabric.stats().value(stat)) << stat;
    }
  }
  EXPECT_DOUBLE_EQ(batchA.net.fabric.stats().value("rotations"), kChips - 1);
}

// Link events go only to chips a listener uses (the power model leaves out mirrors): a listener
// of chip 0 alone gets that chip's send and receive of each rotation, nothing of the others.
TEST(NetworkScenario, ARotationSendsLinkEventsOnlyOfChipsAListenerUses) {
  test::claimElaboration();
  constexpr int kChips = 4;
  struct ChipZero : ActivityLog {
    bool usesChip(int chip) const override { return chip == 0; }
  } log;
  Fabric net("net", kChips, fabricSwitch(FlowControl::kCredit));
  tlm::ActivityBus bus;
  bus.subscribe(log);
  net.fabric.attachActivity(bus);
  RotationSender sender("sender", kChips, 64 << 10, true);
  for (int c = 0; c < kChips; ++c) sender.sockets[static_cast<std::size_t>(c)].bind(net.port(c).fromChip);
  sc_core::sc_start();
  EXPECT_EQ(log.links.size(), 2u * (kChips - 1)) << "chip 0's send and receive of each rotation";
  for (const auto& link : log.links) EXPECT_EQ(std::get<4>(link), 0);
  EXPECT_EQ(log.switchEvents, 2u * (kChips - 1)) << "the switch's own events are not a chip's";
}

// A batch whose shifts run past the group is refused (shifts 2 .. n over n chips).
TEST(NetworkScenario, ABatchOfRotationsBeyondTheGroupIsAnError) {
  test::claimElaboration();
  constexpr int kChips = 4;
  RotationRig rig("rig", kChips, 4096, true);
  rig.sender.batched = true;
  rig.sender.batchShift = 2;
  sc_core::sc_start();
  ASSERT_EQ(rig.sender.statuses.size(), 1u);
  EXPECT_EQ(rig.sender.statuses[0], ::tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_DOUBLE_EQ(rig.net.fabric.stats().value("messages"), 0.0);
}

}  // namespace
}  // namespace scoville::hw
