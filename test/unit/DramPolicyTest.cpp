// The DRAM channel's parts one concern at a time, with closed-form answers: the address
// decoder's named mappings, the page policies (open, closed, adaptive), the refresh policies
// (all-bank, per-bank, same-bank), and the data-bus roofline under every combination. The default
// parts' schedule is checked in HwTimingTest.cpp (and the reports it gives are byte-identical to
// before the channel was split, scripts/report-corpus).
#include <gtest/gtest.h>

#include <random>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "hw/dram/AddressDecoder.h"
#include "hw/dram/BankMachine.h"
#include "hw/dram/DramChannel.h"
#include "hw/dram/MemoryControllerConfig.h"
#include "hw/dram/RefreshPolicy.h"
#include "test/support/ConfigErrors.h"

namespace scoville::hw {
namespace {

MemoryControllerConfig channel() {
  MemoryControllerConfig c;
  c.capacityBytes = 1 << 30;  // one channel of 16 banks x 64 Ki rows of 1 KiB
  c.bandwidthBytesPerS = 64e9;
  c.channels = 1;
  c.interleaveBytes = 256;
  c.bankGroups = 4;
  c.banksPerGroup = 4;
  c.rowBytes = 1024;
  c.burstBytes = 64;
  c.scheduler = "frfcfs";
  c.timing = DramTimingConfig{14e-9, 14e-9, 18e-9, 33e-9, 2e-9, 4e-9, 16e-9, 8e-9, 4e-9, 3.9e-6, 350e-9};
  c.timing.tRFCpb = 160e-9;
  c.timing.tRFCsb = 160e-9;
  return c;
}

/// One 64-byte read of page `page` (row-sized pages: page x 1 KiB).
InterleavedSegment pageRead(uint64_t page) {
  return InterleavedSegment{0, page * 1024, 64, false};
}

TEST(AddressDecoder, NamedMappingsPlacePagesInBanksGroupsAndRows) {
  MemoryControllerConfig c = channel();
  const AddressDecoder groups(c);
  for (uint64_t page = 0; page < 32; ++page) {
    EXPECT_EQ(groups.bankOf(page), page % 16);
    EXPECT_EQ(groups.groupOf(groups.bankOf(page)), static_cast<int>(page % 4)) << "consecutive pages change group";
    EXPECT_EQ(groups.rowOf(page), static_cast<int64_t>(page / 16));
  }
  c.addressMapping = AddressMapping::kBankInterleaved;
  const AddressDecoder banks(c);
  for (uint64_t page = 0; page < 32; ++page) {
    EXPECT_EQ(banks.bankOf(page), page % 16);
    EXPECT_EQ(banks.groupOf(banks.bankOf(page)), static_cast<int>(page % 16 / 4)) << "four pages per group";
  }
  c.addressMapping = AddressMapping::kBankSequential;
  const AddressDecoder rows(c);
  const uint64_t rowsPerBank = (1u << 30) / 16 / 1024;
  EXPECT_EQ(rows.bankOf(0), 0u);
  EXPECT_EQ(rows.bankOf(rowsPerBank - 1), 0u);
  EXPECT_EQ(rows.rowOf(rowsPerBank - 1), static_cast<int64_t>(rowsPerBank - 1));
  EXPECT_EQ(rows.bankOf(rowsPerBank), 1u);
  EXPECT_EQ(rows.rowOf(rowsPerBank), 0);
}

// A long stream's activation period is max(tRRD, tFAW / 4, tRC / banks) per page under the
// bank-group-interleaved mapping (tRRD_S), tRRD_L when a stream stays in a group, and tRC when it
// stays in one bank: the ACTs of N pages span (N - 1) periods.
TEST(AddressDecoder, MappingSetsTheActivationRateOfAStream) {
  const DramTimingConfig t = channel().timing;
  const double tRc = t.tRAS + t.tRP;
  struct Case {
    AddressMapping mapping;
    double tFaw;
    double period;
  };
  for (const Case& k :
       {Case{AddressMapping::kBankGroupInterleaved, 4e-9, t.tRRDs},
        Case{AddressMapping::kBankInterleaved, 4e-9, t.tRRDl}, Case{AddressMapping::kBankSequential, 16e-9, tRc}}) {
    MemoryControllerConfig c = channel();
    c.addressMapping = k.mapping;
    c.timing.tFAW = k.tFaw;       // out of the way where tRRD is the subject
    c.bandwidthBytesPerS = 1e15;  // the bus out of the way: activations alone
    c.timing.tREFI = 1.0;         // refresh out of the way
    c.timing.tRFC = 1e-9;
    DramChannel ch(c, 0);
    DramCommandCounts counts;
    const int pages = 12;  // within the banks: no bank is revisited (but bank_sequential's)
    const DramService s = ch.serve({0, 0, pages * 1024ull, false}, 0.0, counts);
    EXPECT_EQ(counts.activates, pages);
    // The last page's data ends one page after its ACT + tRCD + tCL.
    const double lastAct = s.end - 1024 / 1e15 - t.tRCD - t.tCL;
    // bank_interleaved changes group every fourth page: tRRD_S there, tRRD_L between the others.
    const double expected =
        k.mapping == AddressMapping::kBankInterleaved ? 9 * t.tRRDl + 2 * t.tRRDs : (pages - 1) * k.period;
    EXPECT_NEAR(lastAct, expected, 1e-12) << static_cast<int>(k.mapping);
  }
}

TEST(PagePolicy, OpenKeepsRowsClosedPrechargesAdaptiveLearns) {
  // The same row of one bank, read four times, well apart.
  const auto run = [](const char* policy, const std::vector<uint64_t>& pages) {
    MemoryControllerConfig c = channel();
    c.pagePolicy = policy;
    DramChannel ch(c, 0);
    DramCommandCounts counts;
    double at = 0.0;
    for (uint64_t page : pages) {
      ch.serve(pageRead(page), at, counts);
      at += 0.5e-6;  // all before the first refresh (tREFI 3.9 us)
    }
    return counts;
  };
  const std::vector<uint64_t> same{0, 0, 0, 0};
  const DramCommandCounts open = run("open", same);
  EXPECT_EQ(open.activates, 1);
  EXPECT_EQ(open.rowHits, 3);
  EXPECT_EQ(open.precharges, 0);
  const DramCommandCounts closed = run("closed", same);
  EXPECT_EQ(closed.activates, 4);
  EXPECT_EQ(closed.rowHits, 0);
  EXPECT_EQ(closed.rowMisses, 4) << "an auto-precharged bank is closed, never a conflict";
  EXPECT_EQ(closed.precharges, 4) << "one auto-precharge per access";
  const DramCommandCounts adaptive = run("adaptive", same);
  EXPECT_EQ(adaptive.activates, 1) << "a hit keeps the row open";
  EXPECT_EQ(adaptive.rowHits, 3);
  // Bank 0, a new row every time (pages 16 apart): open pays a conflict each time; adaptive
  // closes after the first conflict and from then on finds the bank closed.
  const std::vector<uint64_t> rows{0, 16, 32, 48, 64};
  const DramCommandCounts openRows = run("open", rows);
  EXPECT_EQ(openRows.rowConflicts, 4);
  const DramCommandCounts adaptiveRows = run("adaptive", rows);
  EXPECT_EQ(adaptiveRows.rowConflicts, 1);
  EXPECT_EQ(adaptiveRows.rowMisses, 4);
}

// Two rows of one bank, the second asked for once the first's row cycle is over: the open page
// pays tRP before the ACT (a conflict); the closed page precharged already and activates at once.
TEST(PagePolicy, ClosedPageTakesTheRowCycleOffTheCriticalPath) {
  const DramTimingConfig t = channel().timing;
  for (const char* policy : {"open", "closed"}) {
    MemoryControllerConfig c = channel();
    c.pagePolicy = policy;
    DramChannel ch(c, 0);
    DramCommandCounts counts;
    ch.serve(pageRead(0), 0.0, counts);
    const double arrival = 100e-9;  // after tRAS + tRP = 47 ns
    const DramService s = ch.serve(pageRead(16), arrival, counts);
    const double act = s.firstData - t.tRCD - t.tCL;
    EXPECT_NEAR(act, std::string(policy) == "open" ? arrival + t.tRP : arrival, 1e-15) << policy;
  }
  // Asked for at once, the closed page waits for the row cycle: ACT at tRC after the first.
  MemoryControllerConfig c = channel();
  c.pagePolicy = "closed";
  DramChannel ch(c, 0);
  DramCommandCounts counts;
  ch.serve(pageRead(0), 0.0, counts);
  const DramService s = ch.serve(pageRead(16), 0.0, counts);
  EXPECT_NEAR(s.firstData - t.tRCD - t.tCL, t.tRAS + t.tRP, 1e-15);
}

// Channel 0's first refresh is due at tREFI. All-bank: a read arriving then waits tRFC for any
// bank. Per-bank: bank b of 16 is refreshed at tREFI (1 + b / 16) for tRFCpb; only that bank
// waits. Same-bank: index i of every group at tREFI (1 + i / 4) for tRFCsb (with the default
// mapping bank b is index b / 4 of group b mod 4).
TEST(RefreshPolicy, OnlyTheBanksBeingRefreshedWait) {
  const DramTimingConfig t = channel().timing;
  const auto actOf = [&](const char* refresh, uint64_t bank, double arrival) {
    MemoryControllerConfig c = channel();
    c.refresh = refresh;
    DramChannel ch(c, 0);
    DramCommandCounts counts;
    const DramService s = ch.serve(pageRead(bank), arrival, counts);
    return s.firstData - t.tRCD - t.tCL;
  };
  const double refi = t.tREFI;
  EXPECT_NEAR(actOf("all_bank", 0, refi + 1e-9), refi + t.tRFC, 1e-15);
  EXPECT_NEAR(actOf("all_bank", 5, refi + 1e-9), refi + t.tRFC, 1e-15);
  EXPECT_NEAR(actOf("per_bank", 0, refi + 1e-9), refi + t.tRFCpb, 1e-15);
  EXPECT_NEAR(actOf("per_bank", 1, refi + 1e-9), refi + 1e-9, 1e-15) << "bank 1 is refreshed later";
  const double bank5 = refi * (1.0 + 5.0 / 16.0);
  EXPECT_NEAR(actOf("per_bank", 5, bank5 + 1e-9), bank5 + t.tRFCpb, 1e-15);
  EXPECT_NEAR(actOf("per_bank", 5, bank5 + t.tRFCpb + 1e-9), bank5 + t.tRFCpb + 1e-9, 1e-15);
  // Same-bank: banks 0..3 (index 0 of groups 0..3) together at tREFI; bank 4 (index 1) later.
  EXPECT_NEAR(actOf("same_bank", 3, refi + 1e-9), refi + t.tRFCsb, 1e-15);
  EXPECT_NEAR(actOf("same_bank", 4, refi + 1e-9), refi + 1e-9, 1e-15);
  const double index1 = refi * (1.0 + 1.0 / 4.0);
  EXPECT_NEAR(actOf("same_bank", 4, index1 + 1e-9), index1 + t.tRFCsb, 1e-15);
}

// Counts over a long idle gap: all-bank issues one REF per tREFI; per-bank one REFpb per bank per
// tREFI (1/16 of an all-bank equivalent each); same-bank one per index per tREFI.
TEST(RefreshPolicy, RefreshCountsScaleWithTime) {
  const double refi = channel().timing.tREFI;
  const double later = 100.5 * refi;
  const auto counted = [&](const char* refresh) {
    MemoryControllerConfig c = channel();
    c.refresh = refresh;
    DramChannel ch(c, 0);
    DramCommandCounts counts;
    ch.serve(pageRead(0), 0.0, counts);
    ch.serve(pageRead(0), later, counts);
    return counts;
  };
  EXPECT_EQ(counted("all_bank").refreshes, 100);
  const DramCommandCounts perBank = counted("per_bank");
  // Bank b's refreshes by 100.5 tREFI: from tREFI (1 + b / 16) on, one per tREFI: 100 for b <= 8, 99 after.
  EXPECT_EQ(perBank.bankRefreshes, 9 * 100 + 7 * 99);
  EXPECT_DOUBLE_EQ(perBank.refreshes, (9 * 100 + 7 * 99) / 16.0);
  EXPECT_EQ(perBank.rowHits, 0) << "bank 0's refresh closed the row";
  const DramCommandCounts sameBank = counted("same_bank");
  EXPECT_EQ(sameBank.bankRefreshes, 3 * 100 + 1 * 99);  // index i from tREFI (1 + i / 4) on
}

// Over an idle gap of 100.5 tREFI with the rate doubled at 50.25 tREFI: the refreshes due before
// the change at the normal rate, every tREFI / 2 after it.
TEST(RefreshRate, DoubledRateRefreshesTwiceAsOftenFromTheChangeOn) {
  const double refi = channel().timing.tREFI;
  const auto counted = [&](const char* refresh, bool doubled) {
    MemoryControllerConfig c = channel();
    c.refresh = refresh;
    DramChannel ch(c, 0);
    DramCommandCounts counts;
    ch.serve(InterleavedSegment{0, 0, 64, false}, 0.0, counts);
    if (doubled) ch.setRefreshRate(50.25 * refi, 2.0);
    ch.serve(InterleavedSegment{0, 0, 64, false}, 100.5 * refi, counts);
    return counts;
  };
  // All-bank: 1..50 tREFI at the normal rate (50), then 51, 51.5, ... 100.5 (100 more).
  EXPECT_EQ(counted("all_bank", false).refreshes, 100);
  EXPECT_EQ(counted("all_bank", true).refreshes, 150);
  // Per-bank: bank b from tREFI (1 + b / 16) on, one per tREFI to the change and two after it: the
  // 1,563 of the normal rate (RefreshPolicy.RefreshCountsScaleWithTime) plus about half again.
  const double normal = counted("per_bank", false).bankRefreshes;
  const double doubled = counted("per_bank", true).bankRefreshes;
  EXPECT_EQ(normal, 9 * 100 + 7 * 99);
  EXPECT_NEAR(doubled - normal, 16 * 50.25, 16.0) << "the second half at twice the rate";
}

// A long sequential stream: all-bank refresh stops the data bus tRFC every tREFI; per-bank
// refresh hides behind the other banks, so the stream moves faster.
TEST(RefreshPolicy, PerBankRefreshHidesBehindAStream) {
  const auto span = [](const char* refresh) {
    MemoryControllerConfig c = channel();
    c.refresh = refresh;
    DramChannel ch(c, 0);
    DramCommandCounts counts;
    double end = 0.0;
    for (uint64_t i = 0; i < 4000; ++i) end = ch.serve({0, i * 4096, 4096, false}, 0.0, counts).end;
    return end;
  };
  const double bytes = 4000.0 * 4096;
  const double busOnly = bytes / 64e9;
  const double allBank = span("all_bank");
  const double perBank = span("per_bank");
  const DramTimingConfig t = channel().timing;
  EXPECT_NEAR(allBank, busOnly / (1.0 - t.tRFC / t.tREFI), 0.02 * allBank);
  EXPECT_LT(perBank, allBank);
  EXPECT_GE(perBank, busOnly);
  EXPECT_LT(perBank, busOnly * 1.02);
}

// Physics first: under every mapping, page policy and refresh, no segment moves its bytes faster
// than the channel's bus, and none starts its data before tRCD + tCL after it arrived.
TEST(DramChannelParts, NoCombinationBeatsTheBus) {
  for (const auto& [mappingName, mapping] : addressMappingNames()) {
    for (const std::string& page : pagePolicyNames()) {
      for (const std::string& refresh : refreshPolicyNames()) {
        MemoryControllerConfig c = channel();
        c.addressMapping = mapping;
        c.pagePolicy = page;
        c.refresh = refresh;
        DramChannel ch(c, 0);
        DramCommandCounts counts;
        std::mt19937_64 rng(3);
        double arrival = 0.0;
        for (int i = 0; i < 3000; ++i) {
          const uint64_t bytes = 64 * (1 + rng() % 64);
          const uint64_t address = (rng() % (1u << 29)) & ~uint64_t{63};
          arrival += 1e-9 * static_cast<double>(rng() % 50);
          const DramService s = ch.serve({0, address, bytes, rng() % 4 == 0}, arrival, counts);
          ASSERT_GE(s.end - s.firstData + 1e-15, static_cast<double>(bytes) / 64e9)
              << mappingName << " " << page << " " << refresh;
          ASSERT_GE(s.firstData, arrival + c.timing.tCL) << mappingName << " " << page;
        }
        EXPECT_GT(counts.activates, 0);
      }
    }
  }
}

TEST(DramConfig, RefreshPoliciesNeedTheirTimingAndNamesAreChecked) {
  const std::string base = R"(capacity: 8 GB
bandwidth: 256 GB/s
channels: 16
bank_groups: 4
banks_per_group: 4
row_size: 1 KiB
burst_size: 32 B
controller_latency: 0 s
timing: {t_rcd: 14 ns, t_rp: 14 ns, t_cl: 14 ns, t_ras: 33 ns, t_rrd_s: 4 ns, t_rrd_l: 6 ns, t_faw: 16 ns,
         t_wtr: 8 ns, t_rtw: 4 ns, t_refi: 3.9 us, t_rfc: 350 ns}
)";
  const auto parse = [&](const std::string& extra) {
    return MemoryControllerConfig::schema().parse(config::loadConfigText("hbm", base + extra, "t.yaml"));
  };
  EXPECT_EQ(parse("").refresh, "all_bank");
  EXPECT_EQ(parse("").pagePolicy, "open");
  EXPECT_EQ(parse("").addressMapping, AddressMapping::kBankGroupInterleaved);
  EXPECT_EQ(parse("page_policy: {impl: adaptive}\naddress_mapping: bank_interleaved\n").pagePolicy, "adaptive");
  EXPECT_TRUE(test::mentions(
      test::configErrorOf([&] { parse("refresh: {impl: per_bank}\n"); }, "per_bank refresh without t_rfc_pb"),
      {"t_rfc_pb"}));
  EXPECT_THROW(parse("page_policy: {impl: opne}\n"), config::ConfigError);
  EXPECT_THROW(parse("address_mapping: row_first\n"), config::ConfigError);
}

}  // namespace
}  // namespace scoville::hw
