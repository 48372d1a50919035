// The trace recorder on its own: tracks per unit and chip, lanes for overlapping transactions,
// the time window, the bound on its size, and request slices.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tlm/trace/ChromeTrace.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;
using sc_core::SC_NS;
using sc_core::sc_time;

tlm::ActivityEvent event(tlm::Activity activity, const char* source, double startNs, double endNs, int chip = -1) {
  tlm::ActivityEvent e;
  e.activity = activity;
  e.amount = 4;
  e.source = source;
  e.start = sc_time(startNs, SC_NS);
  e.time = sc_time(endNs, SC_NS);
  e.chip = chip;
  e.kind = tlm::OpKind::kRead;
  e.block = tlm::OpBlock::kMoe;
  e.phase = tlm::LlmPhase::kDecode;
  e.layer = 3;
  return e;
}

/// thread name -> its X events (ts, dur), and process names by pid.
struct Parsed {
  std::map<std::string, std::vector<std::pair<double, double>>> slices;
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  Json raw;
};

Parsed parse(const tlm::ChromeTrace& trace) {
  Parsed p;
  p.raw = Json::parse(trace.json());
  for (const auto& e : p.raw["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") p.processes[e["pid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      p.threads[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    }
  }
  for (const auto& e : p.raw["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string name =
        p.processes[e["pid"].get<int>()] + "/" + p.threads[{e["pid"].get<int>(), e["tid"].get<int>()}];
    p.slices[name].emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
  }
  return p;
}

TEST(ChromeTrace, OverlappingTransactionsOfAUnitGoToLanesThatNeverOverlap) {
  tlm::ChromeTrace trace({0.0, 1e-3, 1000});
  trace.onActivity(event(tlm::Activity::kDramReadBursts, "platform.chip0.hbm", 0, 100));
  trace.onActivity(event(tlm::Activity::kDramReadBursts, "platform.chip0.hbm", 50, 150));   // overlaps: lane 1
  trace.onActivity(event(tlm::Activity::kDramReadBursts, "platform.chip0.hbm", 100, 200));  // lane 0 is free again
  trace.onActivity(event(tlm::Activity::kDramActivates, "platform.chip0.hbm", 0, 100));  // same transaction: no slice
  trace.onActivity(event(tlm::Activity::kMacs, "platform.chip1.tensor_core", 0, 10));
  trace.onActivity(event(tlm::Activity::kLinkBytes, "platform.switch0", 0, 10, 2));
  trace.onActivity(event(tlm::Activity::kSwitchBytes, "platform.switch0", 0, 10));
  const Parsed p = parse(trace);
  EXPECT_EQ(p.slices.at("chip0/hbm").size(), 2u);
  EXPECT_EQ(p.slices.at("chip0/hbm #1").size(), 1u);
  EXPECT_DOUBLE_EQ(p.slices.at("chip0/hbm")[1].first, 0.1) << "microseconds";
  EXPECT_EQ(p.slices.at("chip1/tensor_core").size(), 1u);
  EXPECT_EQ(p.slices.at("chip2/fabric receive").size(), 1u) << "a port's bytes on its chip's track";
  EXPECT_EQ(p.slices.at("network/switch0").size(), 1u);
  EXPECT_EQ(trace.slices(), 6u);
  for (const auto& e : p.raw["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "read moe") {
      EXPECT_EQ(e["cat"], "decode");
      EXPECT_EQ(e["args"]["layer"], 3);
    }
  }
}

TEST(ChromeTrace, KeepsOnlyTheWindowAndCountsWhatItsBoundDrops) {
  tlm::ChromeTrace trace({1e-6, 2e-6, 2});
  trace.onActivity(event(tlm::Activity::kMacs, "platform.chip0.tensor_core", 0, 500));      // ends before
  trace.onActivity(event(tlm::Activity::kMacs, "platform.chip0.tensor_core", 2500, 3000));  // starts after
  trace.onActivity(event(tlm::Activity::kMacs, "platform.chip0.tensor_core", 900, 1100));   // straddles: kept
  trace.onActivity(event(tlm::Activity::kMacs, "platform.chip0.tensor_core", 1100, 1200));
  trace.onActivity(event(tlm::Activity::kMacs, "platform.chip0.tensor_core", 1200, 1300));  // over the bound
  EXPECT_EQ(trace.slices(), 2u);
  EXPECT_EQ(trace.dropped(), 1u);
  EXPECT_EQ(parse(trace).raw["otherData"]["slices_dropped"], 1);
}

TEST(ChromeTrace, RequestsWaitThenDecodeOnLanesOfTheirOwn) {
  tlm::ChromeTrace trace({0.0, 1.0, 1000});
  trace.addRequest(1, 0.0, 0.1, 0.5, true);
  trace.addRequest(2, 0.05, 0.2, 0.0, false);  // unfinished: decodes to the window's end
  trace.addCounter("platform power", 0.5, 700);
  const Parsed p = parse(trace);
  ASSERT_EQ(p.slices.at("requests/requests").size(), 2u);
  EXPECT_DOUBLE_EQ(p.slices.at("requests/requests")[1].second, 0.4e6);
  ASSERT_EQ(p.slices.at("requests/requests #1").size(), 2u);
  EXPECT_DOUBLE_EQ(p.slices.at("requests/requests #1")[1].second, 0.8e6);
  int counters = 0;
  for (const auto& e : p.raw["traceEvents"]) counters += e["ph"] == "C";
  EXPECT_EQ(counters, 1);
}

}  // namespace
}  // namespace scoville::test
