// HBM controller scenarios on the shipped jalapeno HBM configuration, one SystemC elaboration per
// test (one process per test under ctest). Closed-form expectations from the DRAM parameters.
#include <gtest/gtest.h>

#include "hw/chip/Chip.h"
#include "hw/dram/MemoryController.h"
#include "test/support/Elaboration.h"
#include "test/support/Shipped.h"
#include "test/support/TrafficGenerator.h"
#include "tlm/ProtocolChecker.h"

namespace scoville::hw {
namespace {

using test::memoryRequest;
using test::TrafficGenerator;

std::vector<TrafficGenerator::Request> stream(uint64_t base, uint64_t bytes, uint64_t requestBytes) {
  std::vector<TrafficGenerator::Request> requests;
  for (uint64_t offset = 0; offset < bytes; offset += requestBytes) {
    requests.push_back(memoryRequest(tlm::OpKind::kRead, base + offset, requestBytes));
  }
  return requests;
}

double streamEfficiency(tlm::TimingMode mode) {
  const MemoryControllerConfig config = test::shippedPlatform("jalapeno").chipConfig(0).hbm;
  MemoryController mc("hbm", config);
  const uint64_t bytes = 1ull << 30;
  TrafficGenerator gen("gen", stream(0, bytes, 64ull << 20), mode);
  gen.bind(mc.socket);
  sc_core::sc_start();
  for (const auto& c : gen.completions()) EXPECT_EQ(c.status, ::tlm::TLM_OK_RESPONSE);
  EXPECT_DOUBLE_EQ(mc.stats().value("bytes_read"), static_cast<double>(bytes));
  const double t = gen.lastEnd().to_seconds();
  EXPECT_GE(t, bytes / config.bandwidthBytesPerS) << "never faster than the data bus";
  EXPECT_LE(t, bytes / (0.8 * config.bandwidthBytesPerS));
  // Refresh costs t_rfc / t_refi = 9% of the time; activations hide behind bank parallelism.
  EXPECT_GT(mc.stats().value("refreshes"), 0.0);
  // Every page is opened once; a page split between two requests' parts is visited twice.
  const double visits =
      mc.stats().value("row_hits") + mc.stats().value("row_misses") + mc.stats().value("row_conflicts");
  EXPECT_GE(visits, bytes / config.rowBytes);
  EXPECT_LE(visits, 1.01 * bytes / config.rowBytes);
  return bytes / config.bandwidthBytesPerS / t;
}

TEST(HbmScenario, LongStreamReachesAboutNinetyPercentOfPeakLooselyTimed) {
  test::claimElaboration();
  const double efficiency = streamEfficiency(tlm::TimingMode::kLooselyTimed);
  EXPECT_GT(efficiency, 0.85);
  EXPECT_LT(efficiency, 0.95);
  RecordProperty("stream_efficiency", std::to_string(efficiency));
}

TEST(HbmScenario, LongStreamReachesAboutNinetyPercentOfPeakApproximatelyTimed) {
  test::claimElaboration();
  const double efficiency = streamEfficiency(tlm::TimingMode::kApproximatelyTimed);
  EXPECT_GT(efficiency, 0.85);
  EXPECT_LT(efficiency, 0.95);
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
  EXPECT_GT(tlm::ProtocolChecker::checkedTransactions(), 0u);
}

TEST(HbmScenario, ScatteredSmallReadsAreSlowerPerByteThanStreaming) {
  test::claimElaboration();
  const MemoryControllerConfig config = test::shippedPlatform("jalapeno").chipConfig(0).hbm;
  MemoryController mc("hbm", config);
  std::vector<TrafficGenerator::Request> scattered;
  uint64_t address = 12345;
  for (int i = 0; i < 4096; ++i) {
    address = (address * 2862933555777941757ull + 3037000493ull) % (1ull << 36);
    scattered.push_back(memoryRequest(tlm::OpKind::kRead, address / 64 * 64, 64));
  }
  TrafficGenerator gen("gen", scattered);
  gen.bind(mc.socket);
  sc_core::sc_start();
  const double perByte = gen.lastEnd().to_seconds() / (4096.0 * 64);
  EXPECT_GT(perByte, 100.0 / config.bandwidthBytesPerS) << "each dependent 64-B read pays ACT + CAS latency";
  // At least controller latency + tRCD + tCL per read.
  const double minimum = config.controllerLatencyS + config.timing.tRCD + config.timing.tCL;
  EXPECT_GE(gen.lastEnd().to_seconds(), 4096 * minimum);
  EXPECT_GT(mc.stats().value("row_misses") + mc.stats().value("row_conflicts"), 4000.0);
}

TEST(HbmScenario, TwoConcurrentStreamsEachGetAboutHalf) {
  test::claimElaboration();
  const ChipConfig config = test::shippedPlatform("jalapeno").chipConfig(0);
  Chip chip("chip", config);
  const uint64_t bytes = 512ull << 20;
  TrafficGenerator a("a", stream(0, bytes, 32ull << 20));
  TrafficGenerator b("b", stream(64ull << 30, bytes, 32ull << 20));
  a.bind(chip.socket());
  b.bind(chip.socket());
  sc_core::sc_start();
  const double alone = bytes / (0.9 * config.hbm.bandwidthBytesPerS);
  EXPECT_NEAR(a.lastEnd().to_seconds() / alone, 2.0, 0.2);
  EXPECT_NEAR(b.lastEnd().to_seconds() / alone, 2.0, 0.2);
}

// Same traffic, two controllers in one elaboration, FCFS vs FR-FCFS: eight requesters read 64-byte
// words from four rows of one bank, two requesters per row. FCFS serves them in arrival order, a
// row conflict each time; FR-FCFS serves a queued request to the open row first.
TEST(HbmScenario, FrFcfsFindsMoreRowHitsThanFcfsUnderContention) {
  test::claimElaboration();
  MemoryControllerConfig config = test::shippedPlatform("jalapeno").chipConfig(0).hbm;
  config.channels = 1;
  config.lockstepChannels = 1;
  config.bandwidthBytesPerS = 64e9;
  config.scheduler = "fcfs";
  MemoryController fcfs("fcfs", config);
  config.scheduler = "frfcfs";
  MemoryController frfcfs("frfcfs", config);
  const auto rowStride = static_cast<uint64_t>(config.rowBytes) * config.banks();  // next row, same bank
  std::vector<std::unique_ptr<TrafficGenerator>> generators;
  for (int g = 0; g < 16; ++g) {
    std::vector<TrafficGenerator::Request> walk;
    for (uint64_t word = 0; word < 16; ++word) {
      walk.push_back(memoryRequest(tlm::OpKind::kRead, (g % 4) * rowStride + word * 64, 64));
    }
    generators.push_back(std::make_unique<TrafficGenerator>(("gen" + std::to_string(g)).c_str(), walk,
                                                            tlm::TimingMode::kApproximatelyTimed));
  }
  struct Fan : sc_core::sc_module {
    tlm_utils::multi_passthrough_target_socket<Fan> in{"in"};
    tlm_utils::simple_initiator_socket<Fan> out{"out"};
    explicit Fan(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
      in.register_nb_transport_fw(this, &Fan::fw);
      out.register_nb_transport_bw(this, &Fan::bw);
    }
    std::map<const ::tlm::tlm_generic_payload*, int> from;
    ::tlm::tlm_sync_enum fw(int id, ::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& ph, sc_core::sc_time& d) {
      from[&p] = id;
      return out->nb_transport_fw(p, ph, d);
    }
    ::tlm::tlm_sync_enum bw(::tlm::tlm_generic_payload& p, ::tlm::tlm_phase& ph, sc_core::sc_time& d) {
      return in[from[&p]]->nb_transport_bw(p, ph, d);
    }
  };
  Fan toFcfs("to_fcfs");
  Fan toFrFcfs("to_frfcfs");
  toFcfs.out.bind(fcfs.socket);
  toFrFcfs.out.bind(frfcfs.socket);
  for (int g = 0; g < 16; ++g) generators[static_cast<std::size_t>(g)]->bind(g < 8 ? toFcfs.in : toFrFcfs.in);
  // Generators 8..15 replay 0..7's traffic on the FR-FCFS controller.
  sc_core::sc_start();
  EXPECT_GT(frfcfs.stats().value("row_hits"), fcfs.stats().value("row_hits"));
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
}

// Uncontended traffic must time the same in both modes (the brief allows 5%): one controller per
// mode in one elaboration, the same mix of streams, small reads and writes.
TEST(HbmScenario, LooselyAndApproximatelyTimedAgreeOnUncontendedTraffic) {
  test::claimElaboration();
  const MemoryControllerConfig config = test::shippedPlatform("jalapeno").chipConfig(0).hbm;
  MemoryController lt("lt", config);
  MemoryController at("at", config);
  std::vector<TrafficGenerator::Request> mix = stream(0, 256ull << 20, 8ull << 20);
  for (uint64_t i = 0; i < 200; ++i) {
    mix.push_back(memoryRequest(i % 3 == 0 ? tlm::OpKind::kWrite : tlm::OpKind::kRead, (i * 7919 * 4096) % (1ull << 34),
                                64 << (i % 8)));
  }
  TrafficGenerator viaLt("via_lt", mix, tlm::TimingMode::kLooselyTimed);
  TrafficGenerator viaAt("via_at", mix, tlm::TimingMode::kApproximatelyTimed);
  viaLt.bind(lt.socket);
  viaAt.bind(at.socket);
  sc_core::sc_start();
  ASSERT_EQ(viaLt.completions().size(), viaAt.completions().size());
  EXPECT_NEAR(viaAt.lastEnd().to_seconds() / viaLt.lastEnd().to_seconds(), 1.0, 0.05);
  EXPECT_EQ(lt.stats().value("activates"), at.stats().value("activates"));
  EXPECT_EQ(tlm::ProtocolChecker::violations(), 0u);
}

TEST(HbmScenario, AccessBeyondCapacityIsAnAddressError) {
  test::claimElaboration();
  MemoryControllerConfig config = test::shippedPlatform("jalapeno").chipConfig(0).hbm;
  config.capacityBytes = 1 << 20;
  MemoryController mc("hbm", config);
  TrafficGenerator gen("gen", {memoryRequest(tlm::OpKind::kRead, (1 << 20) - 64, 128)});
  gen.bind(mc.socket);
  sc_core::sc_start();
  ASSERT_EQ(gen.completions().size(), 1u);
  EXPECT_EQ(gen.completions()[0].status, ::tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

}  // namespace
}  // namespace scoville::hw
