// The trace recorder on its own: tracks per unit and chip, lanes for overlapping transactions,
// the time window, the bound on its size, and request slices.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "trace/ChromeTrace.h"
#include "trace/UnitActivity.h"
#include "trace/UnitName.h"
#include "trace/VcdWriter.h"

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

Parsed parse(const trace::ChromeTrace& trace) {
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
  trace::ChromeTrace trace({0.0, 1e-3, 1000});
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
  trace::ChromeTrace trace({1e-6, 2e-6, 2});
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
  trace::ChromeTrace trace({0.0, 1.0, 1000});
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

TEST(UnitActivity, SpreadsEachEventOverTheSamplesItOverlaps) {
  // Samples of 100 ns from 100 ns to 500 ns; chip 0 has 64-byte bursts.
  trace::UnitActivity a(100e-9, 500e-9, 100e-9, {64.0, 32.0});
  ASSERT_EQ(a.bins(), 4u);
  a.onActivity(event(tlm::Activity::kMacs, "platform.chip0.tensor_core", 50, 250));     // 50 ns before the window
  a.onActivity(event(tlm::Activity::kDramReadBursts, "platform.chip1.hbm", 300, 500));  // 4 bursts of 32 B
  a.onActivity(event(tlm::Activity::kDramActivates, "platform.chip1.hbm", 300, 500));   // not a quantity here
  a.onActivity(event(tlm::Activity::kLinkBytes, "platform.switch0", 150, 150, 0));      // instantaneous
  a.onActivity(event(tlm::Activity::kMacs, "platform.switch0", 150, 250));              // not a chip's unit
  using Q = trace::UnitActivity;
  EXPECT_NEAR(a.at(0, Q::kTensorBusyS, 0), 100e-9, 1e-18);
  EXPECT_NEAR(a.at(0, Q::kTensorBusyS, 1), 50e-9, 1e-18);
  EXPECT_EQ(a.at(0, Q::kTensorBusyS, 2), 0.0);
  EXPECT_NEAR(a.at(1, Q::kHbmBytes, 2) + a.at(1, Q::kHbmBytes, 3), 4 * 32.0, 1e-9);
  EXPECT_NEAR(a.at(1, Q::kHbmBytes, 2), 64.0, 1e-9);
  EXPECT_NEAR(a.at(1, Q::kHbmRequestS, 3), 100e-9, 1e-18) << "one request in flight through the sample";
  EXPECT_DOUBLE_EQ(a.at(0, Q::kFabricBytes, 0), 4.0);
}

TEST(VcdWriter, DeclaresEachSignalInItsScopeAndWritesOnlyChanges) {
  trace::VcdWriter vcd;
  vcd.add("chip0", "power_w", {100, 100, 250});
  vcd.add("platform", "requests_in_flight", {0, 1, 1});
  const std::string text = vcd.text(1e-6, 1e-6, "test");
  EXPECT_NE(text.find("$timescale 1 ns $end"), std::string::npos);
  EXPECT_NE(text.find("$scope module chip0 $end\n$var real 64 a power_w $end\n$upscope $end"), std::string::npos)
      << text;
  EXPECT_NE(text.find("$var real 64 b requests_in_flight $end"), std::string::npos);
  // Time 1000 ns: both values; 2000 ns: only the count changed; 3000 ns: only the power.
  EXPECT_NE(text.find("#1000\nr100 a\nr0 b\n#2000\nr1 b\n#3000\nr250 a\n"), std::string::npos) << text;
}

TEST(UnitName, ReadsTheChipAndUnitFromAModuleName) {
  EXPECT_EQ(trace::unitNameOf("platform.chip12.hbm").chip, 12);
  EXPECT_EQ(trace::unitNameOf("platform.chip12.hbm").unit, "hbm");
  EXPECT_EQ(trace::unitNameOf("platform.chip0.interconnect.port1").unit, "interconnect.port1");
  EXPECT_EQ(trace::unitNameOf("platform.switch0").chip, -1);
  EXPECT_EQ(trace::unitNameOf("platform.switch0").unit, "switch0");
  EXPECT_EQ(trace::unitNameOf("platform.chipset.x").chip, -1) << "not a chip index";
  EXPECT_EQ(trace::unitNameOf("platform.chip7").chip, -1) << "a chip itself is not a unit";
}

}  // namespace
}  // namespace scoville::test
