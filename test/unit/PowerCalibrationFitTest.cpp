// The pieces of the power calibration on their own: the bounded least-squares solver against
// closed forms and brute force, the clock gating's union of busy intervals, the pricing of a
// measured load, and the fit recovering constants it generated the data from.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "hw/power/ClockGating.h"
#include "power/EnergyKeys.h"
#include "workloads/BoundedLeastSquares.h"
#include "workloads/PowerCalibration.h"

namespace scoville::workload {
namespace {

double objective(const std::vector<std::vector<double>>& rows, const std::vector<double>& b,
                 const std::vector<double>& x) {
  double sum = 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double e = -b[r];
    for (std::size_t i = 0; i < x.size(); ++i) e += rows[r][i] * x[i];
    sum += e * e;
  }
  return sum;
}

TEST(BoundedLeastSquares, AnInteriorOptimumIsTheNormalEquations) {
  // x + y = 3, x - y = 1, 2x = 4: least squares x = 2, y = 1 exactly.
  const BoundedLeastSquares s = solveBoundedLeastSquares({{1, 1}, {1, -1}, {2, 0}}, {3, 1, 4}, {-10, -10}, {10, 10});
  EXPECT_NEAR(s.x[0], 2.0, 1e-12);
  EXPECT_NEAR(s.x[1], 1.0, 1e-12);
  EXPECT_FALSE(s.atLower[0] || s.atUpper[0] || s.atLower[1] || s.atUpper[1]);
  EXPECT_NEAR(s.residual, 0.0, 1e-20);
}

TEST(BoundedLeastSquares, AnOptimumPastABoundStopsAtItAndTheRestAdapts) {
  // The same system with y <= 0.5: y stops at 0.5 and x minimises (x + 0.5 - 3)^2 + (x - 0.5 - 1)^2
  // + (2x - 4)^2, i.e. 6x = 2.5 + 1.5 + 8: x = 2.
  const BoundedLeastSquares s = solveBoundedLeastSquares({{1, 1}, {1, -1}, {2, 0}}, {3, 1, 4}, {-10, -10}, {10, 0.5});
  EXPECT_NEAR(s.x[1], 0.5, 1e-15);
  EXPECT_TRUE(s.atUpper[1]);
  EXPECT_NEAR(s.x[0], 2.0, 1e-12);
  // Non-negative least squares: the unconstrained optimum (-1) is clamped at 0.
  const BoundedLeastSquares nn = solveBoundedLeastSquares({{1.0}}, {-1.0}, {0.0}, {1.0});
  EXPECT_EQ(nn.x[0], 0.0);
  EXPECT_TRUE(nn.atLower[0]);
}

// Against every assignment of each variable to its lower bound, its upper bound or free: the
// optimum of a strictly convex problem is the best feasible one of those.
TEST(BoundedLeastSquares, MatchesBruteForceOverEveryActiveSet) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = 3;
    std::vector<std::vector<double>> rows(6, std::vector<double>(n));
    std::vector<double> b(6);
    for (std::size_t r = 0; r < 6; ++r) {
      for (double& v : rows[r]) v = u(rng);
      b[r] = 2.0 * u(rng);
    }
    std::vector<double> lo(n), hi(n);
    for (std::size_t i = 0; i < n; ++i) {
      lo[i] = -0.5 + 0.4 * u(rng);
      hi[i] = lo[i] + 0.1 + 0.5 * (1.0 + u(rng));
    }
    const BoundedLeastSquares s = solveBoundedLeastSquares(rows, b, lo, hi);
    double best = std::numeric_limits<double>::infinity();
    for (int code = 0; code < 27; ++code) {
      // Held variables at their bound; the free ones from the normal equations (Cramer's rule on at
      // most 3 unknowns), kept only when they fall inside their bounds.
      std::vector<int> state(n);
      for (std::size_t i = 0, c = static_cast<std::size_t>(code); i < n; ++i, c /= 3)
        state[i] = static_cast<int>(c % 3);
      std::vector<double> x(n, 0.0);
      std::vector<std::size_t> free;
      for (std::size_t i = 0; i < n; ++i) {
        if (state[i] == 1) x[i] = lo[i];
        if (state[i] == 2) x[i] = hi[i];
        if (state[i] == 0) free.push_back(i);
      }
      const std::size_t m = free.size();
      std::vector<std::vector<double>> h(m, std::vector<double>(m, 0.0));
      std::vector<double> g(m, 0.0);
      for (std::size_t r = 0; r < rows.size(); ++r) {
        double fixed = b[r];
        for (std::size_t i = 0; i < n; ++i) {
          if (state[i] != 0) fixed -= rows[r][i] * x[i];
        }
        for (std::size_t a = 0; a < m; ++a) {
          g[a] += rows[r][free[a]] * fixed;
          for (std::size_t c = 0; c < m; ++c) h[a][c] += rows[r][free[a]] * rows[r][free[c]];
        }
      }
      const auto det = [](const std::vector<std::vector<double>>& a) {
        if (a.size() == 1) return a[0][0];
        if (a.size() == 2) return a[0][0] * a[1][1] - a[0][1] * a[1][0];
        return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
               a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
      };
      if (m > 0) {
        const double d = det(h);
        for (std::size_t a = 0; a < m; ++a) {
          auto replaced = h;
          for (std::size_t r = 0; r < m; ++r) replaced[r][a] = g[r];
          x[free[a]] = det(replaced) / d;
        }
      }
      bool feasible = true;
      for (std::size_t i = 0; i < n; ++i) feasible = feasible && x[i] >= lo[i] - 1e-12 && x[i] <= hi[i] + 1e-12;
      if (feasible) best = std::min(best, objective(rows, b, x));
    }
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_GE(s.x[i], lo[i]);
      EXPECT_LE(s.x[i], hi[i]);
    }
    EXPECT_LE(objective(rows, b, s.x), best * (1.0 + 1e-9) + 1e-15) << trial;
  }
}

TEST(BoundedLeastSquares, BadInputIsRefused) {
  EXPECT_THROW(solveBoundedLeastSquares({{1.0}}, {1.0}, {1.0}, {0.0}), std::invalid_argument);
  EXPECT_THROW(solveBoundedLeastSquares({{1.0, 2.0}}, {1.0}, {0.0}, {1.0}), std::invalid_argument);
  // Two identical columns and no prior rows: not unique, but what it returns is a minimiser.
  const BoundedLeastSquares twin = solveBoundedLeastSquares({{1.0, 1.0}, {2.0, 2.0}}, {1.0, 2.0}, {-5, -5}, {5, 5});
  EXPECT_NEAR(twin.x[0] + twin.x[1], 1.0, 1e-12);
  EXPECT_NEAR(twin.residual, 0.0, 1e-20);
}

TEST(ClockGating, HandsOutTheUnionOfBusyIntervalsOnce) {
  hw::ClockGating gating(1e-6, 10e-6);
  std::vector<hw::ClockGating::Stretch> out;
  gating.busy(0.0, 5e-6, out);      // open, below a stretch: nothing yet
  gating.busy(2e-6, 8e-6, out);     // overlaps
  gating.busy(8.5e-6, 12e-6, out);  // 0.5 us gap < hold: the clocks stay on; 12 us >= a stretch
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].startS, 0.0);
  EXPECT_DOUBLE_EQ(out[0].endS, 12e-6);
  gating.busy(20e-6, 25e-6, out);  // 8 us gap > hold: the first interval closed, a new one opens
  gating.busy(21e-6, 24e-6, out);  // inside
  gating.flush(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[1].startS, 20e-6);
  EXPECT_DOUBLE_EQ(out[1].endS, 25e-6);
  gating.flush(out);
  EXPECT_EQ(out.size(), 2u) << "nothing is handed out twice";
  EXPECT_NEAR(gating.handedOutS(), 17e-6, 1e-18);
  // A late report before the open interval adds only what was not covered.
  gating.busy(30e-6, 40e-6, out);
  gating.busy(28e-6, 32e-6, out);
  gating.flush(out);
  EXPECT_NEAR(gating.handedOutS(), 17e-6 + 12e-6, 1e-18);
}

// Random intervals in start order: the handed-out time is exactly the union with sub-hold gaps filled.
TEST(ClockGating, InStartOrderTheTotalIsTheUnionWithShortGapsFilled) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> gap(0.0, 4e-6), length(0.0, 6e-6);
  const double hold = 1e-6;
  hw::ClockGating gating(hold, 10e-6);
  std::vector<hw::ClockGating::Stretch> out;
  double t = 0.0, unionEnd = -1.0, expected = 0.0;
  for (int i = 0; i < 5000; ++i) {
    t += gap(rng) * (i % 3 == 0 ? 1.0 : 0.1);
    const double end = t + length(rng);
    gating.busy(t, end, out);
    // The reference: extend while within the hold, else start anew.
    if (unionEnd < 0.0 || t > unionEnd + hold) {
      expected += end - t;
      unionEnd = end;
    } else if (end > unionEnd) {
      expected += end - unionEnd;
      unionEnd = end;
    }
  }
  gating.flush(out);
  double total = 0.0;
  for (const auto& s : out) {
    EXPECT_GT(s.endS, s.startS);
    total += s.endS - s.startS;
  }
  EXPECT_NEAR(total, expected, 1e-12 * expected);
}

power::ChipEnergyConfig testEnergy() {
  power::ChipEnergyConfig e;
  e.uncoreW = 30;
  e.floorW = 100;
  e.leakagePerVolt = 3.0;
  e.tensorCore.perFlop.bf16 = 1e-12;
  e.tensorCore.staticW = 20;
  e.vectorUnit.perOpJ = 10e-12;
  e.hbm.readJPerByte = 16e-12;
  e.hbm.refreshJ = 100e-9;
  e.hbm.staticW = 20;
  e.memoryInterface = {20e-12, 20e-12, 0.0};
  e.dvfs = {{2e9, 1.0}, {1e9, 0.8}};
  return e;
}

TEST(PowerLoad, IsStaticRefreshAndOneLaunchAtItsRateAndVoltage) {
  const power::ChipEnergyConfig e = testEnergy();
  PowerLoad idle;
  idle.id = "idle";
  EXPECT_DOUBLE_EQ(loadPowerW(e, 1e6, idle), 70.0 + 0.1) << "statics plus 1e6 refreshes/s of 100 nJ";
  PowerLoad read;
  read.id = "read";
  read.kernel = "k";
  read.launchS = 1e-3;
  read.simulatedLaunchS = 0.5e-3;
  read.perLaunch[static_cast<std::size_t>(power::Counter::kHbmReadBytes)] = 1e9;
  read.perLaunch[static_cast<std::size_t>(power::Counter::kInterfaceReadBytes)] = 1e9;
  read.perLaunch[static_cast<std::size_t>(power::Counter::kFlopsBf16)] = 1e11;
  read.perLaunch[static_cast<std::size_t>(power::Counter::kClockActiveSeconds)] = 0.4e-3;  // replaced by duty
  // 1 GB at 36 pJ/B + 1e11 FLOP at 1 pJ per ms, plus the floor.
  EXPECT_NEAR(loadPowerW(e, 0.0, read), 70.0 + 36.0e-3 / 1e-3 + 0.1 / 1e-3 + 100.0, 1e-9);
  EXPECT_NEAR(loadPowerW(e, 0.0, read, true), 70.0 + 36.0e-3 / 0.5e-3 + 0.1 / 0.5e-3 + 100.0, 1e-9);
  read.duty = 0.5;
  EXPECT_NEAR(loadPowerW(e, 0.0, read), 70.0 + 0.5 * (36.0 + 100.0 + 100.0), 1e-9);
  // At 1 GHz (0.8 V): the core rail's energy at 0.64, the floor at 0.64 x 0.5, core leakage lower.
  read.duty = 1.0;
  read.voltageScale = 0.8;
  read.frequencyScale = 0.5;
  const double leakage = 0.8 * std::exp(3.0 * -0.2);
  EXPECT_NEAR(loadPowerW(e, 0.0, read), 70.0 - 20.0 * (1 - leakage) + 36.0 + 100.0 * 0.64 + 100.0 * 0.32, 1e-9);
}

TEST(PowerLoad, AMeasuredClockIsAPointOnTheVoltageCurve) {
  const power::ChipEnergyConfig e = testEnergy();
  const OperatingPoint p = operatingPointOf(e, 1500e6, 2000e6);
  EXPECT_DOUBLE_EQ(p.frequencyScale, 0.75);
  EXPECT_NEAR(p.voltageScale, 0.9, 1e-12);
  const OperatingPoint none = operatingPointOf(e, 0.0, 2000e6);
  EXPECT_EQ(none.voltageScale, 1.0);
}

/// Loads whose measured power the model `truth` gives exactly.
std::vector<PowerLoad> syntheticLoads(const power::ChipEnergyConfig& truth) {
  std::vector<PowerLoad> loads;
  for (int i = 0; i < 8; ++i) {
    PowerLoad l;
    l.id = "p" + std::to_string(i);
    if (i > 0) {
      l.kernel = "k";
      l.launchS = 1e-3;
      l.duty = i % 3 == 0 ? 0.5 : 1.0;
      l.voltageScale = i == 5 ? 0.85 : 1.0;
      l.perLaunch[static_cast<std::size_t>(power::Counter::kHbmReadBytes)] = 1e8 * (i % 4 + 1);
      l.perLaunch[static_cast<std::size_t>(power::Counter::kInterfaceReadBytes)] = 1e8 * (i % 4 + 1);
      l.perLaunch[static_cast<std::size_t>(power::Counter::kFlopsBf16)] = 5e10 * (i % 5);
      l.perLaunch[static_cast<std::size_t>(power::Counter::kVectorOps)] = 1e9 * (i == 2 ? 3 : i % 2);
    }
    l.measuredW = loadPowerW(truth, 1e6, l);
    loads.push_back(l);
  }
  return loads;
}

PowerFitSpec spec(const std::string& floorMax) {
  PowerFitSpec s;
  s.training = {"p0", "p1", "p2", "p3", "p5"};
  s.prior = 1e-6;
  s.parameters = {{"uncore", "0 W", "100 W", "test"},
                  {"floor", "0 W", floorMax, "test"},
                  {"memory_interface.read_energy", "1 pJ/B", "60 pJ/B", "test"},
                  {"tensor_core.energy_per_flop.bf16", "0.1 pJ/FLOP", "3 pJ/FLOP", "test"},
                  {"vector_unit.energy_per_op", "1 pJ", "50 pJ", "test"}};
  s.tied = {{"memory_interface.write_energy", "memory_interface.read_energy", 1.0, "test"}};
  return s;
}

TEST(PowerFit, RecoversTheConstantsItsDataCameFromAndPredictsTheRest) {
  power::ChipEnergyConfig truth = testEnergy();
  const std::vector<PowerLoad> loads = syntheticLoads(truth);
  power::ChipEnergyConfig start = truth;  // the fitted constants start elsewhere
  start.uncoreW = 5;
  start.floorW = 1;
  start.memoryInterface = {2e-12, 2e-12, 0.0};
  start.tensorCore.perFlop.bf16 = 0.2e-12;
  start.vectorUnit.perOpJ = 2e-12;
  const PowerFitResult fit = fitPower(start, 1e6, loads, spec("300 W"));
  ASSERT_EQ(fit.parameters.size(), 5u);
  EXPECT_NEAR(fit.parameters[0].value, 30.0, 1e-3);
  EXPECT_NEAR(fit.parameters[1].value, 100.0, 1e-3);
  EXPECT_NEAR(fit.parameters[2].value, 20e-12, 1e-15);
  EXPECT_NEAR(fit.parameters[3].value, 1e-12, 1e-16);
  EXPECT_NEAR(fit.parameters[4].value, 10e-12, 1e-15);
  EXPECT_NEAR(fit.tied[0].value, fit.parameters[2].value, 1e-20);
  EXPECT_LT(fit.mape, 1e-4);
  int predicted = 0;
  for (const auto& p : fit.points) predicted += p.training ? 0 : 1;
  EXPECT_EQ(predicted, 3);
  EXPECT_NEAR(fit.fitted.floorW, 100.0, 1e-3);
}

TEST(PowerFit, AConstantWhoseRangeExcludesTheTruthEndsAtItsBound) {
  const power::ChipEnergyConfig truth = testEnergy();
  const PowerFitResult fit = fitPower(truth, 1e6, syntheticLoads(truth), spec("60 W"));
  EXPECT_DOUBLE_EQ(fit.parameters[1].value, 60.0);
  EXPECT_TRUE(fit.parameters[1].atUpper);
  EXPECT_GT(fit.mape, 0.1) << "the data cannot be met";
}

TEST(EnergyKeys, EveryKeyNamesAValueOfTheSection) {
  power::ChipEnergyConfig e = testEnergy();
  for (const power::EnergyKey& k : power::energyKeys()) {
    if (k.key.rfind("llc.", 0) == 0) {
      EXPECT_EQ(k.value(e), nullptr) << "no llc section";
      continue;
    }
    ASSERT_NE(k.value(e), nullptr) << k.key;
  }
  EXPECT_EQ(power::findEnergyKey("floor")->value(e), &e.floorW);
  EXPECT_EQ(power::findEnergyKey("nonsense"), nullptr);
}

}  // namespace
}  // namespace scoville::workload
