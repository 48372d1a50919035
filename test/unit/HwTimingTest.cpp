// Pure timing functions of the hardware models: closed-form expectations, no simulation.
#include <gtest/gtest.h>
#include <numeric>

#include "hw/MemoryController.h"
#include "hw/TensorCore.h"
#include "tlm/config/Loader.h"

namespace scoville::hw {
namespace {

TensorCoreConfig arrays(int count, int rows, int cols) {
  TensorCoreConfig c;
  c.count = count;
  c.clockHz = 1e9;
  c.arrayRows = rows;
  c.arrayCols = cols;
  c.macsPerCell = MacRates{0.0, 1.0, 2.0, 4.0};
  c.pipelineLatencyCycles = 10;
  c.operandBuffers = 2;
  return c;
}

double seconds(const TensorCoreConfig& c, const tlm::GemmShape& s, tlm::Precision p) {
  return static_cast<double>(TensorCore::gemmCycles(c, s, p)) / c.clockHz;
}

TEST(TensorCoreTiming, NoGemmBeatsPeak) {
  const TensorCoreConfig c = arrays(4, 128, 128);
  for (uint64_t m : {1u, 7u, 64u, 128u, 1000u, 8192u}) {
    for (uint64_t n : {1u, 100u, 128u, 4096u}) {
      for (uint64_t k : {1u, 129u, 2880u}) {
        for (tlm::Precision p : {tlm::Precision::kBf16, tlm::Precision::kFp8, tlm::Precision::kFp4}) {
          const tlm::GemmShape s{m, n, k, 3};
          EXPECT_GE(seconds(c, s, p), s.flops() / c.peakFlops(p)) << m << "x" << n << "x" << k;
        }
      }
    }
  }
}

TEST(TensorCoreTiming, LargeGemmReachesPeakAndGemvUsesOneRowInRows) {
  const TensorCoreConfig c = arrays(4, 128, 128);
  const tlm::GemmShape large{8192, 8192, 8192, 1};
  const double largeEfficiency =
      large.flops() / c.peakFlops(tlm::Precision::kBf16) / seconds(c, large, tlm::Precision::kBf16);
  EXPECT_GE(largeEfficiency, 0.85);
  EXPECT_LE(largeEfficiency, 1.0);

  // A decode GEMV streams one activation row per weight tile, so the array waits on tile loads.
  const tlm::GemmShape gemv{1, 8192, 8192, 1};
  const double gemvEfficiency =
      gemv.flops() / c.peakFlops(tlm::Precision::kBf16) / seconds(c, gemv, tlm::Precision::kBf16);
  EXPECT_NEAR(gemvEfficiency, 1.0 / 128, 0.2 / 128);
  const tlm::GemmShape gemv8{8, 8192, 8192, 1};
  EXPECT_DOUBLE_EQ(seconds(c, gemv8, tlm::Precision::kBf16), seconds(c, gemv, tlm::Precision::kBf16))
      << "M = 1..rows costs the same tile-load time";
}

TEST(TensorCoreTiming, SingleBufferingSerialisesTileLoads) {
  TensorCoreConfig c = arrays(1, 128, 128);
  const tlm::GemmShape s{512, 1024, 1024, 1};
  const uint64_t doubled = TensorCore::gemmCycles(c, s, tlm::Precision::kBf16);
  c.operandBuffers = 1;
  const uint64_t single = TensorCore::gemmCycles(c, s, tlm::Precision::kBf16);
  EXPECT_EQ(single - doubled, 8u * 8u * 128u) << "each of the 64 tiles pays its 128 load cycles";
}

TEST(TensorCoreTiming, UnsupportedPrecisionOrEmptyShapeHasNoTiming) {
  const TensorCoreConfig c = arrays(1, 16, 16);
  EXPECT_EQ(TensorCore::gemmCycles(c, {4, 4, 4, 1}, tlm::Precision::kFp32), 0u);
  EXPECT_EQ(TensorCore::gemmCycles(c, {0, 4, 4, 1}, tlm::Precision::kBf16), 0u);
}

TEST(TensorCoreTiming, FewTilesLeaveArraysIdle) {
  const TensorCoreConfig c = arrays(32, 128, 128);
  // One tile of work: 31 of 32 arrays idle, so the time equals that of a single array.
  const tlm::GemmShape oneTile{128, 128, 128, 1};
  EXPECT_EQ(TensorCore::gemmCycles(c, oneTile, tlm::Precision::kBf16),
            TensorCore::gemmCycles(arrays(1, 128, 128), oneTile, tlm::Precision::kBf16));
}

MemoryControllerConfig hbm(int channels, double interleave) {
  MemoryControllerConfig c;
  c.capacityBytes = 1e12;
  c.bandwidthBytesPerS = 1e12;
  c.channels = channels;
  c.interleaveBytes = interleave;
  c.accessLatencyS = 100e-9;
  return c;
}

TEST(MemoryInterleaving, SplitCoversEveryByteOnceAndBalancesStreams) {
  const MemoryControllerConfig c = hbm(8, 256);
  std::vector<uint64_t> perChannel;
  for (uint64_t address : {0ull, 100ull, 256ull, 1000ull, 4095ull}) {
    for (uint64_t bytes : {1ull, 64ull, 256ull, 300ull, 2048ull, 1000000ull}) {
      MemoryController::splitAcrossChannels(c, address, bytes, perChannel);
      ASSERT_EQ(perChannel.size(), 8u);
      EXPECT_EQ(std::accumulate(perChannel.begin(), perChannel.end(), 0ull), bytes) << address << "+" << bytes;
      // Brute force: granule by granule.
      std::vector<uint64_t> expected(8, 0);
      for (uint64_t b = address; b < address + bytes;) {
        const uint64_t granuleEnd = (b / 256 + 1) * 256;
        const uint64_t take = std::min(granuleEnd, address + bytes) - b;
        expected[(b / 256) % 8] += take;
        b += take;
      }
      EXPECT_EQ(perChannel, expected) << address << "+" << bytes;
    }
  }
  MemoryController::splitAcrossChannels(c, 0, 8 * 256 * 1000, perChannel);
  for (uint64_t bytes : perChannel) EXPECT_EQ(bytes, 256u * 1000u);
}

}  // namespace
}  // namespace scoville::hw
