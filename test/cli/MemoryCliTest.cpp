// `scoville memory`, end to end on the shipped HBM2 part (platforms/memory/hbm2-8ch.yaml: 16
// pseudo-channels of 16 GB/s, 16 banks, 32-byte bursts, tRC 47 ns, tFAW 16 ns, tRFC 350 ns per
// tREFI 3.9 us): every pattern in both timing modes, the closed forms the DRAM model must meet
// (sequential reads on open pages reach the bus limit less refresh; random single reads are
// bounded by tRC per bank and by tFAW), byte-identical reruns, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

constexpr double kChannels = 16;
constexpr double kPeak = 256e9;
constexpr double kTrc = 47e-9;  // tRAS + tRP of the HBM2 set
constexpr double kTfaw = 16e-9;
constexpr double kRefresh = 350e-9 / 3.9e-6;  // tRFC / tREFI: the bus time refresh takes

Json runJson(std::vector<std::string> args) {
  args.insert(args.begin(), {"memory", "hbm2-8ch", "--json"});
  const ProcessResult r = runScoville(args);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  return r.exitCode == 0 ? Json::parse(r.out) : Json();
}

double fraction(const Json& j) {
  return j["results"]["bandwidth_fraction_of_peak"].get<double>();
}

TEST(MemoryCli, EveryPatternRunsInBothModesWithinTheBusLimit) {
  TempDir dir;
  writeFile(dir.file("t.csv"),
            "time_ns,address,bytes,op\n0,0,64,R\n0,0x1000,64,W\n# a comment\n1000,4096,256,read\n1000,0,32,w\n");
  for (const char* timing : {"lt", "at"}) {
    for (const std::vector<std::string>& pattern :
         std::vector<std::vector<std::string>>{{"--pattern", "sequential"},
                                               {"--pattern", "random"},
                                               {"--pattern", "strided", "--stride", "8192"},
                                               {"--pattern", "random", "--read-ratio", "0.5"},
                                               {"--pattern", "trace", "--trace", dir.file("t.csv")}}) {
      std::vector<std::string> args = pattern;
      args.insert(args.end(), {"--timing", timing, "--requests", "2000"});
      const Json j = runJson(args);
      ASSERT_TRUE(j.contains("results")) << pattern[1] << " " << timing;
      const bool trace = pattern[1] == "trace";
      EXPECT_EQ(j["results"]["requests"].get<double>(), trace ? 4 : 2000) << pattern[1] << " " << timing;
      EXPECT_GT(fraction(j), 0.0);
      EXPECT_LE(fraction(j), 1.0) << "no run beats the bus: " << pattern[1] << " " << timing;
      EXPECT_GT(j["results"]["energy_per_bit_j"].get<double>(), 0.0);
      const Json& latency = j["results"]["latency_s"];
      EXPECT_LE(latency["p50"].get<double>(), latency["p99"].get<double>());
      EXPECT_LE(latency["p99"].get<double>(), latency["max"].get<double>());
      EXPECT_GE(latency["p50"].get<double>(), 14e-9) << "no read returns before tCL";
    }
  }
  // The mixed pattern writes exactly half.
  const Json mixed = runJson({"--pattern", "random", "--read-ratio", "0.5", "--requests", "2000"});
  EXPECT_EQ(mixed["results"]["bytes_written"].get<double>(), 1000 * 64);
}

TEST(MemoryCli, SequentialReadsReachTheBusLimitLessRefresh) {
  for (const char* timing : {"lt", "at"}) {
    const Json j = runJson({"--pattern", "sequential", "--request-size", "256", "--outstanding", "256", "--requests",
                            "200000", "--timing", timing});
    const double f = fraction(j);
    EXPECT_LE(f, 1.0 - kRefresh + 0.005) << timing;
    EXPECT_GE(f, 0.97 * (1.0 - kRefresh)) << timing;
    EXPECT_GT(j["results"]["row_hit_rate"].get<double>(), 0.7) << "four 256-byte requests per 1 KiB page";
  }
}

double requestsPerS(const Json& j) {
  return j["results"]["requests"].get<double>() / j["results"]["simulated_time_s"].get<double>();
}

TEST(MemoryCli, RandomSingleReadsAreBoundByTheRowCycleAndTheFourActivateWindow) {
  // One bank per channel: every read a row conflict, one per tRC per channel (less refresh).
  const Json oneBank =
      runJson({"--pattern", "random", "--request-size", "32", "--outstanding", "256", "--requests", "100000", "--set",
               "memory.hbm.bank_groups=1", "--set", "memory.hbm.banks_per_group=1"});
  EXPECT_LE(requestsPerS(oneBank), kChannels / kTrc * 1.001);
  EXPECT_GE(requestsPerS(oneBank), 0.95 * kChannels / kTrc * (1.0 - kRefresh));
  // One channel, every read a new page in the next bank (a 1 KiB stride): activations back to back
  // at max(tRRD_S, tFAW / 4, tRC / banks): tFAW / 4 = tRRD_S = 4 ns, then tFAW = 32 ns binds alone.
  for (const double tFaw : {16e-9, 32e-9}) {
    const Json rotating = runJson({"--pattern", "strided", "--stride", "1024", "--request-size", "32", "--outstanding",
                                   "64", "--requests", "100000", "--set", "memory.hbm.channels=1", "--set",
                                   "memory.hbm.bandwidth=16 GB/s", "--set", "memory.hbm.capacity=512 MB", "--set",
                                   "memory.hbm.timing.t_faw=" + std::to_string(tFaw * 1e9) + " ns"});
    const double bound = 1.0 / std::max({4e-9, tFaw / 4.0, kTrc / 16.0});
    EXPECT_LE(requestsPerS(rotating), bound * 1.001) << tFaw;
    EXPECT_GE(requestsPerS(rotating), 0.97 * bound * (1.0 - kRefresh)) << tFaw;
    EXPECT_EQ(rotating["results"]["row_hit_rate"].get<double>(), 0.0);
  }
  // Sixteen banks, random: more than one bank's tRC allows, at most four ACTs per tFAW per channel.
  const Json banks =
      runJson({"--pattern", "random", "--request-size", "32", "--outstanding", "256", "--requests", "100000"});
  EXPECT_LE(requestsPerS(banks), kChannels * 4.0 / kTfaw * 1.001);
  EXPECT_GT(requestsPerS(banks), kChannels / kTrc);
  EXPECT_LT(banks["results"]["row_hit_rate"].get<double>(), 0.01);
}

TEST(MemoryCli, PoliciesChosenByKeyChangeTheOutcomeAndReportsAreByteIdentical) {
  TempDir dir;
  const std::vector<std::string> closed = {"memory",     "hbm2-8ch", "--pattern",
                                           "random",     "--set",    "memory.hbm.page_policy={impl: closed}",
                                           "--requests", "5000"};
  std::vector<std::string> a = closed, b = closed;
  a.insert(a.end(), {"--out", dir.file("a")});
  b.insert(b.end(), {"--out", dir.file("b")});
  ASSERT_EQ(runScoville(a).exitCode, 0);
  ASSERT_EQ(runScoville(b).exitCode, 0);
  EXPECT_EQ(readFile(dir.file("a/report.json")), readFile(dir.file("b/report.json")));
  const Json j = Json::parse(readFile(dir.file("a/report.json")));
  EXPECT_EQ(j["part"]["page_policy"], "closed");
  EXPECT_EQ(j["results"]["commands"]["row_conflicts"].get<double>(), 0) << "closed pages never conflict";
  const Json perBank = runJson({"--set", "memory.hbm.refresh={impl: same_bank}", "--requests", "20000"});
  EXPECT_EQ(perBank["part"]["refresh"], "same_bank");
}

TEST(MemoryCli, BadInputIsRefusedWithItsPlace) {
  TempDir dir;
  const auto refused = [](const std::vector<std::string>& args, const std::string& says) {
    std::vector<std::string> all = {"memory"};
    all.insert(all.end(), args.begin(), args.end());
    const ProcessResult r = runScoville(all);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  };
  refused({"hbm2-8ch", "--pattern", "zigzag"}, "--pattern");
  refused({"no-such-part"}, "no-such-part");
  refused({"hbm2-8ch", "--set", "memory.hbm.page_polcy={impl: closed}"}, "page_policy");
  refused({"hbm2-8ch", "--set", "memory.hbm.refresh={impl: per_bank}"}, "t_rfc_pb");
  refused({"hbm2-8ch", "--read-ratio", "1.5"}, "--read-ratio");
  refused({"hbm2-8ch", "--outstanding", "0"}, "--outstanding");
  refused({"hbm2-8ch", "--pattern", "trace"}, "--trace");
  refused({"hbm2-8ch", "--pattern", "trace", "--trace", dir.file("missing.csv")}, "missing.csv");
  writeFile(dir.file("bad.csv"), "0,0,64,R\n5,64,64,X\n");
  refused({"hbm2-8ch", "--pattern", "trace", "--trace", dir.file("bad.csv")}, "bad.csv:2");
  writeFile(dir.file("far.csv"), "0,0,64,R\n5,0x300000000,64,R\n");
  refused({"hbm2-8ch", "--pattern", "trace", "--trace", dir.file("far.csv")}, "beyond");
}

}  // namespace
}  // namespace scoville::test
