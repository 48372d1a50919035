// The scoville executable on multi-chip platforms, run as a child process: `platform show`'s
// totals and topology, a platform or placement that cannot hold refused with every chip named,
// and multi-chip, tensor- and pipeline-parallel runs reported whole and deterministically, loosely
// and approximately timed alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/cli/CliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;

class PlatformCliTest : public CliFixture {};

TEST_F(PlatformCliTest, PlatformShowPrintsDatasheetTotals) {
  const ProcessResult r = runScoville({"platform", "show", "jalapeno", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  const auto& totals = json["totals"];
  EXPECT_DOUBLE_EQ(totals["peak_flops_per_s"]["bf16"].get<double>(), 2.0 * 32 * 128 * 128 * 1.8e9);
  EXPECT_DOUBLE_EQ(totals["hbm_bandwidth_bytes_per_s"].get<double>(), 7.2e12);
  EXPECT_DOUBLE_EQ(totals["rated_power_w"].get<double>(), 700.0);
  const ProcessResult tree = runScoville({"platform", "show", "--platform", "jalapeno"});
  EXPECT_NE(tree.out.find("7.2 TB/s"), std::string::npos) << tree.out;
}

TEST_F(PlatformCliTest, PlatformShowDrawsTheTopologyAsDot) {
  const ProcessResult r = runScoville({"platform", "show", "jalapeno-8", "--dot"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.rfind("graph \"jalapeno-8\" {", 0), 0u) << r.out;
  for (int chip = 0; chip < 8; ++chip) {
    EXPECT_NE(r.out.find("\"chip" + std::to_string(chip) + "\" -- \"plane0\" [label=\"800 GB/s\"]"), std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.out.find("\"plane0\" [shape=ellipse]"), std::string::npos) << r.out;
  EXPECT_EQ(runScoville({"platform", "show", "jalapeno-8", "--dot", "--json"}).exitCode, 2);
}

TEST_F(PlatformCliTest, PlatformShowTotalsOfAMultiChipPlatform) {
  const ProcessResult r = runScoville({"platform", "show", "jalapeno-64", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["chips"], 64);
  EXPECT_EQ(json["network"]["topology"], "switched");
  EXPECT_EQ(json["network"]["planes"], 8);
  EXPECT_DOUBLE_EQ(json["totals"]["rated_power_w"].get<double>(), 64 * 700.0);
  EXPECT_DOUBLE_EQ(json["totals"]["bisection_bandwidth_bytes_per_s"].get<double>(), 32 * 800e9);
  const ProcessResult tree = runScoville({"platform", "show", "jalapeno-64"});
  EXPECT_NE(tree.out.find("totals: 64 chips"), std::string::npos) << tree.out;
  EXPECT_NE(tree.out.find("8 planes of a 64-port switch"), std::string::npos) << tree.out;
}

TEST_F(PlatformCliTest, InvalidPlatformIsRejectedByShowAndRun) {
  // Eight jalapeno chips with eight ports each cannot share a 32-port switch.
  std::string text = readFile(std::string(SCOVILLE_SOURCE_DIR) + "/platforms/jalapeno-8.yaml");
  text.replace(text.find("include: chips/jalapeno.yaml"), 28,
               "include: " + std::string(SCOVILLE_SOURCE_DIR) + "/platforms/chips/jalapeno.yaml");
  text.replace(text.find("ports: 64"), 9, "ports: 32");
  const std::string file = dir.file("crowded.yaml");
  writeFile(file, text);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"platform", "show", file}, {"run", "--platform", file, "--out", out()}}) {
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 2) << args[0];
    EXPECT_NE(r.err.find("error[invalid-config]: " + file + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'platform.network.switch.ports'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("over-subscribed: plane 0 switch has 32 ports but the chips attach 64 links"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  EXPECT_FALSE(fs::exists(report()));
}

TEST_F(PlatformCliTest, ModelThatDoesNotFitAPlacementNamesEveryChip) {
  const ProcessResult r = expectConfigError(
      {"--platform", "h100-hgx8", "--set", "platform.placement.tp=1", "--set", "platform.placement.dp=8"},
      "does-not-fit",
      {"tp 1 x dp 8", "chip0 (h100-sxm): weights 141.1 GB", "chip7 (h100-sxm): weights 141.1 GB",
       "> HBM capacity 80 GB"});
  // With the default placement (tp 8) it fits.
  EXPECT_EQ(runScoville({"run", "-q", "--platform", "h100-hgx8", "--out", out()}).exitCode, 0);
}

TEST_F(PlatformCliTest, MultiChipRunReportsEveryChipAndIsDeterministic) {
  const std::vector<std::string> args = {
      "run", "-q", "--platform", "jalapeno-8", "--set", "scenario.batch=4", "--set", "scenario.context_length=1024"};
  std::vector<std::string> first = args;
  first.insert(first.end(), {"--out", out()});
  ASSERT_EQ(runScoville(first).exitCode, 0);
  std::vector<std::string> second = args;
  second.insert(second.end(), {"--out", dir.file("again")});
  ASSERT_EQ(runScoville(second).exitCode, 0);
  const std::string text = readFile(report());
  EXPECT_EQ(readFile(dir.file("again/report.json")), text) << "same inputs: byte-identical multi-chip report";
  const auto json = nlohmann::json::parse(text);
  const auto& results = json["results"];
  EXPECT_EQ(results["placement"]["tp"], 8);
  ASSERT_EQ(results["chips"].size(), 8u);
  for (const auto& chip : results["chips"]) {
    EXPECT_GE(chip["step_time_s"].get<double>(), chip["bound_s"].get<double>());
    EXPECT_GT(chip["collective_bytes_sent"].get<double>(), 0.0);
    // An eighth of 141 GB of weights, 4 GiB of activations and a little KV on 216 GB.
    EXPECT_NEAR(chip["hbm_used_fraction"].get<double>(),
                (chip["weight_bytes"].get<double>() + chip["kv_cache_bytes"].get<double>() + 4294967296.0) / 216e9,
                1e-12);
    EXPECT_GT(chip["hbm_used_fraction"].get<double>(), 0.1);
    EXPECT_LT(chip["hbm_used_fraction"].get<double>(), 0.11);
  }
  EXPECT_LE(results["roofline"]["fraction_of_bound"].get<double>(), 1.0);
  EXPECT_GT(results["per_op"]["o_proj"]["collective_time_s"].get<double>(), 0.0);
  EXPECT_TRUE(json["stats"]["platform"]["groups"].contains("network"));
  EXPECT_TRUE(json["stats"].contains("tp_group0"));
}

TEST_F(PlatformCliTest, ApproximatelyTimedMultiChipRunMatchesLooselyTimed) {
  const std::vector<std::string> args = {"run",        "-q",    "--platform",
                                         "jalapeno-8", "--set", "scenario.context_length=1024"};
  std::vector<std::string> lt = args;
  lt.insert(lt.end(), {"--out", dir.file("lt")});
  ASSERT_EQ(runScoville(lt).exitCode, 0);
  std::vector<std::string> at = args;
  at.insert(at.end(), {"--timing", "at", "--out", out()});
  const ProcessResult r = runScoville(at);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto ltJson = nlohmann::json::parse(readFile(dir.file("lt/report.json")));
  const auto atJson = nlohmann::json::parse(readFile(report()));
  EXPECT_EQ(atJson["protocol"]["violations"], 0);
  EXPECT_GT(atJson["protocol"]["checked_transactions"].get<double>(), 1000.0);
  EXPECT_NEAR(atJson["results"]["step_time_s"].get<double>() / ltJson["results"]["step_time_s"].get<double>(), 1.0,
              0.05);
}

TEST_F(PlatformCliTest, PipelineParallelRunReportsStagesAndHandOffs) {
  const ProcessResult r =
      runScoville({"run", "-q", "--platform", "jalapeno-8", "--set", "platform.placement.tp=4", "--set",
                   "platform.placement.pp=2", "--set", "scenario.context_length=1024", "--out", out()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto json = nlohmann::json::parse(readFile(report()));
  EXPECT_EQ(json["results"]["placement"]["pp"], 2);
  int lastStage = 0;
  for (const auto& chip : json["results"]["chips"]) lastStage = std::max(lastStage, chip["stage"].get<int>());
  EXPECT_EQ(lastStage, 1);
  EXPECT_EQ(json["stats"]["stage_link0_0_3"]["stats"]["messages"]["value"], 1.0);
  EXPECT_LE(json["results"]["roofline"]["fraction_of_bound"].get<double>(), 1.0);
}

// Later pipeline stages prefetch into their staging buffers while earlier stages run: the
// reported bound must leave those bytes out, or a step with deep buffering would "beat" it.
TEST_F(PlatformCliTest, PipelineBoundAllowsForPrefetchAndStaysBelowTheStep) {
  for (const char* platform : {"jalapeno-8", "b200-hgx8"}) {
    SCOPED_TRACE(platform);
    const ProcessResult r = runScoville({"run", "-q", "--platform", platform, "--model", "tiny-dense", "--set",
                                         "scenario.context_length=256", "--set", "platform.placement.tp=1", "--set",
                                         "platform.placement.pp=4", "--set", "platform.placement.dp=2", "--set",
                                         "platform.chip_types[0].sram.staging_buffers=6", "--out", out()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto results = nlohmann::json::parse(readFile(report()))["results"];
    EXPECT_LE(results["roofline"]["fraction_of_bound"].get<double>(), 1.0);
    for (const auto& chip : results["chips"]) {
      EXPECT_GE(chip["step_time_s"].get<double>(), chip["bound_s"].get<double>());
      EXPECT_LE(chip["bound_s"].get<double>(), results["roofline"]["bound_s"].get<double>());
    }
  }
}

}  // namespace
}  // namespace scoville::test
