// The accelerated serving modes against the full simulation (docs/serving.md#replica-classes):
// replica classes give every InferenceX metric of the run that simulates every replica
// (--exact), and alike fabric lanes give the timing of the full striping over every switch plane
// (--exact-all-chips); runs whose replicas are coupled or unlike stay exact and say why.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

class AccelerationCliTest : public ServingCliFixture {
 protected:
  /// The tiny dense model on eight reference chips as four replicas of tp 2 (one switch), 11
  /// closed-loop users (3, 3, 3 and 2 per replica), 1k/1k, with `extra` arguments.
  /// `closed` false: the load is left to `extra`; `dp`: the replicas (decode replicas with disaggregation).
  nlohmann::json serve(const std::string& name, const std::vector<std::string>& extra, bool closed = true, int dp = 4) {
    std::vector<std::string> args{"run",   "-q",
                                  "-p",    "jalapeno-8",
                                  "-m",    "tiny-dense",
                                  "-s",    "inferencex-1k1k",
                                  "--out", dir.file(name),
                                  "--set", "platform.placement.tp=2",
                                  "--set", "platform.placement.dp=" + std::to_string(dp),
                                  "--set", "scenario.requests=22"};
    if (closed) args.insert(args.end(), {"--set", "scenario.load.concurrency=11"});
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    if (r.exitCode != 0) return nlohmann::json::object();
    return nlohmann::json::parse(readFile(dir.file(name + "/report.json")));
  }
};

/// Every number of InferenceX's block within `relative` of the other run's.
void expectInferenceXWithin(const nlohmann::json& exact, const nlohmann::json& fast, double relative) {
  const nlohmann::json& e = exact["results"]["metrics"]["inferencex"];
  const nlohmann::json& f = fast["results"]["metrics"]["inferencex"];
  std::size_t compared = 0;
  for (const auto& [key, value] : e.items()) {
    if (!value.is_number()) continue;
    ++compared;
    const double x = value.get<double>();
    EXPECT_NEAR(f[key].get<double>(), x, relative * std::fabs(x) + 1e-15) << key;
  }
  EXPECT_GE(compared, 25U);
}

// With fixed lengths the replicas of a class run alike, so simulating one per class changes no
// metric: 2 replicas simulated for 4, 5 users for 11, and the platform's power within 1%.
TEST_F(AccelerationCliTest, ReplicaClassesGiveEveryInferenceXMetricOfTheFullRun) {
  const std::vector<std::string> fixed{"--set", "scenario.random_range_ratio=1"};
  std::vector<std::string> exactArgs = fixed;
  exactArgs.push_back("--exact");
  const nlohmann::json exact = serve("exact", exactArgs);
  const nlohmann::json fast = serve("fast", fixed);
  ASSERT_FALSE(exact.empty());
  ASSERT_FALSE(fast.empty());
  EXPECT_EQ(exact["results"]["simulation"]["mode"], "exact");
  const nlohmann::json& sim = fast["results"]["simulation"];
  EXPECT_EQ(sim["mode"], "replica_classes");
  EXPECT_EQ(sim["simulated_replicas"], 2);
  EXPECT_EQ(sim["simulated_users"], 5);
  EXPECT_EQ(sim["simulated_measured_requests"], 10);  // ceil(22 x 5 / 11)
  EXPECT_EQ(sim["classes"][0]["mirrored_by"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(sim["classes"][1]["representative"], 3);
  expectInferenceXWithin(exact, fast, 0.01);
  // The mirrors' requests count: the same number of measured requests as the full run.
  EXPECT_EQ(fast["results"]["metrics"]["requests"], exact["results"]["metrics"]["requests"]);
  const double pe = exact["power"]["platform"]["average_w"].get<double>();
  EXPECT_NEAR(fast["power"]["platform"]["average_w"].get<double>(), pe, 0.01 * pe);
  // Every replica is reported, a mirror with its representative's statistics.
  ASSERT_EQ(fast["results"]["replicas"].size(), 4U);
  EXPECT_EQ(fast["results"]["replicas"][1]["steps"], fast["results"]["replicas"][0]["steps"]);
  // Every chip but the two representatives' rank 0 mirrors (the full run: every rank 1).
  EXPECT_EQ(exact["results"]["mirrored_chips"], 4);
  EXPECT_EQ(fast["results"]["mirrored_chips"], 6);
}

// Coupled or unpinned load keeps every replica simulated, and the report says why.
TEST_F(AccelerationCliTest, OpenLoopAndDisaggregatedRunsStayExactAndSayWhy) {
  const nlohmann::json open = serve("open", {"--set", "scenario.load={impl: poisson, rate_per_s: 2000}"}, false);
  ASSERT_FALSE(open.empty());
  EXPECT_EQ(open["results"]["simulation"]["mode"], "exact");
  EXPECT_NE(open["results"]["simulation"]["why"].get<std::string>().find("closed loop"), std::string::npos);
  const nlohmann::json disagg =
      serve("disagg",
            {"--set", "platform.placement.disaggregation={prefill_chips: [0, 1, 2, 3], decode_chips: [4, 5, 6, 7]}"},
            true, 2);
  ASSERT_FALSE(disagg.empty());
  EXPECT_EQ(disagg["results"]["simulation"]["mode"], "exact");
  EXPECT_NE(disagg["results"]["simulation"]["why"].get<std::string>().find("disaggregation"), std::string::npos);
}

// A GB200 replica's messages go over 18 alike NVSwitch planes; timing plane 0 alone for all gives
// the full striping's times exactly, and its energy and bytes through the switches but for the
// remainder bytes (lane 0 takes one whenever there is one, and stands for every lane).
TEST_F(AccelerationCliTest, AlikeSwitchPlanesTimedOnceGiveTheFullStripingsTimes) {
  const auto run = [this](const std::string& name, const char* mode) {
    const ProcessResult r = runScoville({"run",
                                         "-q",
                                         "-p",
                                         "gb200-nvl72",
                                         "-m",
                                         "tiny-dense",
                                         "-s",
                                         "inferencex-1k1k",
                                         mode,
                                         "--out",
                                         dir.file(name),
                                         "--set",
                                         "platform.chips[0].count=8",
                                         "--set",
                                         "platform.placement.dp=1",
                                         "--set",
                                         "scenario.load.concurrency=2",
                                         "--set",
                                         "scenario.requests=2",
                                         "--set",
                                         "scenario.output_tokens=32"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(readFile(dir.file(name + "/report.json")));
  };
  const nlohmann::json full = run("full", "--exact-all-chips");
  const nlohmann::json lanes = run("lanes", "--exact");
  EXPECT_EQ(lanes["results"]["metrics"]["inferencex"], full["results"]["metrics"]["inferencex"]);
  EXPECT_EQ(lanes["results"]["window"], full["results"]["window"]);
  const double e = full["power"]["platform"]["energy_j"].get<double>();
  // Plane 0's part has the remainder byte, counted for every lane: a few bytes of each message over.
  EXPECT_NEAR(lanes["power"]["platform"]["energy_j"].get<double>(), e, 1e-5 * e);
  const auto switchBytes = [](const nlohmann::json& report, bool firstOnly) {
    double bytes = 0.0;
    const nlohmann::json& network = report["stats"]["platform"]["groups"]["network"]["groups"];
    for (int p = 0; p < 18; ++p) {
      const std::string name = "switch" + std::to_string(p);
      if (!firstOnly || p == 0) bytes += network[name]["stats"]["bytes"]["value"].get<double>();
    }
    return bytes;
  };
  const double all = switchBytes(full, false);
  EXPECT_GT(all, 0.0);
  EXPECT_NEAR(switchBytes(lanes, true), all, 1e-3 * all);  // plane 0 counts every plane
}

}  // namespace
}  // namespace scoville::test
