// Pure timing functions of the hardware models: closed-form expectations, no simulation.
#include <gtest/gtest.h>
#include <numeric>
#include <random>

#include "config/Loader.h"
#include "hw/TensorCore.h"
#include "hw/dram/DramChannel.h"
#include "hw/dram/MemoryController.h"

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
  return static_cast<double>(c.gemmCycles(s, p)) / c.clockHz;
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
  const uint64_t doubled = c.gemmCycles(s, tlm::Precision::kBf16);
  c.operandBuffers = 1;
  const uint64_t single = c.gemmCycles(s, tlm::Precision::kBf16);
  EXPECT_EQ(single - doubled, 8u * 8u * 128u) << "each of the 64 tiles pays its 128 load cycles";
}

TEST(TensorCoreTiming, UnsupportedPrecisionOrEmptyShapeHasNoTiming) {
  const TensorCoreConfig c = arrays(1, 16, 16);
  EXPECT_EQ(c.gemmCycles({4, 4, 4, 1}, tlm::Precision::kFp32), 0u);
  EXPECT_EQ(c.gemmCycles({0, 4, 4, 1}, tlm::Precision::kBf16), 0u);
}

TEST(TensorCoreTiming, FewTilesLeaveArraysIdle) {
  const TensorCoreConfig c = arrays(32, 128, 128);
  // One tile of work: 31 of 32 arrays idle, so the time equals that of a single array.
  const tlm::GemmShape oneTile{128, 128, 128, 1};
  EXPECT_EQ(c.gemmCycles(oneTile, tlm::Precision::kBf16),
            arrays(1, 128, 128).gemmCycles(oneTile, tlm::Precision::kBf16));
}

MemoryControllerConfig hbm(int channels, double interleave) {
  MemoryControllerConfig c;
  c.capacityBytes = 1e12;
  c.bandwidthBytesPerS = 64e9 * channels;
  c.channels = channels;
  c.interleaveBytes = interleave;
  c.bankGroups = 4;
  c.banksPerGroup = 4;
  c.rowBytes = 1024;
  c.burstBytes = 64;
  c.controllerLatencyS = 0;
  c.scheduler = "frfcfs";
  c.timing = DramTimingConfig{14e-9, 14e-9, 18e-9, 33e-9, 2e-9, 4e-9, 16e-9, 8e-9, 4e-9, 3.9e-6, 350e-9};
  return c;
}

TEST(DramSegments, SplitCoversEveryByteOnceOnTheRightChannel) {
  const MemoryControllerConfig c = hbm(8, 256);
  std::vector<InterleavedSegment> segments;
  for (uint64_t address : {0ull, 100ull, 256ull, 1000ull, 4095ull}) {
    for (uint64_t bytes : {1ull, 64ull, 256ull, 300ull, 2048ull, 1000000ull}) {
      splitIntoSegments(c, address, bytes, false, segments);
      // Brute force: granule by granule, with the channel-local address of each byte.
      std::vector<uint64_t> perChannel(8, 0);
      std::vector<int64_t> firstLocal(8, -1);
      for (uint64_t b = address; b < address + bytes;) {
        const uint64_t granuleEnd = (b / 256 + 1) * 256;
        const uint64_t take = std::min(granuleEnd, address + bytes) - b;
        const uint64_t channel = (b / 256) % 8;
        if (firstLocal[channel] < 0) firstLocal[channel] = static_cast<int64_t>((b / 256 / 8) * 256 + b % 256);
        perChannel[channel] += take;
        b += take;
      }
      uint64_t total = 0;
      for (const InterleavedSegment& s : segments) {
        EXPECT_EQ(s.bytes, perChannel[static_cast<std::size_t>(s.channel)]) << address << "+" << bytes;
        EXPECT_EQ(static_cast<int64_t>(s.localAddress), firstLocal[static_cast<std::size_t>(s.channel)]);
        total += s.bytes;
      }
      EXPECT_EQ(total, bytes);
    }
  }
}

TEST(DramChannelTiming, ClosedRowThenHitThenConflict) {
  const MemoryControllerConfig c = hbm(1, 256);
  DramChannel channel(c, 0);
  DramCommandCounts counts;
  const double burst = 64 / c.channelBandwidth();
  const DramService first = channel.serve({0, 0, 64, false}, 0.0, counts);
  EXPECT_DOUBLE_EQ(first.end, c.timing.tRCD + c.timing.tCL + burst);
  EXPECT_EQ(counts.activates, 1);
  EXPECT_EQ(counts.rowMisses, 1);
  // Same row: no activation, CAS latency only.
  const DramService hit = channel.serve({0, 64, 64, false}, 1e-6, counts);
  EXPECT_DOUBLE_EQ(hit.end, 1e-6 + c.timing.tCL + burst);
  EXPECT_EQ(counts.rowHits, 1);
  // Same bank, next row (16 banks x 1 KiB further): precharge + activate.
  const DramService conflict = channel.serve({0, 16 * 1024, 64, false}, 2e-6, counts);
  EXPECT_DOUBLE_EQ(conflict.end, 2e-6 + c.timing.tRP + c.timing.tRCD + c.timing.tCL + burst);
  EXPECT_EQ(counts.rowConflicts, 1);
  EXPECT_EQ(counts.precharges, 1);
  EXPECT_EQ(counts.readBursts, 3);
}

TEST(DramChannelTiming, FourActivateWindowSpacesTheFifthActivation) {
  const MemoryControllerConfig c = hbm(1, 256);
  DramChannel channel(c, 0);
  DramCommandCounts counts;
  // Five 64-byte reads to five different banks, all arriving at t = 0.
  std::vector<DramService> done;
  for (uint64_t bank = 0; bank < 5; ++bank) done.push_back(channel.serve({0, bank * 1024, 64, false}, 0.0, counts));
  // The fifth ACT waits for tFAW after the first: its data cannot come before tFAW + tRCD + tCL.
  EXPECT_GE(done[4].end, c.timing.tFAW + c.timing.tRCD + c.timing.tCL);
  for (std::size_t i = 1; i < done.size(); ++i) EXPECT_GT(done[i].end, done[i - 1].end);
}

TEST(DramChannelTiming, LongStreamIsBusBoundLessRefresh) {
  const MemoryControllerConfig c = hbm(1, 256);
  DramChannel channel(c, 0);
  DramCommandCounts counts;
  const uint64_t bytes = 64ull << 20;
  const DramService s = channel.serve({0, 0, bytes, false}, 0.0, counts);
  const double busTime = bytes / c.channelBandwidth();
  EXPECT_GE(s.end, busTime);
  const double refreshes = std::floor(s.end / c.timing.tREFI);
  EXPECT_NEAR(counts.refreshes, refreshes, 1.0);
  EXPECT_NEAR(s.end, busTime + counts.refreshes * c.timing.tRFC + c.timing.tRCD + c.timing.tCL, 1e-9);
  EXPECT_EQ(counts.activates, static_cast<double>(bytes / 1024));
}

TEST(DramChannelTiming, RefreshesDueDuringAnIdleGapAreAllCountedAndCloseTheRows) {
  const MemoryControllerConfig c = hbm(1, 256);
  DramChannel channel(c, 0);
  DramCommandCounts counts;
  channel.serve({0, 0, 64, false}, 0.0, counts);
  const double later = 1e-3;
  const DramService s = channel.serve({0, 64, 64, false}, later, counts);
  EXPECT_EQ(counts.refreshes, std::floor((later - c.timing.tREFI) / c.timing.tREFI) + 1);
  EXPECT_EQ(counts.rowHits, 0) << "refresh closed the row the first read opened";
  EXPECT_GE(s.end, later + c.timing.tRCD + c.timing.tCL);
}

TEST(DramChannelTiming, TurnaroundSeparatesReadsFromWrites) {
  const MemoryControllerConfig c = hbm(1, 256);
  DramChannel channel(c, 0);
  DramCommandCounts counts;
  const DramService read = channel.serve({0, 0, 64, false}, 0.0, counts);
  const DramService write = channel.serve({0, 64, 64, true}, 0.0, counts);
  EXPECT_GE(write.firstData, read.end + c.timing.tRTW);
  EXPECT_EQ(counts.turnarounds, 1);
}

// The closed-form stream shortcut against the command-by-command schedule: random mixes of
// streams that continue where the last one ended, revisits, random addresses, reads and writes,
// back-to-back and idle arrivals, under timings where tFAW, tRRD_L or the banks' own tRAS + tRP
// bind (so the shortcut must hand pages back to the exact path).
TEST(DramChannelTiming, StreamShortcutGivesTheExactSchedule) {
  struct Variant {
    int groups;
    double tRas;
    double tFaw;
    double bandwidth;  ///< a fast bus leaves the activations on the critical path
  };
  for (const Variant v :
       {Variant{4, 33e-9, 16e-9, 64e9}, Variant{2, 33e-9, 30e-9, 64e9}, Variant{1, 33e-9, 16e-9, 64e9},
        Variant{4, 120e-9, 10e-9, 64e9}, Variant{4, 33e-9, 4e-9, 64e9}, Variant{4, 33e-9, 16e-9, 1e13},
        Variant{2, 33e-9, 30e-9, 1e13}, Variant{4, 120e-9, 10e-9, 1e13}}) {
    MemoryControllerConfig c = hbm(1, 256);
    c.bandwidthBytesPerS = v.bandwidth;
    c.bankGroups = v.groups;
    c.banksPerGroup = 16 / v.groups;
    c.timing.tRAS = v.tRas;
    c.timing.tFAW = v.tFaw;
    DramChannel shortcut(c, 0);
    DramChannel exact(c, 0);
    exact.setStreamShortcut(false);
    DramCommandCounts a;
    DramCommandCounts b;
    std::mt19937_64 rng(7);
    double arrival = 0.0;
    uint64_t next = 0;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t kind = rng() % 8;
      uint64_t address = next;
      if (kind == 0) address = (rng() % (1u << 24)) & ~uint64_t{63};  // anywhere
      if (kind == 1) address = next >= 4096 ? next - 4096 : 0;        // back into open rows
      const uint64_t bytes = 64 * (1 + rng() % (kind == 2 ? 4 : 512));
      const bool write = rng() % 10 == 0;
      const uint64_t gap = rng() % 4;
      arrival += gap == 0 ? 0.0 : gap == 1 ? 1e-9 * static_cast<double>(rng() % 64) : gap == 2 ? 2e-7 : 5e-6;
      const InterleavedSegment segment{0, address, bytes, write};
      ASSERT_EQ(shortcut.isRowHit(segment), exact.isRowHit(segment)) << "segment " << i;
      const DramService x = shortcut.serve(segment, arrival, a);
      const DramService y = exact.serve(segment, arrival, b);
      // Equal up to rounding (closed form vs a chain of additions): a femtosecond.
      ASSERT_NEAR(x.firstData, y.firstData, 1e-15) << "segment " << i;
      ASSERT_NEAR(x.end, y.end, 1e-15) << "segment " << i;
      next = address + bytes;
    }
    EXPECT_EQ(a.activates, b.activates);
    EXPECT_EQ(a.rowHits, b.rowHits);
    EXPECT_EQ(a.rowMisses, b.rowMisses);
    EXPECT_EQ(a.rowConflicts, b.rowConflicts);
    EXPECT_EQ(a.refreshes, b.refreshes);
    EXPECT_EQ(a.turnarounds, b.turnarounds);
    EXPECT_GT(a.rowHits, 0);
    EXPECT_GT(a.rowMisses, 0);
  }
}

// A lockstep group of 8, 16 or 32 channels times a stream spread evenly over its channels as they do:
// the same pages open at the same times and the data moves as fast. Without refresh the end of
// every request, the bus time and the command counts are those of the channels timed one by one;
// with refresh (the group refreshes together, channels are staggered) the span stays within 1%.
TEST(DramLockstep, GroupsTimeEvenStreamsAsTheirChannels) {
  for (const int n : {8, 16, 32})
    for (const bool refresh : {false, true}) {
      SCOPED_TRACE(testing::Message() << n << " channels per group, refresh " << refresh);
      MemoryControllerConfig each = hbm(32, 256);
      if (!refresh) each.timing.tREFI = 10.0;  // no refresh within the test
      MemoryControllerConfig lockstep = each;
      lockstep.lockstepChannels = n;
      const MemoryControllerConfig grouped = lockstep.lockstepGroups();
      ASSERT_EQ(grouped.channels, 32 / n);
      std::vector<DramChannel> channels;
      std::vector<DramChannel> groups;
      for (int c = 0; c < each.channels; ++c) channels.emplace_back(each, c);
      for (int c = 0; c < grouped.channels; ++c) groups.emplace_back(grouped, c);
      DramCommandCounts a;
      DramCommandCounts b;
      double busA = 0.0;
      double busB = 0.0;
      double arrival = 0.0;
      double endA = 0.0;
      double endB = 0.0;
      uint64_t address = 0;
      for (int r = 0; r < 300; ++r) {
        // Whole rounds of the interleave over the 32 channels: 8 KiB to 1.8 MiB, back to back or
        // after an idle gap; every fifth request elsewhere (a new stream).
        const uint64_t bytes = 32 * 256 * (1 + static_cast<uint64_t>(r * 37 % 224));
        if (r % 5 == 0) address += 64 * 1024 * 1024;
        const DramRequestService x = serveRequest(channels, 256, address, bytes, r % 4 == 0, arrival, a);
        const DramRequestService y =
            serveRequest(groups, 256 * static_cast<uint64_t>(n), address, bytes, r % 4 == 0, arrival, b);
        if (!refresh) {
          ASSERT_NEAR(y.end, x.end, 1e-12 * x.end) << "request " << r;
          ASSERT_NEAR(y.busTime, x.busTime, 1e-9 * x.busTime) << "request " << r;
        }
        busA += x.busTime;
        busB += y.busTime;
        endA = std::max(endA, x.end);
        endB = std::max(endB, y.end);
        address += bytes;
        arrival = r % 3 == 0 ? x.end + 1e-6 : arrival;
      }
      EXPECT_NEAR(busB, busA, 1e-9 * busA);
      EXPECT_NEAR(endB, endA, (refresh ? 0.01 : 1e-12) * endA);
      EXPECT_EQ(b.readBursts, a.readBursts);
      EXPECT_EQ(b.writeBursts, a.writeBursts);
      EXPECT_GT(a.activates, 0);
      if (!refresh) {
        EXPECT_EQ(b.activates, a.activates);
        EXPECT_EQ(b.precharges, a.precharges);
        EXPECT_EQ(b.rowHits, a.rowHits);
        EXPECT_EQ(b.turnarounds, a.turnarounds);
      } else {
        EXPECT_NEAR(b.refreshes, a.refreshes, 0.05 * a.refreshes);
        EXPECT_NEAR(b.activates, a.activates, 0.02 * a.activates);
      }
    }
}

// The coarser side of a group: a 64-byte read touches one channel, but a group activates (and
// counts) a row in each of its channels.
TEST(DramLockstep, ScatteredReadsActivateTheWholeGroup) {
  MemoryControllerConfig lockstep = hbm(32, 256);
  lockstep.lockstepChannels = 8;
  const MemoryControllerConfig grouped = lockstep.lockstepGroups();
  DramChannel group(grouped, 0);
  DramCommandCounts counts;
  const DramService s = group.serve({0, 0, 64, false}, 0.0, counts);
  EXPECT_EQ(counts.activates, 8);
  EXPECT_EQ(counts.readBursts, 1);
  EXPECT_NEAR(s.busTime, 64 / 64e9, 1e-21);  // the channel that moved the data, busy as long as alone
}

}  // namespace
}  // namespace scoville::hw
