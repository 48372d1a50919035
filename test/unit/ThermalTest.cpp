// The thermal model with closed-form answers: a step in power gives the RC exponential, the steady
// state is P x R_total over the ambient, leakage doubles every `doubling` kelvin and the fixed point
// it makes with the cooling is found (or a runaway reported), a stepped run converges to that fixed
// point and agrees with a finer step, and HBM refresh doubles above its limit: in the thermal control
// that decides it (the refresh policies that apply it: DramPolicyTest.cpp, RefreshRate).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fstream>
#include <nlohmann/json.hpp>

#include "config/Loader.h"
#include "hw/power/ThermalControl.h"
#include "power/ChipPower.h"
#include "power/PowerConfig.h"
#include "power/ThermalConfig.h"
#include "power/ThermalModel.h"
#include "power/ThermalNetwork.h"

namespace scoville::power {
namespace {

/// The die -> lid -> cooler chain of docs/thermal.md with round numbers (the HBM off to the side).
ThermalConfig chain() {
  ThermalConfig c;
  c.die = {0.02, 1.0};
  c.hbm = {0.2, 1.0};
  c.lid = {0.01, 40.0};
  c.coolers = {CoolerConfig{"liquid", CoolingKind::kLiquid, 40.0, 0.02, 300.0},
               CoolerConfig{"air", CoolingKind::kAir, 35.0, 0.05, 1500.0}};
  c.cooling = "liquid";
  c.junctionLimitC = 105.0;
  c.hbmRefreshLimitC = 85.0;
  c.hbmRefreshHysteresisK = 1.0;
  c.leakage = {60.0, 20.0};
  c.start = "ambient";
  c.stepS = 1e-3;
  c.throttleHysteresisK = 2.0;
  return c;
}

TEST(ThermalNetwork, AStepInPowerGivesTheRcExponential) {
  const double r = 0.05;
  const double c = 20.0;  // tau = 1 s
  const ThermalNetwork one({{"die", r, c, -1}});
  EXPECT_NEAR(one.timeConstantsS().at(0), r * c, 1e-12);
  for (double t : {1e-3, 0.1, 1.0, 3.0, 10.0}) {
    std::vector<double> rise{0.0};
    one.step(rise, {400.0}, t);
    EXPECT_NEAR(rise[0], 400.0 * r * (1.0 - std::exp(-t / (r * c))), 1e-9) << "after " << t << " s";
    // Cooling back down from there, with no power: the same exponential, decaying.
    const double hot = rise[0];
    one.step(rise, {0.0}, t);
    EXPECT_NEAR(rise[0], hot * std::exp(-t / (r * c)), 1e-9);
  }
  // Exact for any step: a thousand 1 ms steps land where one 1 s step does.
  std::vector<double> fine{0.0};
  std::vector<double> coarse{0.0};
  for (int i = 0; i < 1000; ++i) one.step(fine, {400.0}, 1e-3);
  one.step(coarse, {400.0}, 1.0);
  EXPECT_NEAR(fine[0], coarse[0], 1e-9);
}

TEST(ThermalNetwork, RejectsNetworksThatCannotBeSolved) {
  EXPECT_THROW(ThermalNetwork({{"die", 0.0, 1.0, -1}}), std::invalid_argument);
  EXPECT_THROW(ThermalNetwork({{"die", 0.1, -1.0, -1}}), std::invalid_argument);
  EXPECT_THROW(ThermalNetwork({{"a", 0.1, 1.0, 1}, {"b", 0.1, 1.0, 0}}), std::invalid_argument) << "a cycle";
  EXPECT_THROW(ThermalNetwork({{"a", 0.1, 1.0, 5}}), std::invalid_argument);
}

TEST(ThermalModel, SteadyStateIsPowerTimesTheResistancesOverTheAmbient) {
  const ThermalConfig c = chain();
  ThermalModel model(c);
  model.settleAt(500.0, 0.0);
  // The die's heat crosses die -> lid -> cooler -> coolant; the HBM, with no power, sits at the lid.
  EXPECT_NEAR(model.temperatureC(ThermalModel::kDie), 40.0 + 500.0 * (0.02 + 0.01 + 0.02), 1e-9);
  EXPECT_NEAR(model.temperatureC(ThermalModel::kLid), 40.0 + 500.0 * (0.01 + 0.02), 1e-9);
  EXPECT_NEAR(model.temperatureC(ThermalModel::kHbm), model.temperatureC(ThermalModel::kLid), 1e-9);
  EXPECT_NEAR(model.temperatureC(ThermalModel::kCooler), 40.0 + 500.0 * 0.02, 1e-9);
  // HBM power rises the HBM over its resistance and everything it shares with the die.
  model.settleAt(500.0, 50.0);
  EXPECT_NEAR(model.temperatureC(ThermalModel::kHbm), 40.0 + 550.0 * 0.03 + 50.0 * 0.2, 1e-9);
  EXPECT_NEAR(model.temperatureC(ThermalModel::kDie), 40.0 + 550.0 * 0.03 + 500.0 * 0.02, 1e-9);
  // A run long against every time constant reaches that state from the ambient.
  ThermalModel run(c);
  for (int i = 0; i < 120; ++i) run.advance(1.0, 500.0, 50.0);
  EXPECT_NEAR(run.temperatureC(ThermalModel::kDie), model.temperatureC(ThermalModel::kDie), 1e-6);
  // The highest power held at the junction limit: (105 - 40 - Z_dh P_hbm) / Z_dd + P_hbm.
  EXPECT_NEAR(model.sustainableW(50.0), (105.0 - 40.0 - 0.03 * 50.0) / 0.05 + 50.0, 1e-9);
  // Air: a warmer inlet and a worse heat sink hold less.
  ThermalConfig air = c;
  air.cooling = "air";
  EXPECT_NEAR(ThermalModel(air).sustainableW(0.0), (105.0 - 35.0) / (0.02 + 0.01 + 0.05), 1e-9);
}

TEST(ThermalModel, LeakageDoublesEveryDoublingAndFindsItsFixedPoint) {
  const ThermalConfig c = chain();
  EXPECT_DOUBLE_EQ(c.leakage.scale(60.0), 1.0);
  EXPECT_DOUBLE_EQ(c.leakage.scale(80.0), 2.0);
  EXPECT_DOUBLE_EQ(c.leakage.scale(100.0), 4.0);
  EXPECT_DOUBLE_EQ(c.leakage.scale(40.0), 0.5);
  // A chip's core-rail leakage follows the scale; the rest of its static power does not.
  ChipEnergyConfig e;
  e.uncoreW = 20.0;
  e.tensorCore.staticW = 30.0;
  e.sram.staticW = 10.0;
  e.hbm.staticW = 15.0;
  EXPECT_DOUBLE_EQ(e.staticAtW(1.0, 0.0, 2.0), e.idleW() + e.coreStaticW());
  EXPECT_DOUBLE_EQ(e.staticAtW(1.0, 0.0, 0.5), e.idleW() - 0.5 * e.coreStaticW());

  // The die's steady temperature T = 40 + 0.05 (300 + 50 x 2^((T - 60) / 20)), as a fixed-point
  // iteration finds it.
  const ThermalModel model(c);
  const auto steady = model.steadyState(300.0, 50.0, 0.0);
  ASSERT_TRUE(steady.has_value());
  double t = 40.0;
  for (int i = 0; i < 200; ++i) t = 40.0 + 0.05 * (300.0 + 50.0 * c.leakage.scale(t));
  EXPECT_NEAR(steady->dieC, t, 1e-6);
  EXPECT_NEAR(steady->dieW, 300.0 + 50.0 * c.leakage.scale(t), 1e-6);
  // Leakage that outgrows the cooling has no steady state: a thermal runaway.
  EXPECT_FALSE(model.steadyState(300.0, 2000.0, 0.0).has_value());
  ThermalConfig hot = c;
  hot.leakage.doublingK = 2.0;  // a leakage far steeper than silicon's
  EXPECT_FALSE(ThermalModel(hot).steadyState(500.0, 50.0, 0.0).has_value());
}

// The reference chip's package (platforms/thermal/jalapeno.yaml, all assumptions) against the one
// measured package of its class in the repo: the H200's two idle-to-load steps of 4 s, whose sensor
// temperatures the raw microbenchmark files record. The file's values come from the die's and the
// lid's materials, not a fit (these two steps decided against doubling the die's resistance for hot
// spots, docs/thermal.md).
TEST(ThermalModel, TheReferencePackagePredictsTheH200sMeasuredFourSecondRise) {
  const std::string root = config::dataDirectory();
  const ThermalConfig air = ThermalConfig::schema().parse(
      config::loadConfigFile("thermal", root + "/platforms/thermal/jalapeno.yaml", {{"cooling", "air"}}));
  for (const char* run : {"2026-12-04T1140Z", "2026-12-04T1143Z"}) {
    std::ifstream in(root + "/workloads/validation/raw/h200-microbench-" + run + ".json");
    ASSERT_TRUE(in) << run;
    const nlohmann::json power = nlohmann::json::parse(in)["power"];
    ASSERT_EQ(power[0]["load"], "idle");
    ASSERT_EQ(power[1]["load"], "hbm_copy");
    const double stepW = power[1]["watts"].get<double>() - power[0]["watts"].get<double>();
    const double measuredK = power[1]["temperature_c"].get<double>() - power[0]["temperature_c"].get<double>();
    // A copy at ~4.2 TB/s puts ~70 W in the stacks themselves (2.0 / 2.2 pJ/bit read / write).
    const double hbmW = 70.0;
    ThermalModel model(air);
    model.settleAt(0.0, 0.0);
    model.advance(4.0, stepW - hbmW, hbmW);
    const double predictedK = model.temperatureC(ThermalModel::kDie) - model.ambientC();
    EXPECT_NEAR(predictedK, measuredK, 0.15 * measuredK)
        << run << ": " << stepW << " W more for 4 s; the sensor reads whole degrees";
  }
}

/// A chip drawing constant power, with the core leakage at whatever the thermal control announced.
class ConstantChip : public PowerSensor {
 public:
  double dynamicW = 0.0;
  double hbmDynamicW = 0.0;
  double otherStaticW = 40.0;
  double coreLeakageW = 50.0;  ///< at the reference temperature
  double hbmStatic = 10.0;
  double leakageScale = 1.0;

  double recentJ(double from, double to) const override { return (dynamicW + hbmDynamicW) * (to - from); }
  double recentCoreJ(double, double) const override { return 0.0; }
  double recentHbmJ(double from, double to) const override { return hbmDynamicW * (to - from); }
  void forgetBefore(double) const override {}
  double staticAtW(double) const override { return otherStaticW + hbmStatic + coreLeakageW * leakageScale; }
  double hbmStaticW() const override { return hbmStatic; }
  double coreLeakageRefW(double) const override { return coreLeakageW; }
};

struct Announced {
  double timeS = 0.0;
  double dieC = 0.0;
  double hbmC = 0.0;
  double refreshRate = 1.0;
};

TEST(ThermalControl, ASteppedRunConvergesToTheLeakageFixedPointAndAgreesWithAFinerStep) {
  const ThermalConfig c = chain();
  const ChipEnergyConfig energy;
  const auto runFor = [&](double stepS, double seconds, std::vector<Announced>& log, bool idle = false) {
    ThermalConfig k = c;
    k.stepS = stepS;
    ConstantChip chip;
    chip.dynamicW = 300.0;
    hw::ThermalControl control(
        k, energy, 700.0, chip,
        [&](double t, const ThermalModel& m, double scale, double rate) {
          chip.leakageScale = scale;
          log.push_back({t, m.temperatureC(ThermalModel::kDie), m.temperatureC(ThermalModel::kHbm), rate});
        },
        {});
    control.start();
    control.advanceTo(seconds, idle ? 0.0 : seconds, 1.0);
    return control.model().temperatureC(ThermalModel::kDie);
  };
  std::vector<Announced> coarse;
  const double end = runFor(1e-3, 60.0, coarse);
  EXPECT_NEAR(coarse.front().dieC, 40.0, 1e-12) << "start: ambient";
  // 60 s is eleven times the slowest time constant: the fixed point of power and leakage.
  const auto steady = ThermalModel(c).steadyState(300.0 + 40.0, 50.0, 10.0);
  ASSERT_TRUE(steady.has_value());
  EXPECT_NEAR(end, steady->dieC, 0.01);
  // Taken as an idle stretch (steps doubling up to 1 s): few steps, the same place.
  std::vector<Announced> idle;
  EXPECT_NEAR(runFor(1e-3, 60.0, idle, true), end, 0.01);
  EXPECT_LT(idle.size(), 100u);
  // The same run at a tenth of the step, over its first second (where the die moves fastest).
  std::vector<Announced> fine;
  runFor(1e-4, 1.0, fine);
  std::vector<Announced> first;
  runFor(1e-3, 1.0, first);
  ASSERT_EQ(first.size(), 1001u) << "one announcement at the start and one per step";
  ASSERT_EQ(fine.size(), 10001u);
  double worst = 0.0;
  for (std::size_t i = 0; i < first.size(); ++i) {
    ASSERT_NEAR(first[i].timeS, fine[10 * i].timeS, 1e-9);
    worst = std::max(worst, std::fabs(first[i].dieC - fine[10 * i].dieC));
  }
  EXPECT_LT(worst, 0.02) << "the leakage is coupled once per step; a 1 ms step is fine enough";
}

TEST(ThermalControl, HbmRefreshDoublesAboveItsLimitAndReturnsBelowTheHysteresis) {
  ThermalConfig c = chain();
  c.start = "idle";
  ChipEnergyConfig energy;
  energy.uncoreW = 40.0;
  energy.hbm.staticW = 10.0;
  ConstantChip chip;
  chip.coreLeakageW = 0.0;
  chip.otherStaticW = 40.0;
  std::vector<std::pair<double, double>> rates;
  std::vector<Announced> log;
  hw::ThermalControl control(
      c, energy, 700.0, chip,
      [&](double t, const ThermalModel& m, double, double rate) {
        log.push_back({t, m.temperatureC(ThermalModel::kDie), m.temperatureC(ThermalModel::kHbm), rate});
      },
      [&](double t, double rate) { rates.emplace_back(t, rate); });
  control.start();
  // Idle: 40 W on the die and 10 W in the HBM settle it at 40 + 50 x 0.03 + 10 x 0.2 = 43.5 C.
  EXPECT_NEAR(log.front().hbmC, 43.5, 1e-9);
  EXPECT_TRUE(rates.empty());
  // The HBM working hard: 300 W in it settles it at 40 + 340 x 0.03 + 300 x 0.2 = 110 C, past 85 C.
  chip.hbmDynamicW = 290.0;
  control.advanceTo(30.0, 30.0, 1.0);
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_EQ(rates[0].second, 2.0);
  for (const Announced& a : log) EXPECT_EQ(a.refreshRate, a.hbmC > 85.0 || a.timeS > rates[0].first ? 2.0 : 1.0);
  // It doubled at the first step that ended above the limit.
  const auto over = std::find_if(log.begin(), log.end(), [](const Announced& a) { return a.hbmC > 85.0; });
  ASSERT_NE(over, log.end());
  EXPECT_DOUBLE_EQ(rates[0].first, over->timeS);
  // Idle again: back to the normal rate once below 85 - 1 C, not before.
  chip.hbmDynamicW = 0.0;
  const std::size_t before = log.size();
  control.advanceTo(60.0, 30.0, 1.0);
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_EQ(rates[1].second, 1.0);
  for (std::size_t i = before; i < log.size(); ++i) {
    if (log[i].timeS < rates[1].first) {
      EXPECT_GE(log[i].hbmC, 84.0);
    }
  }
}

}  // namespace
}  // namespace scoville::power
