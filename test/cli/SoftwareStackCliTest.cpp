// Software-stack profiles (scenario key software_stack, workloads/SoftwareStack.h), end to end:
// the ideal profile changes nothing, memory efficiency stretches a memory-bound decode, step
// overhead adds to every step, collective latency to every collective, a kernel launch latency to
// every kernel, and bad profiles are refused naming the key. tiny-dense on jalapeno (and
// jalapeno-8 for collectives).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

class SoftwareStackCliTest : public ::testing::Test {
 protected:
  TempDir dir;

  /// A tiny-dense serving run on `platform` (4 users, 8 requests of 256 + 64 tokens); its report.
  Json run(const std::string& name, const std::vector<std::string>& sets, const std::string& platform = "jalapeno",
           const std::string& model = "tiny-dense") {
    std::vector<std::string> args = {"run",   "-q",          "-m", model, "-p", platform, "-s", "inferencex-1k1k",
                                     "--out", dir.file(name)};
    for (const std::string& s :
         std::vector<std::string>{"scenario.load.concurrency=4", "scenario.requests=8", "scenario.input_tokens=256",
                                  "scenario.output_tokens=64", "scenario.random_range_ratio=1"}) {
      args.push_back("--set");
      args.push_back(s);
    }
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    if (r.exitCode != 0) return Json::object();
    return Json::parse(readFile(dir.file(name + "/report.json")));
  }

  std::string stack(const std::string& name, const std::string& body) {
    const std::string path = dir.file(name + ".yaml");
    writeFile(path, "name: " + name + "\ndescription: test\nframework: test\nhardware: test\n" + body);
    return "scenario.software_stack=" + path;
  }

  static double tpot(const Json& report) {
    return report["results"]["metrics"]["inferencex"]["median_tpot"].get<double>();
  }
};

TEST_F(SoftwareStackCliTest, TheIdealProfileChangesNothingAndEachEffectAddsWhatItSays) {
  const Json none = run("none", {});
  const Json ideal = run("ideal", {"scenario.software_stack=ideal"});
  const Json slowMemory = run("memory", {stack("memory", "memory_efficiency: 0.5\n")});
  const Json overhead = run("overhead", {stack("overhead", "step_overhead: 1 ms\n")});
  ASSERT_FALSE(none.empty() || ideal.empty() || slowMemory.empty() || overhead.empty());
  EXPECT_TRUE(none["inputs"]["software_stack"].is_null());
  EXPECT_EQ(ideal["inputs"]["software_stack"]["name"], "ideal");
  EXPECT_EQ(ideal["results"]["metrics"], none["results"]["metrics"]) << "the ideal profile is the hardware alone";
  // tiny-dense's decode steps are HBM-bound: loads twice as long make them nearly twice as long.
  const double stretch = tpot(slowMemory) / tpot(none);
  EXPECT_GT(stretch, 1.5);
  EXPECT_LT(stretch, 2.05);
  EXPECT_DOUBLE_EQ(slowMemory["inputs"]["software_stack"]["memory_efficiency"].get<double>(), 0.5);
  // Every decode step starts 1 ms later.
  EXPECT_NEAR(tpot(overhead) - tpot(none), 1e-3, 2e-5);
}

TEST_F(SoftwareStackCliTest, CollectiveLatencyDelaysEveryCollectiveOfATensorParallelStep) {
  const Json none = run("none8", {}, "jalapeno-8");
  const Json late = run("late8", {stack("late", "collective_latency: 10 us\n")}, "jalapeno-8");
  ASSERT_FALSE(none.empty() || late.empty());
  // tiny-dense has 4 layers: per decode step an all-reduce after the attention and after the FFN
  // of each (8), the embedding's (1) and the LM head's all-gather (1).
  EXPECT_NEAR(tpot(late) - tpot(none), 10 * 10e-6, 2e-6);
}

// tiny-moe's MXFP4 experts computed in BF16 are mixed-input GEMMs: mixed_input_efficiency slows
// them (and only them) as moe_efficiency does; with the experts computed in FP4 it changes nothing.
TEST_F(SoftwareStackCliTest, MixedInputEfficiencySlowsOnlyGemmsThatConvertTheirWeights) {
  const auto moe = [&](const std::string& name, const std::vector<std::string>& sets) {
    return run(name, sets, "jalapeno", "tiny-moe");
  };
  const Json none = moe("moe-none", {});
  const Json mixed = moe("moe-mixed", {stack("mixed", "mixed_input_efficiency: 0.1\n")});
  const Json classSlow = moe("moe-class", {stack("class", "moe_efficiency: 0.1\n")});
  const Json fp4 = moe("moe-fp4", {"model.compute_precision=fp4"});
  const Json fp4Mixed =
      moe("moe-fp4-mixed", {"model.compute_precision=fp4", stack("mixed4", "mixed_input_efficiency: 0.1\n")});
  ASSERT_FALSE(none.empty() || mixed.empty() || classSlow.empty() || fp4.empty() || fp4Mixed.empty());
  EXPECT_DOUBLE_EQ(mixed["inputs"]["software_stack"]["mixed_input_efficiency"].get<double>(), 0.1);
  EXPECT_GT(tpot(mixed), tpot(none) * 1.05);
  EXPECT_DOUBLE_EQ(tpot(mixed), tpot(classSlow)) << "only the experts' GEMMs convert their weights";
  EXPECT_EQ(fp4Mixed["results"]["metrics"], fp4["results"]["metrics"]) << "FP4 experts computed in FP4 convert nothing";
}

TEST_F(SoftwareStackCliTest, AKernelLaunchLatencyDelaysEveryKernelOfAStep) {
  const Json none = run("none-k", {});
  const Json launched = run("launched", {stack("launched", "kernel_launch: 20 us\n")});
  ASSERT_FALSE(none.empty() || launched.empty());
  EXPECT_DOUBLE_EQ(launched["inputs"]["software_stack"]["kernel_launch_s"].get<double>(), 20e-6);
  // A decode step of tiny-dense's 4 layers launches at least 6 kernels per layer (norm, qkv_proj,
  // attention, o_proj, norm, FFN) and the LM head: 20 us each, plus the loads no kernel prefetches.
  const double added = tpot(launched) - tpot(none);
  EXPECT_GT(added, 25 * 20e-6);
  EXPECT_LT(added, 40 * 25e-6);
}

TEST_F(SoftwareStackCliTest, BadProfilesAreRefusedNamingTheKey) {
  const auto rejected = [&](const std::string& name, const std::string& set, const std::string& key) {
    const ProcessResult r =
        runScoville({"run", "-q", "-m", "tiny-dense", "-s", "inferencex-1k1k", "--out", dir.file(name), "--set", set});
    EXPECT_EQ(r.exitCode, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << name << ": " << r.err;
  };
  rejected("range", stack("range", "gemm_efficiency: 1.5\n"), "gemm_efficiency");
  rejected("zero", stack("zero", "memory_efficiency: 0\n"), "memory_efficiency");
  rejected("typo", stack("typo", "gem_efficiency: 0.5\n"), "gem_efficiency");
  rejected("unit", stack("unit", "step_overhead: 5\n"), "step_overhead");
  rejected("launch", stack("launch", "kernel_launch: -2 us\n"), "kernel_launch");
  rejected("mixed", stack("mixed", "mixed_input_efficiency: 0\n"), "mixed_input_efficiency");
  rejected("unknown", "scenario.software_stack=tensorrt-llm-on-a-toaster", "software_stack");
}

}  // namespace
}  // namespace scoville::test
