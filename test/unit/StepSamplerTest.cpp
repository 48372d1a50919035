// The parts of sampled decode steps (runtime/StepSampler.h) that need no simulation: the activity
// recorder's merging and replay, the statistics tree's counter list and the error bound.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/StepSampler.h"
#include "stats/StatsGroup.h"

namespace scoville {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

struct Heard : tlm::ActivityListener {
  std::vector<tlm::ActivityEvent> events;
  void onActivity(const tlm::ActivityEvent& e) override { events.push_back(e); }
};

tlm::ActivityEvent event(tlm::Activity activity, double amount, double startNs, double endNs, const char* source,
                         int srcChip = 0) {
  tlm::ActivityEvent e;
  e.activity = activity;
  e.amount = amount;
  e.start = sc_time(startNs, SC_NS);
  e.time = sc_time(endNs, SC_NS);
  e.source = source;
  e.srcChip = srcChip;
  return e;
}

// Events of one unit and kind closer than the gap become one over their union; a longer idle
// gap, another unit or another block start another; the power manager's own activity is left to
// it. The replay sends the merged events in order of their starts, shifted to the new start.
TEST(ActivityRecorder, MergesAUnitsEventsAcrossGapsShorterThanTheClockHoldAndReplaysThemShifted) {
  tlm::ActivityBus bus;
  runtime::ActivityRecorder recorder(bus, {}, 1e-6);  // 1 us
  const char* hbm = "chip0.hbm";
  const char* core = "chip0.tensor_core";
  bus.emit(event(tlm::Activity::kDramReadBursts, 5, 1000, 1500, hbm));  // before arming: not kept
  recorder.arm(sc_time(10, sc_core::SC_US));
  bus.emit(event(tlm::Activity::kDramReadBursts, 10, 10000, 10400, hbm));
  bus.emit(event(tlm::Activity::kDramReadBursts, 20, 10900, 11200, hbm));  // 0.5 us later: merged
  bus.emit(event(tlm::Activity::kDramReadBursts, 30, 13000, 13100, hbm));  // 1.8 us later: apart
  bus.emit(event(tlm::Activity::kMacs, 100, 10100, 10300, core));
  tlm::ActivityEvent other = event(tlm::Activity::kMacs, 50, 10300, 10500, core);
  other.block = tlm::OpBlock::kAttention;
  bus.emit(other);
  bus.emit(event(tlm::Activity::kClockActive, 1e-6, 10000, 11000, "chip0.power_manager"));
  recorder.disarm();
  bus.emit(event(tlm::Activity::kMacs, 7, 14000, 14100, core));  // after: not kept

  const std::vector<tlm::ActivityEvent>& r = recorder.recorded();
  ASSERT_EQ(r.size(), 4U);
  EXPECT_EQ(r[0].activity, tlm::Activity::kDramReadBursts);
  EXPECT_EQ(r[0].amount, 30.0);
  EXPECT_EQ(r[0].start, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(r[0].time, sc_time(1200, SC_NS));
  EXPECT_EQ(r[1].activity, tlm::Activity::kMacs);  // by start: 100 ns
  EXPECT_EQ(r[1].amount, 100.0);
  EXPECT_EQ(r[2].block, tlm::OpBlock::kAttention);
  EXPECT_EQ(r[3].amount, 30.0);
  EXPECT_EQ(r[3].start, sc_time(3000, SC_NS));

  Heard heard;
  bus.subscribe(heard);
  recorder.replay(sc_time(50, sc_core::SC_US));
  ASSERT_EQ(heard.events.size(), 4U);
  EXPECT_EQ(heard.events[0].start, sc_time(50, sc_core::SC_US));
  EXPECT_EQ(heard.events[0].time, sc_time(51200, SC_NS));
  EXPECT_EQ(heard.events[3].start, sc_time(53000, SC_NS));
  double amount = 0.0;
  for (const tlm::ActivityEvent& e : heard.events) amount += e.amount;
  EXPECT_EQ(amount, 30.0 + 100.0 + 50.0 + 30.0);  // nothing lost, nothing counted twice
}

// On the fabric's bus a replica's recorder keeps the messages its own chips sent.
TEST(ActivityRecorder, KeepsOnlyTheMessagesOfItsReplicasChipsOnANetworkBus) {
  tlm::ActivityBus bus;
  runtime::ActivityRecorder recorder(bus, {4, 5}, 0.0);
  recorder.arm(sc_core::SC_ZERO_TIME);
  bus.emit(event(tlm::Activity::kSwitchBytes, 64, 0, 10, "switch0", 4));
  bus.emit(event(tlm::Activity::kSwitchBytes, 64, 0, 10, "switch0", 1));
  bus.emit(event(tlm::Activity::kSwitchBytes, 64, 5, 20, "switch0", 5));
  recorder.disarm();
  ASSERT_EQ(recorder.recorded().size(), 2U);  // chips 4 and 5 are kept apart (switch weights)
  EXPECT_EQ(recorder.recorded()[0].srcChip, 4);
  EXPECT_EQ(recorder.recorded()[1].srcChip, 5);
}

TEST(SamplingSummary, BoundsTheReplayedTimesErrorByTheMeanAndTwoStandardErrors) {
  runtime::SamplingSummary s;
  EXPECT_EQ(s.replayedErrorBound(), 0.0);
  s.replayedSteps = 100;
  for (const double e : {0.01, -0.01, 0.02, 0.0}) {
    ++s.predictions;
    s.errorSum += e;
    s.errorSquares += e * e;
    s.errorMaxAbs = std::max(s.errorMaxAbs, std::fabs(e));
  }
  EXPECT_NEAR(s.meanError(), 0.005, 1e-15);
  const double sd = std::sqrt((0.01 * 0.01 + 0.01 * 0.01 + 0.02 * 0.02 - 4 * 0.005 * 0.005) / 3.0);
  EXPECT_NEAR(s.errorSd(), sd, 1e-15);
  EXPECT_NEAR(s.replayedErrorBound(), 0.005 + 1.96 * sd / 2.0, 1e-15);
  runtime::SamplingSummary one;
  one.replayedSteps = 3;
  one.predictions = 1;
  one.errorSum = -0.03;
  one.errorSquares = 0.0009;
  one.errorMaxAbs = 0.03;
  EXPECT_EQ(one.replayedErrorBound(), 0.03) << "one prediction: its error";
  s.add(one);
  EXPECT_EQ(s.predictions, 5U);
  EXPECT_EQ(s.errorMaxAbs, 0.03);
}

// A replica's chips add a recorded step's counts to their counters, but for the groups whose
// module counts for itself.
TEST(Stats, CollectCountersListsATreesCountersLeavingOutNamedGroupsAndCounters) {
  stats::Group chip("chip0", "");
  stats::Group hbm("hbm", "");
  stats::Group manager("power_manager", "");
  stats::Counter& bytes = hbm.counter("bytes", "B", "");
  hbm.counter("refreshes", "", "");
  hbm.formula("kib", "", "", [&bytes] { return bytes.value() / 1024; });
  manager.counter("clock_active_time", "s", "");
  chip.addChild(hbm);
  chip.addChild(manager);
  std::vector<stats::Counter*> counters;
  chip.collectCounters(counters, {"power_manager"}, {"refreshes"});
  ASSERT_EQ(counters.size(), 1U);
  counters[0]->add(2048);
  EXPECT_EQ(hbm.value("kib"), 2.0);
}

}  // namespace
}  // namespace scoville
