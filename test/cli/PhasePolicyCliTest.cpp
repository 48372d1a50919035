// Per-phase policies in serving runs, end to end (scenario key `serving`, workloads/PhasePolicy.h):
// bandwidth_opt decode on a memory-bound model, its price on compute-bound prefill, transition
// costs, the per-phase report, the users cap and bad serving blocks. tiny-dense on one jalapeno
// chip: its bf16 decode steps are HBM-bound, its prompt chunks compute-bound.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

class PhasePolicyCliTest : public ServingCliFixture {
 protected:
  Json run(const std::string& name, const std::vector<std::string>& sets) {
    std::vector<std::string> args = join({"-m", "tiny-dense"}, smallLoad(8, 16, 1024, 64));
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    const Json results = serve(name, args);
    if (results.empty()) return results;
    Json report = Json::parse(readFile(dir.file(name + "/report.json")));
    return report;
  }
  static constexpr const char* kPhase[] = {"scenario.serving.prefill_policy.impl=compute_opt",
                                           "scenario.serving.decode_policy.impl=bandwidth_opt"};
};

double tpot(const Json& report) {
  return report["results"]["metrics"]["inferencex"]["median_tpot"].get<double>();
}

double ttft(const Json& report) {
  return report["results"]["metrics"]["inferencex"]["median_ttft"].get<double>();
}

// The serving states' energies add up to the chip's energy: nothing is lost or counted twice.
void expectStatesAddUp(const Json& report) {
  const Json& phases = report["results"]["phases"];
  double states = 0.0;
  for (const char* s : {"prefill", "decode", "transition", "idle"}) states += phases[s]["energy_j"].get<double>();
  const Json& power = report["power"]["chips"][0];
  const double chip = power["energy_j"].get<double>();
  EXPECT_NEAR(states, chip, 1e-9 * chip);
  // Dynamic energy by layer kind equals dynamic energy by level (wakes and the floor count as `other`).
  double kinds = 0.0, dynamic = 0.0;
  for (const auto& [kind, j] : power["by_layer_kind_j"].items()) kinds += j.get<double>();
  for (const auto& [level, j] : power["by_level_j"].items()) {
    if (level != "static") dynamic += j.get<double>();
  }
  EXPECT_NEAR(kinds, dynamic, 1e-9 * dynamic);
}

// Stated bound: on a memory-bound decode, bandwidth_opt (headroom 0.8) keeps the median TPOT
// within 10% of the uniform policy's while lowering the decode power.
TEST_F(PhasePolicyCliTest, BandwidthOptDecodeLowersDecodePowerWithinTheTpotBound) {
  const Json uniform = run("uniform", {});
  const Json phase = run("phase", {kPhase[0], kPhase[1]});
  ASSERT_FALSE(uniform.empty());
  ASSERT_FALSE(phase.empty());
  const Json& u = uniform["results"]["phases"]["decode"];
  const Json& p = phase["results"]["phases"]["decode"];
  EXPECT_GT(u["fraction_of_peak_hbm_bandwidth"].get<double>(), 0.4) << "the decode steps are memory-bound";
  EXPECT_EQ(u["mean_active_arrays"].get<double>(), 32.0);
  EXPECT_EQ(u["transitions"], 0);
  EXPECT_LT(p["bandwidth_opt_fallbacks"].get<double>(), 0.1 * p["steps"].get<double>());
  const double nominalHz = 1.8e9;
  EXPECT_TRUE(p["mean_active_arrays"].get<double>() < 31.0 || p["mean_core_clock_hz"].get<double>() < nominalHz)
      << p.dump();
  EXPECT_LT(p["average_power_per_chip_w"].get<double>(), 0.99 * u["average_power_per_chip_w"].get<double>());
  EXPECT_LE(tpot(phase), 1.10 * tpot(uniform));
  // Prefill ran compute_opt: the nominal setting, as under uniform.
  EXPECT_EQ(phase["results"]["phases"]["prefill"]["mean_active_arrays"].get<double>(), 32.0);
  EXPECT_EQ(phase["results"]["serving_policy"]["decode_policy"]["impl"], "bandwidth_opt");
  expectStatesAddUp(uniform);
  expectStatesAddUp(phase);
  EXPECT_GT(p["wakes"].get<int>() + phase["results"]["phases"]["prefill"]["wakes"].get<int>(), 0)
      << "compute_opt prefill powers the arrays decode gated back on";
  // Both policies uniform at their defaults is a run without a serving block, to the bit.
  const Json explicitUniform =
      run("explicit", {"scenario.serving.prefill_policy.impl=uniform", "scenario.serving.decode_policy.impl=uniform"});
  ASSERT_FALSE(explicitUniform.empty());
  EXPECT_EQ(explicitUniform["results"], uniform["results"]);
  EXPECT_EQ(explicitUniform["power"], uniform["power"]);
  // Gated arrays draw no static power: the chip's static energy is below idle power x run time.
  const Json& chip = phase["power"]["chips"][0];
  EXPECT_LT(chip["by_level_j"]["static"].get<double>(),
            chip["idle_w"].get<double>() * phase["power"]["duration_s"].get<double>());
}

// On compute-bound prompt chunks a low clock is not free: prefill at the lowest point takes longer
// than at the nominal one. bandwidth_opt, even held to that point, sees that no prompt chunk fits
// under its memory time and keeps the nominal setting for every prefill step.
TEST_F(PhasePolicyCliTest, ALowClockOnComputeBoundPrefillIsMeasurablySlower) {
  const Json fast = run("fast", {kPhase[0]});
  const Json slow =
      run("slow", {"scenario.serving.prefill_policy.impl=uniform", "scenario.serving.prefill_policy.dvfs_point=3"});
  const Json held = run(
      "held", {"scenario.serving.prefill_policy.impl=bandwidth_opt", "scenario.serving.prefill_policy.dvfs_point=3"});
  const Json chosen = run("chosen", {"scenario.serving.prefill_policy.impl=bandwidth_opt"});
  ASSERT_FALSE(fast.empty());
  ASSERT_FALSE(slow.empty());
  ASSERT_FALSE(chosen.empty());
  ASSERT_FALSE(held.empty());
  const Json& p = fast["results"]["phases"]["prefill"];
  EXPECT_GT(p["fraction_of_peak_flops"].get<double>(), 0.3) << "prompt chunks are compute-bound";
  EXPECT_GT(ttft(slow), 1.3 * ttft(fast));
  EXPECT_NEAR(slow["results"]["phases"]["prefill"]["mean_core_clock_hz"].get<double>(), 0.9e9, 1.0);
  for (const Json* r : {&chosen, &held}) {
    const Json& c = (*r)["results"]["phases"]["prefill"];
    EXPECT_EQ(c["bandwidth_opt_fallbacks"], c["steps"]);
    EXPECT_NEAR(c["mean_core_clock_hz"].get<double>(), 1.8e9, 1.0);
    EXPECT_NEAR(ttft(*r), ttft(fast), 1e-12);
  }
}

// A change of DVFS point stalls the chip for power.transitions.clock_switch; the stall is in the
// latencies, in the report's transitions and in the power model's transition state.
TEST_F(PhasePolicyCliTest, TransitionsCostTheirConfiguredTimeAndShowInTheReport) {
  const std::vector<std::string> lowDecode = {kPhase[0], "scenario.serving.decode_policy.impl=uniform",
                                              "scenario.serving.decode_policy.dvfs_point=2"};
  const Json stalled = run("stalled", lowDecode);
  std::vector<std::string> free = lowDecode;
  free.push_back("platform.chip_types[0].power.transitions.clock_switch=0 s");
  const Json instant = run("instant", free);
  ASSERT_FALSE(stalled.empty());
  ASSERT_FALSE(instant.empty());
  const Json& ph = stalled["results"]["phases"];
  const int switches = ph["prefill"]["clock_switches"].get<int>() + ph["decode"]["clock_switches"].get<int>();
  EXPECT_GE(switches, 2) << "into decode after the prompts, back for the next prompt";
  const double stall = 10e-6;  // jalapeno's clock_switch
  EXPECT_NEAR(ph["prefill"]["transition_time_s"].get<double>() + ph["decode"]["transition_time_s"].get<double>(),
              switches * stall, 1e-12);
  EXPECT_NEAR(ph["transition"]["chip_time_s"].get<double>(), switches * stall, 1e-12);
  EXPECT_GT(ph["transition"]["energy_j"].get<double>(), 0.0);
  ASSERT_FALSE(ph["first_transitions"].empty());
  const Json& first = ph["first_transitions"][0];
  EXPECT_EQ(first["into"], "decode");
  EXPECT_EQ(first["to"]["dvfs_point"], 2);
  EXPECT_NEAR(first["stall_s"].get<double>(), stall, 1e-15);
  const Json& dvfs = stalled["power"]["chips"][0]["dvfs"];
  EXPECT_EQ(dvfs["changed_by"], "phase_policy");
  EXPECT_EQ(dvfs["changes"].get<int>(), switches);
  EXPECT_GT(dvfs["points"][2]["time_s"].get<double>(), 0.0);
  EXPECT_NEAR(ph["decode"]["mean_core_clock_hz"].get<double>(), 1.2e9, 1.0);
  EXPECT_EQ(instant["results"]["phases"]["transition"]["chip_time_s"].get<double>(), 0.0);
  EXPECT_GT(stalled["results"]["metrics"]["inferencex"]["mean_e2el"].get<double>(),
            instant["results"]["metrics"]["inferencex"]["mean_e2el"].get<double>());
  expectStatesAddUp(stalled);
}

TEST_F(PhasePolicyCliTest, MaxConcurrentUsersCapsTheRequestsServedAtOnce) {
  const Json open = run("open", {});
  const Json capped = run("capped", {"scenario.serving.max_concurrent_users=2"});
  ASSERT_FALSE(open.empty());
  ASSERT_FALSE(capped.empty());
  EXPECT_EQ(capped["results"]["serving_policy"]["max_resident_per_replica"], 2);
  EXPECT_LE(capped["results"]["replicas"][0]["mean_sequences_per_step"].get<double>(), 2.0);
  EXPECT_GT(open["results"]["replicas"][0]["mean_sequences_per_step"].get<double>(), 2.0);
  EXPECT_GT(ttft(capped), 2.0 * ttft(open)) << "the other users wait for a slot";
}

TEST_F(PhasePolicyCliTest, BadServingBlocksAreRejectedWithTheKeyAndNoReport) {
  const auto rejected = [&](const std::string& name, const std::vector<std::string>& sets, const std::string& key) {
    std::vector<std::string> args = {"run", "-q", "-m", "tiny-dense", "-s", "inferencex-1k1k", "--out", dir.file(name)};
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file(name + "/report.json"))) << name;
  };
  rejected("typo", {"scenario.serving.kv_cache_placement=nearby"}, "kv_cache_placement");
  rejected("point", {"scenario.serving.decode_policy.dvfs_point=7"}, "serving.decode_policy.dvfs_point");
  rejected("arrays", {"scenario.serving.decode_policy.active_arrays=64"}, "serving.decode_policy.active_arrays");
  rejected("compute-opt-point",
           {"scenario.serving.prefill_policy.impl=compute_opt", "scenario.serving.prefill_policy.dvfs_point=1"},
           "dvfs_point");
  rejected("governor", {kPhase[1], "platform.power.governor.impl=cap_rated"}, "power.governor");
}

}  // namespace
}  // namespace scoville::test
