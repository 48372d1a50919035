// The power model on its own: energy binning, sliding-window sustained power and violations,
// pricing of each activity, and the report's conservation and idle power.
#include <gtest/gtest.h>

#include <random>

#include "hw/power/DvfsGovernor.h"
#include "power/EnergyLevels.h"
#include "power/PowerMonitor.h"
#include "tlm/ClockDomain.h"
#include "tlm/Time.h"

namespace scoville::power {
namespace {

constexpr double kInterval = 10e-6;

ChipEnergyConfig energy() {
  ChipEnergyConfig e;
  e.uncoreW = 20;
  e.tensorCore.perFlop.bf16 = 0.5e-12;
  e.tensorCore.perFlop.fp8 = 0.25e-12;
  e.tensorCore.operandJPerByte = 0.1e-12;
  e.tensorCore.staticW = 30;
  e.vectorUnit.perOpJ = 1e-12;
  e.vectorUnit.staticW = 5;
  e.sram.readJPerByte = 1e-12;
  e.sram.writeJPerByte = 2e-12;
  e.sram.staticW = 10;
  e.hbm.activateJ = 1e-9;
  e.hbm.prechargeJ = 0.5e-9;
  e.hbm.readJPerByte = 16e-12;
  e.hbm.writeJPerByte = 18e-12;
  e.hbm.refreshJ = 50e-9;
  e.hbm.staticW = 25;
  e.memoryInterface = {8e-12, 8e-12, 0.0};
  e.interconnect = {1e-9, 10e-3, 1e-3, 4};  // 1 pJ per byte and mm; 10 mm to memory, 1 mm to SRAM
  e.fabricPorts = {16e-12, 6};
  return e;
}

/// `e`'s level energies of a chip, by name.
double levelJ(const ChipPower& chip, Level level) {
  return chip.levelJ()[static_cast<std::size_t>(level)];
}

tlm::ActivityEvent event(tlm::Activity activity, double amount, double start, double end,
                         tlm::LlmPhase phase = tlm::LlmPhase::kDecode) {
  tlm::ActivityEvent e;
  e.activity = activity;
  e.amount = amount;
  e.phase = phase;
  e.start = sc_core::sc_time(start, sc_core::SC_SEC);
  e.time = sc_core::sc_time(end, sc_core::SC_SEC);
  return e;
}

TEST(EnergyTimeline, SpreadingKeepsEveryJoule) {
  EnergyTimeline t(kInterval);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> at(0.0, 5e-3);
  std::uniform_real_distribution<double> length(0.0, 200e-6);
  std::array<double, kPhases> total{};
  for (int i = 0; i < 5000; ++i) {
    const double start = at(rng);
    const double end = i % 7 == 0 ? start : start + length(rng);
    const double joules = 1e-6 * static_cast<double>(1 + rng() % 1000);
    const std::size_t phase = rng() % kPhases;
    t.add(joules, phase, start, end);
    total[phase] += joules;
  }
  double binned = 0.0;
  for (std::size_t b = 0; b < t.bins(); ++b) binned += t.at(b);
  EXPECT_NEAR(binned, total[0] + total[1] + total[2], 1e-9 * binned);
  for (std::size_t p = 0; p < kPhases; ++p) EXPECT_NEAR(t.phaseEnergy(p, 0.0, 1.0), total[p], 1e-9 * total[p]);
  // An event spread over four bins puts a quarter in each.
  EnergyTimeline even(kInterval);
  even.add(4.0, 0, 2 * kInterval, 6 * kInterval);
  for (std::size_t b = 2; b < 6; ++b) EXPECT_NEAR(even.at(b), 1.0, 1e-12) << b;
  EXPECT_EQ(even.at(1), 0.0);
  EXPECT_EQ(even.at(6), 0.0);
}

// Past its cap a timeline merges adjacent bins: every joule stays, the interval doubles as often
// as needed, memory stays under the cap, and the bins equal those of an unbounded timeline merged
// to the same interval.
TEST(EnergyBins, AtTheCapAdjacentBinsMergeAndKeepEveryJoule) {
  EnergyBins bounded(kInterval, 64);
  EnergyBins unbounded(kInterval, 1 << 20);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> at(0.0, 20e-3);  // 2000 bins of 10 us
  std::uniform_real_distribution<double> length(0.0, 300e-6);
  double total = 0.0;
  for (int i = 0; i < 3000; ++i) {
    const double start = at(rng);
    const double end = i % 5 == 0 ? start : start + length(rng);
    const double joules = 1e-6 * static_cast<double>(1 + rng() % 1000);
    bounded.add(joules, start, end);
    unbounded.add(joules, start, end);
    total += joules;
  }
  EXPECT_DOUBLE_EQ(unbounded.interval(), kInterval);
  // 2030 bins of 10 us need 32 merges of 320 us to fit 64.
  EXPECT_DOUBLE_EQ(bounded.interval(), 32 * kInterval);
  EXPECT_LE(bounded.size(), 64u);
  EXPECT_LE(bounded.bins().capacity(), 64u);
  double binned = 0.0;
  for (const double j : bounded.bins()) binned += j;
  EXPECT_NEAR(binned, total, 1e-9 * total);
  const std::vector<double> merged = unbounded.resampled(bounded.interval());
  ASSERT_EQ(merged.size(), bounded.size());
  for (std::size_t b = 0; b < merged.size(); ++b) EXPECT_NEAR(bounded.at(b), merged[b], 1e-9 * total) << b;
  EXPECT_NEAR(bounded.energyIn(0.0, 1.0), total, 1e-9 * total);
  // The phase bins of a timeline merge the same way and still add up per phase.
  EnergyTimeline timeline(kInterval, 16);
  timeline.add(1.0, 0, 0.0, 0.5);
  timeline.add(2.0, 1, 0.25, 0.25);
  EXPECT_GE(timeline.interval(), 0.5 / 16);
  EXPECT_LE(timeline.bins(), 16u);
  EXPECT_NEAR(timeline.phaseEnergy(0, 0.0, 1.0), 1.0, 1e-12);
  EXPECT_NEAR(timeline.phaseEnergy(1, 0.0, 1.0), 2.0, 1e-12);
  EXPECT_NEAR(timeline.phaseEnergy(0, 0.0, 0.25), 0.5, 1e-12);
}

// The governor's recent energy is an unbounded timeline's, less what lies before the dropped
// bins: the same arithmetic, so the same decisions, in bounded memory.
TEST(RecentEnergy, KeepsTheLatestBinsExactlyAsAnUnboundedTimeline) {
  RecentEnergy recent(kInterval);
  EnergyBins all(kInterval, 1 << 20);
  double dropped = 0.0;
  for (int i = 0; i < 100000; ++i) {
    const double start = static_cast<double>(i) * 1e-6;  // 1 us apart, each 25 us long
    recent.add(1e-3, start, start + 25e-6);
    all.add(1e-3, start, start + 25e-6);
    if (i % 1000 == 0) {
      dropped = std::max(0.0, start - 10e-3);
      recent.dropBefore(dropped);
    }
  }
  EXPECT_LT(recent.kept(), 2 * 1000 + 4096 + 10u) << "about two windows of 10 ms, or the erase step";
  for (const double from : {dropped, dropped + 3.3e-3, 0.09}) {
    EXPECT_EQ(recent.energyIn(from, from + 1e-3), all.energyIn(from, from + 1e-3)) << from;
  }
}

TEST(SustainedPower, SlidingMaximumAndViolationRuns) {
  // 100 W, a 900 W burst of five bins from bin 10, 100 W, a 700 W burst of three bins at 30.
  std::vector<double> watts(40, 100.0);
  for (std::size_t b = 10; b < 15; ++b) watts[b] = 900.0;
  for (std::size_t b = 30; b < 33; ++b) watts[b] = 700.0;
  const SustainedPower s = sustainedPower(watts, kInterval, 2, 500.0);
  ASSERT_TRUE(s.fits);
  EXPECT_DOUBLE_EQ(s.windowS, 2 * kInterval);
  EXPECT_DOUBLE_EQ(s.maxW, 900.0);
  EXPECT_DOUBLE_EQ(s.maxAtS, 10 * kInterval);
  // Windows [10, 12) .. [13, 15) are above 500 W ([9, 11) and [14, 16) average exactly 500);
  // then [30, 32) and [31, 33).
  ASSERT_EQ(s.violations, 2u);
  EXPECT_DOUBLE_EQ(s.firstViolations[0].startS, 10 * kInterval);
  EXPECT_DOUBLE_EQ(s.firstViolations[0].endS, 15 * kInterval);
  EXPECT_DOUBLE_EQ(s.firstViolations[0].maxW, 900.0);
  EXPECT_DOUBLE_EQ(s.firstViolations[1].startS, 30 * kInterval);
  EXPECT_DOUBLE_EQ(s.firstViolations[1].endS, 33 * kInterval);
  EXPECT_DOUBLE_EQ(s.firstViolations[1].maxW, 700.0);
  // A window longer than the run does not fit; one of the whole run averages it.
  EXPECT_FALSE(sustainedPower(watts, kInterval, 41, 500.0).fits);
  EXPECT_DOUBLE_EQ(sustainedPower(watts, kInterval, 40, 500.0).maxW,
                   (30 * 100.0 + 5 * 900.0 + 3 * 700.0 + 2 * 100.0) / 40);
}

TEST(ChipPower, PricesEachLevel) {
  ChipEnergyConfig e = energy();
  e.llc = AccessEnergy{3e-12, 4e-12, 0.0};
  ChipPower chip("chip0", "test", e, 64.0, 700.0, kInterval);
  chip.onActivity(event(tlm::Activity::kMacs, 1e9, 0, 1e-4));  // 2 GFLOP at 0.5 pJ
  EXPECT_NEAR(levelJ(chip, Level::kDatapath), 2e9 * 0.5e-12, 1e-15);
  tlm::ActivityEvent fp8 = event(tlm::Activity::kMacs, 1e9, 0, 1e-4);
  fp8.precision = tlm::Precision::kFp8;
  chip.onActivity(fp8);
  EXPECT_NEAR(levelJ(chip, Level::kDatapath), 2e9 * 0.75e-12, 1e-15);
  // A DRAM read burst: the DRAM core and the memory interface, apart.
  chip.onActivity(event(tlm::Activity::kDramReadBursts, 1000, 0, 1e-5));
  EXPECT_NEAR(levelJ(chip, Level::kHbm), 1000 * 64 * 16e-12, 1e-18);
  EXPECT_NEAR(levelJ(chip, Level::kMemoryInterface), 1000 * 64 * 8e-12, 1e-18);
  // A byte between HBM and a unit: 10 mm of wire, the memory-side cache, staged in the SRAM.
  chip.onActivity(event(tlm::Activity::kNocMemoryBytes, 1e6, 0, 1e-5));
  EXPECT_NEAR(levelJ(chip, Level::kNoc), 1e6 * 10e-3 * 1e-9, 1e-15);
  EXPECT_NEAR(levelJ(chip, Level::kLlc), 1e6 * 3e-12, 1e-18) << "a read: the cache's read energy";
  EXPECT_NEAR(levelJ(chip, Level::kSram), 1e6 * (1e-12 + 2e-12), 1e-18) << "written on arrival, read once";
  chip.onActivity(event(tlm::Activity::kNocSramBytes, 1e6, 0, 1e-5));
  EXPECT_NEAR(levelJ(chip, Level::kNoc), 1e6 * 11e-3 * 1e-9, 1e-15) << "1 mm to the SRAM";
  chip.onActivity(event(tlm::Activity::kLinkBytes, 1e6, 0, 1e-5));
  EXPECT_NEAR(levelJ(chip, Level::kFabricPorts), 16e-6, 1e-18);
  EXPECT_NEAR(chip.phaseJ()[static_cast<std::size_t>(tlm::LlmPhase::kCommunication)], 16e-6, 1e-18)
      << "moving data between chips is communication";
  chip.onActivity(event(tlm::Activity::kSwitchBytes, 1e6, 0, 1e-5));  // a switch's, not the chip's
  double sum = 0.0;
  for (const double j : chip.levelJ()) sum += j;
  EXPECT_NEAR(chip.dynamicJ(), sum, 1e-18);
  EXPECT_NEAR(chip.dynamicJ(), 2e9 * 0.75e-12 + 1000 * 64 * 24e-12 + 1e6 * (11e-3 * 1e-9 + 3e-12 + 3e-12) + 16e-6,
              1e-15);
  // Every level's energy is its counts times the file's prices.
  EXPECT_NEAR(priced(e, chip.counts()), chip.dynamicJ(), 1e-15);
}

// A vector unit's weight conversions are priced by energy_per_convert_op, or energy_per_op without it.
TEST(ChipPower, ConversionsHaveTheirOwnPriceOrTheElementOpsOne) {
  ChipEnergyConfig e = energy();
  e.vectorUnit.perOpJ = 60e-12;
  e.vectorUnit.perConvertOpJ = 12e-12;
  ChipPower chip("chip0", "test", e, 64.0, 700.0, kInterval);
  chip.onActivity(event(tlm::Activity::kVectorOps, 1e6, 0, 1e-5));
  chip.onActivity(event(tlm::Activity::kConvertOps, 2e6, 0, 1e-5));
  EXPECT_NEAR(levelJ(chip, Level::kVectorUnit), 1e6 * 60e-12 + 2e6 * 12e-12, 1e-15);
  EXPECT_NEAR(priced(e, chip.counts()), chip.dynamicJ(), 1e-15);
  e.vectorUnit.perConvertOpJ = 0.0;
  ChipPower unpriced("chip1", "test", e, 64.0, 700.0, kInterval);
  unpriced.onActivity(event(tlm::Activity::kConvertOps, 2e6, 0, 1e-5));
  EXPECT_NEAR(levelJ(unpriced, Level::kVectorUnit), 2e6 * 60e-12, 1e-15);
}

// The wires' energy follows the data: a constant (a fill) pays only their data-independent share.
TEST(ChipPower, AConstantPaysOnlyTheWiresDataIndependentShare) {
  ChipEnergyConfig e = energy();
  e.dataIndependentShare = 0.25;
  ChipPower random("chip0", "test", e, 64.0, 700.0, kInterval);
  ChipPower constant("chip0", "test", e, 64.0, 700.0, kInterval);
  for (ChipPower* chip : {&random, &constant}) {
    for (const tlm::Activity a : {tlm::Activity::kDramWriteBursts, tlm::Activity::kNocMemoryBytes}) {
      tlm::ActivityEvent write = event(a, 1000, 0, 1e-5);
      write.kind = tlm::OpKind::kWrite;
      write.toggle = chip == &random ? 1.0 : 0.0;
      chip->onActivity(write);
    }
  }
  EXPECT_NEAR(levelJ(constant, Level::kMemoryInterface), 0.25 * levelJ(random, Level::kMemoryInterface), 1e-20);
  EXPECT_NEAR(levelJ(constant, Level::kNoc), 0.25 * levelJ(random, Level::kNoc), 1e-20);
  EXPECT_EQ(levelJ(constant, Level::kHbm), levelJ(random, Level::kHbm)) << "the DRAM core senses either way";
  EXPECT_EQ(levelJ(constant, Level::kSram), levelJ(random, Level::kSram));
}

// Doubling HBM traffic with the compute fixed doubles the HBM levels' energy and nothing else.
TEST(ChipPower, DoublingHbmTrafficDoublesTheHbmLevels) {
  const ChipEnergyConfig e = energy();
  const auto run = [&](int copies) {
    auto chip = std::make_unique<ChipPower>("chip0", "test", e, 64.0, 700.0, kInterval);
    chip->onActivity(event(tlm::Activity::kMacs, 5e8, 0, 1e-4));
    for (int i = 0; i < copies; ++i) {
      chip->onActivity(event(tlm::Activity::kDramActivates, 100, 0, 1e-4));
      chip->onActivity(event(tlm::Activity::kDramPrecharges, 100, 0, 1e-4));
      chip->onActivity(event(tlm::Activity::kDramReadBursts, 5000, 0, 1e-4));
      chip->onActivity(event(tlm::Activity::kNocMemoryBytes, 5000 * 64, 0, 1e-4));
    }
    return chip;
  };
  const auto once = run(1);
  const auto twice = run(2);
  for (const Level level : {Level::kHbm, Level::kMemoryInterface, Level::kNoc, Level::kSram}) {
    EXPECT_NEAR(levelJ(*twice, level), 2 * levelJ(*once, level), 1e-15) << levelName(level);
  }
  EXPECT_DOUBLE_EQ(levelJ(*twice, Level::kDatapath), levelJ(*once, Level::kDatapath));
}

// Under DVFS the core rail's dynamic energy scales with V^2, its floor with V^2 f and its leakage
// with the chip's law; the HBM and the memory interface do not follow the core.
TEST(ChipPower, TheCoreRailFollowsTheOperatingPointAndTheRestDoesNot) {
  ChipEnergyConfig e = energy();
  e.floorW = 100.0;
  e.leakagePerVolt = 3.0;
  e.dvfs = {{2e9, 1.0}, {1e9, 0.8}};
  ChipPower chip("chip0", "test", e, 64.0, 700.0, kInterval);
  tlm::PowerStateEvent point;
  point.kind = tlm::PowerStateEvent::Kind::kOperatingPoint;
  point.time = sc_core::sc_time(1e-3, sc_core::SC_SEC);
  point.point = 1;
  point.frequencyScale = 0.5;
  point.voltageScale = 0.8;
  chip.onPowerState(point);
  chip.onActivity(event(tlm::Activity::kMacs, 1e9, 1e-3, 2e-3));
  chip.onActivity(event(tlm::Activity::kDramReadBursts, 1000, 1e-3, 2e-3));
  chip.onActivity(event(tlm::Activity::kClockActive, 1e-3, 1e-3, 2e-3));
  EXPECT_NEAR(levelJ(chip, Level::kDatapath), 2e9 * 0.5e-12 * 0.64, 1e-15);
  EXPECT_NEAR(levelJ(chip, Level::kHbm), 1000 * 64 * 16e-12, 1e-18);
  EXPECT_NEAR(levelJ(chip, Level::kMemoryInterface), 1000 * 64 * 8e-12, 1e-18);
  EXPECT_NEAR(levelJ(chip, Level::kFloor), 100.0 * 1e-3 * 0.64 * 0.5, 1e-12);
  // Leakage of the core rail (tensor core, vector unit, SRAM, interconnect: 49 W) at 0.8 V.
  const double leakage = 0.8 * std::exp(3.0 * (0.8 - 1.0));
  EXPECT_NEAR(e.leakageScale(0.8), leakage, 1e-15);
  EXPECT_NEAR(chip.staticAtW(0.8), 100.0 - 49.0 * (1.0 - leakage), 1e-12);
  EXPECT_NEAR(chip.staticJ(3e-3), 100.0 * 1e-3 + (100.0 - 49.0 * (1.0 - leakage)) * 2e-3, 1e-12);
  ASSERT_EQ(chip.clockLog().size(), 1u);
  EXPECT_NEAR(chip.timeAtPoints(3e-3)[0], 1e-3, 1e-15);
  EXPECT_NEAR(chip.timeAtPoints(3e-3)[1], 2e-3, 1e-15);
}

// A point between two dvfs points has the voltage between theirs.
TEST(ChipEnergyConfig, TheVoltageCurveInterpolatesAndClamps) {
  ChipEnergyConfig e = energy();
  e.dvfs = {{2e9, 1.0}, {1.5e9, 0.9}, {1e9, 0.8}};
  EXPECT_DOUBLE_EQ(e.voltageAt(2e9), 1.0);
  EXPECT_DOUBLE_EQ(e.voltageAt(3e9), 1.0);
  EXPECT_NEAR(e.voltageAt(1.75e9), 0.95, 1e-12);
  EXPECT_NEAR(e.voltageAt(1.25e9), 0.85, 1e-12);
  EXPECT_DOUBLE_EQ(e.voltageAt(0.5e9), 0.8);
  EXPECT_DOUBLE_EQ(e.leakageScale(1.0), 1.0);
}

/// What a power manager would do for a governor: move the chip's point and announce it.
struct GovernedChip {
  ChipEnergyConfig energy;
  ChipPower power;
  tlm::ClockDomain clock;
  std::unique_ptr<hw::DvfsGovernor> governor;
  double lastEnd = 0.0;

  GovernedChip(const ChipEnergyConfig& e, const GovernorConfig& g, std::size_t maxBins = kDefaultMaxBins)
      : energy(e), power("chip0", "test", energy, 64.0, 700.0, kInterval, maxBins) {
    power.keepRecent();
    governor = std::make_unique<hw::DvfsGovernor>(g, g.targetW, energy.dvfs, power, [this](double t, std::size_t k) {
      clock.setScale(energy.dvfs[k].frequencyHz / energy.dvfs[0].frequencyHz);
      tlm::PowerStateEvent p;
      p.time = sc_core::sc_time(t, sc_core::SC_SEC);
      p.point = k;
      p.frequencyScale = energy.dvfs[k].frequencyHz / energy.dvfs[0].frequencyHz;
      p.voltageScale = energy.dvfs[k].voltageV / energy.dvfs[0].voltageV;
      power.onPowerState(p);
    });
  }
  /// An event as the chip's bus delivers it: the governor decides first, then the power model prices.
  void onActivity(const tlm::ActivityEvent& e) {
    governor->decideUntil(tlm::seconds(e.start), lastEnd);
    lastEnd = std::max(lastEnd, tlm::seconds(e.time));
    power.onActivity(e);
  }
};

// A chip drawing 400 W (300 W of it core power) under a 300 W cap: the first decision lowers the
// clock far enough that the window ending at the next decision is predicted under the cap (its
// known half is at 400 W, so the next 100 us must be near 200 W: the 1 GHz point, core power x
// 0.8^2 x 0.5); core energy is then priced at V^2; once the load stops, the clock comes back.
TEST(DvfsGovernor, LowersTheClockUnderACapAndRaisesItAfter) {
  ChipEnergyConfig e = energy();  // idle 100 W
  e.dvfs = {{2e9, 1.0}, {1.5e9, 0.9}, {1e9, 0.8}};
  GovernorConfig g{GovernorKind::kCapTarget, 300.0, 1e-3, 100e-6, 0.05};
  GovernedChip chip(e, g);
  const double macsPer10us = 300.0 * 10e-6 / (2 * 0.5e-12);  // 300 W at 0.5 pJ/FLOP
  for (int i = 0; i < 11; ++i) chip.onActivity(event(tlm::Activity::kMacs, macsPer10us, i * 10e-6, (i + 1) * 10e-6));
  EXPECT_DOUBLE_EQ(chip.clock.scale(), 0.5) << "decided at 100 us";
  EXPECT_EQ(chip.power.clockChanges(), 1u);
  // The event starting at 100 us was priced after the decision: at 0.8^2.
  EXPECT_NEAR(levelJ(chip.power, Level::kDatapath), 10 * 300.0 * 10e-6 + 300.0 * 10e-6 * 0.64, 1e-12);
  // Idle from here: a decision after the window has drained raises the clock to nominal.
  chip.onActivity(event(tlm::Activity::kVectorOps, 1, 5e-3, 5e-3));
  EXPECT_DOUBLE_EQ(chip.clock.scale(), 1.0);
  const std::vector<double> times = chip.power.timeAtPoints(5e-3);
  ASSERT_EQ(times.size(), 3u);
  EXPECT_NEAR(times[0] + times[1] + times[2], 5e-3, 1e-12);
  EXPECT_GT(times[2], 0.0);
  EXPECT_LT(times[0], 5e-3);
}

// A governed chip decides the same whether its report timeline merges bins or not: the governor
// reads its own recent energy at the configured interval.
TEST(DvfsGovernor, MergingTheTimelineChangesNoDecision) {
  ChipEnergyConfig e = energy();
  e.dvfs = {{2e9, 1.0}, {1.5e9, 0.9}, {1e9, 0.8}};
  GovernorConfig g{GovernorKind::kCapTarget, 300.0, 1e-3, 100e-6, 0.05};
  GovernedChip free(e, g);
  GovernedChip bounded(e, g, 16);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 4000; ++i) {  // 40 ms of bursts between 0 and 600 W
    const double macs = static_cast<double>(rng() % 600) * 10e-6 / (2 * 0.5e-12);
    for (GovernedChip* chip : {&free, &bounded}) {
      chip->onActivity(event(tlm::Activity::kMacs, macs, i * 10e-6, (i + 1) * 10e-6));
    }
  }
  EXPECT_GT(bounded.power.timeline().interval(), kInterval);
  EXPECT_EQ(free.power.timeline().interval(), kInterval);
  ASSERT_GT(free.power.clockChanges(), 2u);
  ASSERT_EQ(bounded.power.clockLog().size(), free.power.clockLog().size());
  for (std::size_t k = 0; k < free.power.clockLog().size(); ++k) {
    EXPECT_EQ(bounded.power.clockLog()[k].timeS, free.power.clockLog()[k].timeS) << k;
    EXPECT_EQ(bounded.power.clockLog()[k].point, free.power.clockLog()[k].point) << k;
  }
  EXPECT_EQ(levelJ(bounded.power, Level::kDatapath), levelJ(free.power, Level::kDatapath));
}

// A run longer than max_bins intervals is reported at the merged interval: the same energy, and
// each sustained window rounded to whole merged bins (a window shorter than one is one bin).
TEST(PowerMonitor, ALongRunIsReportedAtTheMergedInterval) {
  const ChipEnergyConfig e = energy();
  const SwitchEnergyConfig sw{1e-12, 1e-9, 50.0};
  PowerManagementConfig bounded{kInterval, {20e-6, 1.2e-3}, {}, 64};
  PowerManagementConfig free{kInterval, {20e-6, 1.2e-3}, {}};
  PowerMonitor a(bounded, {{"chip0", "test", 700, &e, 64}}, &sw, 1);
  PowerMonitor b(free, {{"chip0", "test", 700, &e, 64}}, &sw, 1);
  std::mt19937_64 rng(13);
  for (int i = 0; i < 3000; ++i) {
    const double start = 1e-6 * static_cast<double>(rng() % 5000);
    const auto activity = static_cast<tlm::Activity>(rng() % 10);
    const tlm::ActivityEvent ev = event(activity, 1e6 * static_cast<double>(1 + rng() % 100), start,
                                        start + 1e-6 * static_cast<double>(rng() % 50));
    a.chip(0)->onActivity(ev);
    b.chip(0)->onActivity(ev);
    tlm::ActivityEvent hop = event(tlm::Activity::kSwitchBytes, 4096, start, start + 1e-6);
    a.onActivity(hop);
    b.onActivity(hop);
  }
  const double end = 5.1e-3;  // 510 bins of 10 us: merged to 80 us (64 bins)
  const nlohmann::ordered_json ra = a.report(end, PowerMonitor::ServingWindow{1e-3, 4e-3, 100, 100});
  const nlohmann::ordered_json rb = b.report(end, PowerMonitor::ServingWindow{1e-3, 4e-3, 100, 100});
  EXPECT_DOUBLE_EQ(ra["interval_s"].get<double>(), 8 * kInterval);
  EXPECT_DOUBLE_EQ(ra["configured_interval_s"].get<double>(), kInterval);
  EXPECT_DOUBLE_EQ(rb["interval_s"].get<double>(), kInterval);
  const double energy = rb["platform"]["energy_j"].get<double>();
  EXPECT_NEAR(ra["platform"]["energy_j"].get<double>(), energy, 1e-9 * energy);
  EXPECT_NEAR(
      ra["chips"][0]["by_phase_j"]["idle"].get<double>() + ra["chips"][0]["by_phase_j"]["static_busy"].get<double>(),
      rb["chips"][0]["by_phase_j"]["idle"].get<double>() + rb["chips"][0]["by_phase_j"]["static_busy"].get<double>(),
      1e-9 * energy);
  // Windows at the merged interval: 20 us is one 80 us bin; 1.2 ms is 15 of them. Merged
  // bins average the fine ones, so no sustained maximum rises.
  const auto& sa = ra["platform"]["sustained"];
  EXPECT_DOUBLE_EQ(sa[0]["window_s"].get<double>(), 8 * kInterval);
  EXPECT_DOUBLE_EQ(sa[1]["window_s"].get<double>(), 1.2e-3);
  EXPECT_LE(sa[0]["max_w"].get<double>(), rb["platform"]["sustained"][0]["max_w"].get<double>());
  EXPECT_LE(ra["platform"]["peak_bin_w"].get<double>(), rb["platform"]["peak_bin_w"].get<double>());
  // The serving window's energy cuts the edge bins in proportion: close to the exact figure.
  const double windowJ = rb["serving"]["energy_j"].get<double>();
  EXPECT_NEAR(ra["serving"]["energy_j"].get<double>(), windowJ, 0.05 * windowJ);
}

TEST(PowerMonitor, AnIdlePlatformDrawsExactlyItsStaticPower) {
  const ChipEnergyConfig e = energy();
  const SwitchEnergyConfig sw{1e-12, 1e-9, 50.0};
  PowerManagementConfig config{kInterval, {1e-3}, {}};
  PowerMonitor monitor(config, {{"chip0", "test", 700, &e, 64}, {"chip1", "test", 700, &e, 64}}, &sw, 1);
  ASSERT_TRUE(monitor.modelled());
  const double end = 5e-3;
  const nlohmann::ordered_json r = monitor.report(end, std::nullopt);
  EXPECT_DOUBLE_EQ(e.idleW(), 100.0);
  for (const auto& chip : r["chips"]) {
    EXPECT_NEAR(chip["average_w"].get<double>(), 100.0, 1e-9);
    EXPECT_NEAR(chip["peak_bin_w"].get<double>(), 100.0, 1e-9);
    EXPECT_NEAR(chip["by_phase_j"]["idle"].get<double>(), 100.0 * end, 1e-12);
  }
  EXPECT_NEAR(r["platform"]["average_w"].get<double>(), 250.0, 1e-9);
  EXPECT_NEAR(r["platform"]["sustained"][0]["max_w"].get<double>(), 250.0, 1e-9);
}

// A serving window's power per chip comes two ways: the platform's (the switches' share
// included, what a chip costs to run) and the chips' own (what a GPU's board telemetry reports,
// the one a measured power per GPU is compared with). They differ by exactly the switches'.
TEST(PowerMonitor, AChipsOwnServingPowerLeavesTheSwitchesOut) {
  const ChipEnergyConfig e = energy();
  const SwitchEnergyConfig sw{1e-12, 1e-9, 50.0};
  PowerManagementConfig config{kInterval, {1e-3}, {}};
  PowerMonitor monitor(config, {{"chip0", "test", 700, &e, 64}, {"chip1", "test", 700, &e, 64}}, &sw, 1);
  for (int i = 0; i < 200; ++i) {
    const double start = 1e-5 * i;
    monitor.chip(0)->onActivity(event(tlm::Activity::kDramReadBursts, 1000, start, start + 5e-6));
    monitor.onActivity(event(tlm::Activity::kSwitchBytes, 1 << 20, start, start + 5e-6));
  }
  const nlohmann::ordered_json r = monitor.report(3e-3, PowerMonitor::ServingWindow{0.5e-3, 2.5e-3, 100, 100});
  const auto& serving = r["serving"];
  const double duration = 2e-3;
  const double switchesJ = serving["energy_by_level_j"]["switches"].get<double>();
  EXPECT_GT(switchesJ, 50.0 * duration) << "static and bytes";
  const double platformW = serving["average_power_per_chip_w"].get<double>();
  const double chipW = serving["average_chip_power_w"].get<double>();
  EXPECT_NEAR(platformW - chipW, switchesJ / duration / 2, 1e-9 * platformW);
  EXPECT_NEAR(chipW, (serving["energy_j"].get<double>() - switchesJ) / duration / 2, 1e-9 * chipW);
  EXPECT_GT(chipW, e.idleW()) << "chip 0 worked";
}

TEST(PowerMonitor, ComponentsAndTimelineAddUpToTheTotal) {
  const ChipEnergyConfig e = energy();
  PowerManagementConfig config{kInterval, {1e-4, 1e-3}, {}};
  PowerMonitor monitor(config, {{"chip0", "test", 300, &e, 64}, {"chip1", "test", 300, &e, 64}}, nullptr, 0);
  monitor.setMirrors({-1, 0});
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    const double start = 1e-6 * static_cast<double>(rng() % 2000);
    const auto activity = static_cast<tlm::Activity>(rng() % 12);  // the chip activities up to the network's
    monitor.chip(0)->onActivity(event(activity, 1e6 * static_cast<double>(1 + rng() % 100), start,
                                      start + 1e-6 * static_cast<double>(rng() % 50)));
  }
  const double end = 2.1e-3;
  const nlohmann::ordered_json r = monitor.report(end, std::nullopt);
  const auto& chip = r["chips"][0];
  double components = 0.0;
  for (const auto& [name, joules] : chip["by_level_j"].items()) components += joules.get<double>();
  double phases = 0.0;
  for (const auto& [name, joules] : chip["by_phase_j"].items()) phases += joules.get<double>();
  const double total = chip["energy_j"].get<double>();
  EXPECT_NEAR(components, total, 1e-9 * total);
  EXPECT_NEAR(phases, total, 1e-9 * total);
  // The timeline integrates to the total within 0.1% (the report's points average whole bins).
  double integral = 0.0;
  for (const auto& w : r["timeline"]["chips_w"]["chip0"])
    integral += w.get<double>() * r["timeline"]["interval_s"].get<double>();
  EXPECT_NEAR(integral, total, 1e-3 * total);
  // The mirror reports its leader's power; the platform counts both.
  EXPECT_EQ(r["chips"][1]["mirror_of"], "chip0");
  EXPECT_DOUBLE_EQ(r["chips"][1]["energy_j"].get<double>(), total);
  EXPECT_NEAR(r["platform"]["energy_j"].get<double>(), 2 * total, 1e-9 * total);
  // The chip averages above its idle power; a 300 W rating is exceeded in the busiest windows.
  EXPECT_GT(chip["average_w"].get<double>(), e.idleW());
  EXPECT_GE(chip["sustained"][0]["max_w"].get<double>(), chip["average_w"].get<double>());
  EXPECT_GE(chip["peak_bin_w"].get<double>(), chip["sustained"][0]["max_w"].get<double>());
}

TEST(PowerMonitor, WithoutAnEnergyModelThereIsNoPowerReport) {
  PowerManagementConfig config{kInterval, {1e-3}, {}};
  const PowerMonitor monitor(config, {{"chip0", "bare", 700, nullptr, 64}}, nullptr, 0);
  EXPECT_FALSE(monitor.modelled());
  const nlohmann::ordered_json r = monitor.report(1e-3, std::nullopt);
  EXPECT_EQ(r["modelled"], false);
  EXPECT_NE(r["reason"].get<std::string>().find("bare"), std::string::npos);
}

}  // namespace
}  // namespace scoville::power
