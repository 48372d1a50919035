// Collective schedules and network configuration: pure logic, no SystemC elaboration.
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "hw/network/Collective.h"
#include "hw/network/NetworkConfig.h"
#include "test/support/ConfigErrors.h"

namespace scoville::hw {
namespace {

struct Volume {
  std::vector<uint64_t> sent, received;
};

Volume volumeOf(const Schedule& s) {
  Volume v{std::vector<uint64_t>(static_cast<std::size_t>(s.chips), 0),
           std::vector<uint64_t>(static_cast<std::size_t>(s.chips), 0)};
  for (const auto& step : s.steps) {
    for (const Send& send : step) {
      EXPECT_NE(send.src, send.dst);
      EXPECT_GE(send.src, 0);
      EXPECT_LT(send.dst, s.chips);
      v.sent[static_cast<std::size_t>(send.src)] += send.bytes;
      v.received[static_cast<std::size_t>(send.dst)] += send.bytes;
    }
  }
  return v;
}

TEST(NetworkSchedule, RingAllReduceIsTwoNMinusOneStepsOfBOverN) {
  const int n = 8;
  const uint64_t b = 8 << 20;
  const Schedule s = expandCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, n, b);
  ASSERT_EQ(s.steps.size(), 2u * (n - 1));
  for (const auto& step : s.steps) {
    ASSERT_EQ(step.size(), static_cast<std::size_t>(n));
    for (const Send& send : step) {
      EXPECT_EQ(send.dst, (send.src + 1) % n);
      EXPECT_EQ(send.bytes, b / n);
    }
  }
  const Volume v = volumeOf(s);
  for (int c = 0; c < n; ++c) {
    EXPECT_EQ(v.sent[static_cast<std::size_t>(c)], 2 * (n - 1) * b / n);
    EXPECT_EQ(v.received[static_cast<std::size_t>(c)], 2 * (n - 1) * b / n);
  }
}

TEST(NetworkSchedule, RingAllGatherAndReduceScatterAreNMinusOneStepsOfBOverN) {
  const int n = 6;
  const uint64_t b = 6000;
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const Schedule s = expandCollective(kind, CollectiveAlgorithm::kRing, n, b);
    ASSERT_EQ(s.steps.size(), static_cast<std::size_t>(n - 1)) << collectiveKindName(kind);
    for (const auto& step : s.steps) {
      for (const Send& send : step) EXPECT_EQ(send.bytes, b / n);
    }
    const Volume v = volumeOf(s);
    for (int c = 0; c < n; ++c) EXPECT_EQ(v.received[static_cast<std::size_t>(c)], (n - 1) * b / n);
  }
}

TEST(NetworkSchedule, UnevenBuffersMoveExactlyTheTextbookTotal) {
  const int n = 7;
  const uint64_t b = 1000003;  // not a multiple of 7
  const Volume ar = volumeOf(expandCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, n, b));
  uint64_t total = 0;
  for (uint64_t x : ar.sent) total += x;
  EXPECT_EQ(total, 2 * (n - 1) * b);  // every chip's chunks pass n - 1 links twice
  const Volume ag = volumeOf(expandCollective(CollectiveKind::kAllGather, CollectiveAlgorithm::kDirect, n, b));
  for (int c = 0; c < n; ++c) {
    // Every chip receives the whole gathered buffer except its own chunk.
    const uint64_t own = b / n + (static_cast<uint64_t>(c) < b % n ? 1 : 0);
    EXPECT_EQ(ag.received[static_cast<std::size_t>(c)], b - own);
  }
}

TEST(NetworkSchedule, DirectAllToAllIsOneStepWithNMinusOneSendsPerChipInRotatedOrder) {
  const int n = 8;
  const uint64_t b = 1 << 20;
  const Schedule s = expandCollective(CollectiveKind::kAllToAll, CollectiveAlgorithm::kDirect, n, b);
  ASSERT_EQ(s.steps.size(), 1u);
  ASSERT_EQ(s.steps[0].size(), static_cast<std::size_t>(n * (n - 1)));
  std::vector<int> count(n, 0);
  for (std::size_t i = 0; i < s.steps[0].size(); ++i) {
    const Send& send = s.steps[0][i];
    EXPECT_EQ(send.bytes, b / n);
    // The k-th send of every chip goes k + 1 chips ahead: each issue slot is a permutation.
    EXPECT_EQ(send.dst, (send.src + 1 + count[static_cast<std::size_t>(send.src)]) % n);
    ++count[static_cast<std::size_t>(send.src)];
  }
  const Volume v = volumeOf(s);
  for (int c = 0; c < n; ++c) {
    EXPECT_EQ(v.sent[static_cast<std::size_t>(c)], (n - 1) * b / n);
    EXPECT_EQ(v.received[static_cast<std::size_t>(c)], (n - 1) * b / n);
  }
}

TEST(NetworkSchedule, DirectAllReduceSendsTheWholeBufferToEveryPeer) {
  const Schedule s = expandCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDirect, 4, 4096);
  ASSERT_EQ(s.steps.size(), 1u);
  const Volume v = volumeOf(s);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(v.received[static_cast<std::size_t>(c)], 3u * 4096);
}

TEST(NetworkSchedule, TreeAllReduceReducesToChipZeroThenBroadcasts) {
  const int n = 8;  // heap tree depths: 0 | 1,2 | 3..6 | 7
  const uint64_t b = 1 << 16;
  const Schedule s = expandCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kTree, n, b);
  ASSERT_EQ(s.steps.size(), 6u);  // 2 floor(log2 8)
  EXPECT_EQ(s.steps[0].size(), 1u);
  EXPECT_EQ(s.steps[1].size(), 4u);
  EXPECT_EQ(s.steps[2].size(), 2u);
  for (const Send& send : s.steps[2]) EXPECT_EQ(send.dst, 0);
  for (const Send& send : s.steps[3]) EXPECT_EQ(send.src, 0);
  const Volume v = volumeOf(s);
  for (int c = 1; c < n; ++c) {
    EXPECT_EQ(v.sent[static_cast<std::size_t>(c)] % b, 0u);
    EXPECT_GE(v.received[static_cast<std::size_t>(c)], b) << "every chip receives the result";
  }
  EXPECT_EQ(v.received[0], 2 * b);  // the root's two children
  EXPECT_EQ(v.sent[0], 2 * b);
}

TEST(NetworkSchedule, OneChipIsAnEmptySchedule) {
  EXPECT_TRUE(expandCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, 1, 64).steps.empty());
}

TEST(NetworkSchedule, UnsupportedCombinationsAreRejectedByName) {
  try {
    expandCollective(CollectiveKind::kAllToAll, CollectiveAlgorithm::kRing, 4, 4096);
    FAIL() << "all_to_all ring accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("all_to_all does not support algorithm ring"), std::string::npos) << e.what();
  }
  EXPECT_THROW(expandCollective(CollectiveKind::kAllGather, CollectiveAlgorithm::kTree, 4, 4096),
               std::invalid_argument);
  EXPECT_THROW(expandCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, 0, 4096),
               std::invalid_argument);
  EXPECT_THROW(expandCollective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, 8, 7), std::invalid_argument);
}

/// The message of the ConfigError `parse` throws; fails the test if it does not throw one.
template <class F>
std::string configError(F parse) {
  const std::optional<config::ConfigError> e = test::configErrorOf(parse);
  return e ? e->what() : "";
}

CollectiveConfig parseCollective(const std::string& yaml) {
  return CollectiveConfig::schema().parse(config::loadConfigText("collective", yaml, "t.yaml"));
}

TEST(NetworkSchedule, CollectiveParsesFromYamlNames) {
  const CollectiveConfig c = parseCollective("{op: reduce_scatter, algorithm: direct, bytes_per_chip: 64 MiB}");
  EXPECT_EQ(c.kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::kDirect);
  EXPECT_DOUBLE_EQ(c.bytesPerChip, 64.0 * 1024 * 1024);
  EXPECT_EQ(c.expand(4).steps.size(), 1u);
  EXPECT_EQ(parseCollective("{op: all_reduce, algorithm: tree, bytes_per_chip: 1 MiB}").algorithm,
            CollectiveAlgorithm::kTree);
  EXPECT_NE(configError([] {
              parseCollective("{op: all_to_all, algorithm: tree, bytes_per_chip: 1 MiB}");
            }).find("all_to_all supports only direct"),
            std::string::npos);
  EXPECT_NE(
      configError([] { parseCollective("{op: broadcast, algorithm: ring, bytes_per_chip: 1 MiB}"); }).find("broadcast"),
      std::string::npos);
}

TEST(NetworkSchedule, NetworkConfigParsesUnitsAndChecksTheBuffer) {
  auto parse = [](const std::string& buffer, const std::string& header = "header: 64 B") {
    const std::string text = "link: {bandwidth: 100 GB/s, latency: 250 ns, mtu: 4 KiB, " + header +
                             "}\nswitch: {ports: 16, hop_latency: 100 ns, input_buffer: " + buffer +
                             ", flow_control: output_queued}\n";
    return NetworkConfig::schema().parse(config::loadConfigText("network", text, "t.yaml"));
  };
  const NetworkConfig c = parse("256 KiB");
  EXPECT_DOUBLE_EQ(c.link.bandwidthBytesPerS, 100e9);
  EXPECT_DOUBLE_EQ(c.link.latencyS, 250e-9);
  EXPECT_DOUBLE_EQ(c.link.mtuBytes, 4096.0);
  EXPECT_DOUBLE_EQ(c.link.headerBytes, 64.0);
  EXPECT_EQ(c.fabricSwitch.ports, 16);
  EXPECT_DOUBLE_EQ(c.fabricSwitch.hopLatencyS, 100e-9);
  EXPECT_EQ(c.fabricSwitch.flowControl, FlowControl::kOutputQueued);
  EXPECT_DOUBLE_EQ(c.fabricSwitch.inputBufferBytes, 256.0 * 1024);
  // One 4 KiB packet plus its 64 B header does not fit in 4 KiB.
  EXPECT_NE(configError([&] { parse("4 KiB"); }).find("at least one full packet"), std::string::npos);
  EXPECT_NE(configError([&] { parse("256 KiB", "hdr: 64 B"); }).find("header"), std::string::npos);
}

TEST(NetworkSchedule, PacketisationCountsOneHeaderPerMtu) {
  LinkConfig link;
  link.mtuBytes = 4096;
  link.headerBytes = 64;
  EXPECT_EQ(link.packetsFor(1), 1u);
  EXPECT_EQ(link.packetsFor(4096), 1u);
  EXPECT_EQ(link.packetsFor(4097), 2u);
  EXPECT_EQ(link.wireBytesFor(10000), 10000u + 3 * 64);
  EXPECT_EQ(link.largestPacketFor(100), 164u);
  EXPECT_EQ(link.largestPacketFor(1 << 20), 4160u);
}

}  // namespace
}  // namespace scoville::hw
