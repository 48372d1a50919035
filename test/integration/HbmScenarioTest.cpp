// HBM controller scenarios, one SystemC elaboration per test (one process per test under ctest).
#include <gtest/gtest.h>

#include "hw/MemoryController.h"
#include "test/support/Elaboration.h"
#include "test/support/TrafficGenerator.h"

namespace scoville::hw {
namespace {

using test::memoryRequest;
using test::TrafficGenerator;

MemoryControllerConfig hbm() {
  MemoryControllerConfig c;
  c.capacityBytes = 64e9;
  c.bandwidthBytesPerS = 4e12;
  c.channels = 32;
  c.interleaveBytes = 256;
  c.accessLatencyS = 100e-9;
  return c;
}

TEST(HbmScenario, LongStreamRunsBetweenPeakAndEightyPercentOfPeak) {
  test::claimElaboration();
  const MemoryControllerConfig config = hbm();
  MemoryController mc("hbm", config);
  const uint64_t bytes = 1ull << 30;
  std::vector<TrafficGenerator::Request> stream;
  for (uint64_t offset = 0; offset < bytes; offset += 4 << 20) {
    stream.push_back(memoryRequest(tlm::OpKind::kRead, offset, 4 << 20));
  }
  TrafficGenerator gen("gen", stream);
  gen.socket.bind(mc.socket);
  sc_core::sc_start();
  const double t = gen.lastEnd().to_seconds();
  EXPECT_GE(t, bytes / config.bandwidthBytesPerS);
  EXPECT_LE(t, bytes / (0.8 * config.bandwidthBytesPerS));
  for (const auto& c : gen.completions()) EXPECT_EQ(c.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_DOUBLE_EQ(mc.stats().value("bytes_read"), static_cast<double>(bytes));
}

TEST(HbmScenario, SmallScatteredReadsAreSlowerPerByteThanStreaming) {
  test::claimElaboration();
  const MemoryControllerConfig config = hbm();
  MemoryController mc("hbm", config);
  std::vector<TrafficGenerator::Request> scattered;
  uint64_t address = 12345;
  for (int i = 0; i < 4096; ++i) {
    address = (address * 2862933555777941757ull + 3037000493ull) % (1ull << 34);
    scattered.push_back(memoryRequest(tlm::OpKind::kRead, address / 64 * 64, 64));
  }
  TrafficGenerator gen("gen", scattered);
  gen.socket.bind(mc.socket);
  sc_core::sc_start();
  const double perByte = gen.lastEnd().to_seconds() / (4096.0 * 64);
  EXPECT_GT(perByte, 10.0 / config.bandwidthBytesPerS) << "dependent 64-B reads pay the access latency each";
}

TEST(HbmScenario, TwoConcurrentStreamsEachGetAboutHalf) {
  test::claimElaboration();
  const MemoryControllerConfig config = hbm();
  MemoryController mc("hbm", config);
  const uint64_t bytes = 256ull << 20;
  auto streamAt = [&](uint64_t base) {
    std::vector<TrafficGenerator::Request> s;
    for (uint64_t offset = 0; offset < bytes; offset += 1 << 20) {
      s.push_back(memoryRequest(tlm::OpKind::kRead, base + offset, 1 << 20));
    }
    return s;
  };
  TrafficGenerator a("a", streamAt(0));
  TrafficGenerator b("b", streamAt(8ull << 30));
  test::FanIn fan("fan");
  a.socket.bind(fan.in0);
  b.socket.bind(fan.in1);
  fan.out.bind(mc.socket);
  sc_core::sc_start();
  const double alone = bytes / config.bandwidthBytesPerS;
  EXPECT_NEAR(a.lastEnd().to_seconds() / alone, 2.0, 0.2);
  EXPECT_NEAR(b.lastEnd().to_seconds() / alone, 2.0, 0.2);
}

TEST(HbmScenario, AccessBeyondCapacityIsAnAddressError) {
  test::claimElaboration();
  MemoryControllerConfig config = hbm();
  config.capacityBytes = 1 << 20;
  MemoryController mc("hbm", config);
  TrafficGenerator gen("gen", {memoryRequest(tlm::OpKind::kRead, (1 << 20) - 64, 128)});
  gen.socket.bind(mc.socket);
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 1u);
  EXPECT_EQ(gen.completions()[0].status, ::tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

}  // namespace
}  // namespace scoville::hw
