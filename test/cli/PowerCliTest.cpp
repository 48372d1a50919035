// The power report end to end: the shipped platforms' energy models, conservation in a real run,
// the H100 decode sanity band, and configuration errors in `power` sections.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

class PowerCliTest : public ServingCliFixture {
 protected:
  nlohmann::json run(const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> full{"run", "-q", "--out", dir.file(name)};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult r = runScoville(full);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    if (r.exitCode != 0) return nlohmann::json::object();
    return nlohmann::json::parse(readFile(dir.file(name + "/report.json")));
  }

  /// Runs with one override that must be rejected; returns stderr.
  std::string rejected(const std::string& set) {
    const ProcessResult r = runScoville({"run", "-q", "--out", dir.file("rejected"), "--set", set});
    EXPECT_EQ(r.exitCode, 2) << set << "\n" << r.err;
    return r.err;
  }
};

// A decode step on one jalapeno: HBM-bound, so the levels a byte crosses on its way from HBM
// dominate dynamic energy; the levels, phases and timeline add up to the chip's energy; power sits
// between idle and the rating.
TEST_F(PowerCliTest, DecodeStepEnergyAddsUpAndStaysUnderTheRating) {
  const nlohmann::json report = run("decode", {});
  const nlohmann::json& power = report["power"];
  ASSERT_EQ(power["modelled"], true);
  const nlohmann::json& chip = power["chips"][0];
  const double energy = chip["energy_j"].get<double>();
  double components = 0.0;
  for (const auto& [name, joules] : chip["by_level_j"].items()) components += joules.get<double>();
  double phases = 0.0;
  for (const auto& [name, joules] : chip["by_phase_j"].items()) phases += joules.get<double>();
  EXPECT_NEAR(components, energy, 1e-9 * energy);
  EXPECT_NEAR(phases, energy, 1e-9 * energy);
  double integral = 0.0;
  for (const auto& w : power["timeline"]["platform_w"])
    integral += w.get<double>() * power["timeline"]["interval_s"].get<double>();
  EXPECT_NEAR(integral, power["platform"]["energy_j"].get<double>(), 1e-3 * energy);
  EXPECT_NEAR(chip["average_w"].get<double>() * report["simulated_time_s"].get<double>(), energy, 1e-9 * energy);
  const nlohmann::json& level = chip["by_level_j"];
  const double hbm = level["hbm"].get<double>();
  const double path =
      hbm + level["memory_interface"].get<double>() + level["noc"].get<double>() + level["sram"].get<double>();
  EXPECT_GT(path, level["datapath"].get<double>() + level["register_file"].get<double>()) << "decode is memory-bound";
  EXPECT_GT(level["floor"].get<double>(), 0.0) << "the clocks ran while the step worked";
  EXPECT_GT(chip["average_w"].get<double>(), chip["idle_w"].get<double>());
  EXPECT_LT(chip["sustained"][0]["max_w"].get<double>(), chip["rated_w"].get<double>());
  EXPECT_EQ(chip["sustained"][0]["violations"], 0);
  // llama-3.1-70b is dense: its FFN energy is the dense FFN's, none is MoE's; the layer kinds add
  // up to the dynamic energy.
  double kinds = 0.0;
  for (const auto& [name, joules] : chip["by_layer_kind_j"].items()) kinds += joules.get<double>();
  EXPECT_NEAR(kinds, energy - level["static"].get<double>(), 1e-9 * energy);
  EXPECT_GT(chip["by_layer_kind_j"]["dense_ffn"].get<double>(), chip["by_layer_kind_j"]["attention"].get<double>());
  EXPECT_EQ(chip["by_layer_kind_j"]["moe"].get<double>(), 0.0);
  EXPECT_EQ(chip["dvfs"]["throttled_compute_s"].get<double>(), 0.0);
  // The HBM levels are priced from the DRAM bursts: the core at its read energy per byte, and the
  // PHYs and controller at the memory interface's (chips/jalapeno.yaml: 2.0 and 4.15 pJ/bit).
  const double bytes = report["stats"]["platform"]["groups"]["chip0"]["groups"]["hbm"]["stats"]["bytes_read"]["value"];
  EXPECT_GT(hbm, bytes * 8 * 2.0e-12 * 0.99);
  EXPECT_GT(level["memory_interface"].get<double>(), bytes * 8 * 4.15e-12 * 0.99);
}

// A cap below the uncapped sustained power: the governor lowers the core clock, the chip's power
// over the governor's window stays under the cap from its first decision on, power falls and
// latency rises.
TEST_F(PowerCliTest, APowerCapLowersPowerAndCostsLatency) {
  const std::vector<std::string> load = join({"-m", "gpt-oss-120b", "-p", "jalapeno-8"}, smallLoad(4, 4, 8192, 64));
  const nlohmann::json free = serve("uncapped", load);
  const nlohmann::json freeReport = nlohmann::json::parse(readFile(dir.file("uncapped/report.json")));
  const nlohmann::json& freeChip = freeReport["power"]["chips"][0];
  ASSERT_EQ(freeChip["dvfs"]["governor"], "none");
  EXPECT_EQ(freeChip["dvfs"]["changes"], 0);
  const double uncapped = freeChip["sustained"][1]["max_w"].get<double>();  // 10 ms
  const double cap = std::floor(0.93 * uncapped);
  const nlohmann::json capped =
      serve("capped", join(load, {"--set", "platform.power.governor.impl=cap_target", "--set",
                                  "platform.power.governor.target=" + std::to_string(static_cast<int>(cap)) + " W",
                                  "--set", "platform.power.governor.window=10 ms"}));
  const nlohmann::json report = nlohmann::json::parse(readFile(dir.file("capped/report.json")));
  const nlohmann::json& chip = report["power"]["chips"][0];
  const nlohmann::json& dvfs = chip["dvfs"];
  EXPECT_EQ(dvfs["governor"], "cap_target");
  EXPECT_DOUBLE_EQ(dvfs["cap_w"].get<double>(), cap);
  EXPECT_GT(dvfs["changes"].get<int>(), 0);
  double lowered = 0.0;
  for (std::size_t k = 1; k < dvfs["points"].size(); ++k) lowered += dvfs["points"][k]["time_s"].get<double>();
  EXPECT_GT(lowered, 0.0) << "some time below the nominal clock";
  EXPECT_LE(dvfs["max_w_after_first_decision"].get<double>(), cap);
  EXPECT_EQ(dvfs["windows_over_cap_after_first_decision"], 0);
  EXPECT_LT(chip["sustained"][1]["max_w"].get<double>(), uncapped);
  EXPECT_LT(chip["average_w"].get<double>(), freeChip["average_w"].get<double>());
  EXPECT_GT(capped["metrics"]["ttft_s"]["median"].get<double>(), free["metrics"]["ttft_s"]["median"].get<double>());
  EXPECT_GT(capped["metrics"]["e2el_s"]["median"].get<double>(), free["metrics"]["e2el_s"]["median"].get<double>());
  EXPECT_GT(dvfs["throttled_compute_s"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(report["power"]["chips"][1]["dvfs"]["throttled_compute_s"].get<double>(),
                   dvfs["throttled_compute_s"].get<double>())
      << "a mirrored rank throttles as its leader";
  // A timeline of 64 bins merges them many times over; the governor reads its own recent energy
  // at the configured interval, so it decides exactly as before and the run's timing is unchanged.
  const nlohmann::json merged = serve(
      "merged", join(load, {"--set", "platform.power.governor.impl=cap_target", "--set",
                            "platform.power.governor.target=" + std::to_string(static_cast<int>(cap)) + " W", "--set",
                            "platform.power.governor.window=10 ms", "--set", "platform.power.max_bins=64"}));
  const nlohmann::json mergedReport = nlohmann::json::parse(readFile(dir.file("merged/report.json")));
  EXPECT_EQ(merged["metrics"], capped["metrics"]);
  EXPECT_EQ(mergedReport["power"]["chips"][0]["dvfs"]["changes"], dvfs["changes"]);
  EXPECT_DOUBLE_EQ(mergedReport["power"]["configured_interval_s"].get<double>(), 10e-6);
  EXPECT_GE(mergedReport["power"]["interval_s"].get<double>(), report["simulated_time_s"].get<double>() / 64);
  const double energy = report["power"]["platform"]["energy_j"].get<double>();
  EXPECT_NEAR(mergedReport["power"]["platform"]["energy_j"].get<double>(), energy, 1e-9 * energy);
}

TEST_F(PowerCliTest, AGovernorNeedsOperatingPointsAndACap) {
  const ProcessResult r =
      runScoville({"run", "-q", "--out", dir.file("rejected"), "--set", "platform.power.governor.impl=cap_rated",
                   "--set", "platform.chip_types[0].power.dvfs=[]"});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("power.governor"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("jalapeno"), std::string::npos) << r.err;
  EXPECT_NE(rejected("platform.power.governor.impl=cap_target").find("target"), std::string::npos);
  EXPECT_NE(rejected("platform.power.governor.impl=cap_max").find("cap_target"), std::string::npos);
}

TEST_F(PowerCliTest, MissingEnergyForAPrecisionTheChipRunsIsNamed) {
  const std::string err = rejected("platform.chip_types[0].power.tensor_core.energy_per_flop.fp4=0 pJ/FLOP");
  EXPECT_NE(err.find("power.tensor_core.energy_per_flop"), std::string::npos) << err;
  EXPECT_NE(err.find("fp4"), std::string::npos) << err;
}

TEST_F(PowerCliTest, DvfsMustStartAtTheTensorCoreClock) {
  const std::string err = rejected("platform.chip_types[0].power.dvfs[0].frequency=2.5 GHz");
  EXPECT_NE(err.find("dvfs[0]"), std::string::npos) << err;
  EXPECT_NE(err.find("tensor_core.clock"), std::string::npos) << err;
}

TEST_F(PowerCliTest, BadPowerInputIsRejectedWithItsKey) {
  EXPECT_NE(rejected("platform.chip_types[0].power.hbm.read_energy=2 pJ").find("read_energy"), std::string::npos);
  EXPECT_NE(rejected("platform.chip_types[0].power.dvfs[1].voltage=2 V").find("dvfs[1]"), std::string::npos);
  EXPECT_NE(rejected("platform.power.windows=[1 us]").find("windows[0]"), std::string::npos);
  EXPECT_NE(rejected("platform.power.interval=0 s").find("interval"), std::string::npos);
  EXPECT_NE(rejected("platform.power.max_bins=8").find("max_bins"), std::string::npos);
  EXPECT_NE(rejected("platform.power.max_bins=1.5").find("max_bins"), std::string::npos);
}

}  // namespace
}  // namespace scoville::test
