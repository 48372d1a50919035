// The accelerated serving modes against the full simulation (docs/serving.md#replica-classes and
// #sampled-decode-steps): replica classes and sampled decode steps give every InferenceX metric of
// the run that simulates every replica and every step (--exact), and alike fabric lanes give the
// timing of the full striping over every switch plane (--exact-all-chips); runs whose replicas
// are coupled or unlike stay exact and say why; a governor's clock changes end a sampled run.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
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
  /// `model` and `tp`: another model than tiny-dense, another group than tp 2.
  nlohmann::json serve(const std::string& name, const std::vector<std::string>& extra, bool closed = true, int dp = 4,
                       const std::string& model = "tiny-dense", int tp = 2) {
    std::vector<std::string> args{"run",   "-q",
                                  "-p",    "jalapeno-8",
                                  "-m",    model,
                                  "-s",    "inferencex-1k1k",
                                  "--out", dir.file(name),
                                  "--set", "platform.placement.tp=" + std::to_string(tp),
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

/// Every number of InferenceX's block within `relative` of the other run's. A standard deviation
/// (std_x) is held to `relative` of its quantity's mean (mean_x): the spread of a near-constant
/// quantity (the time per output token of alike steps) is a tiny number whose own relative change
/// says nothing.
void expectInferenceXWithin(const nlohmann::json& exact, const nlohmann::json& fast, double relative) {
  const nlohmann::json& e = exact["results"]["metrics"]["inferencex"];
  const nlohmann::json& f = fast["results"]["metrics"]["inferencex"];
  std::size_t compared = 0;
  for (const auto& [key, value] : e.items()) {
    if (!value.is_number()) continue;
    ++compared;
    const double x = value.get<double>();
    const bool spread = key.rfind("std_", 0) == 0;
    const double scale = spread ? std::fabs(e["mean_" + key.substr(4)].get<double>()) : std::fabs(x);
    EXPECT_NEAR(f[key].get<double>(), x, relative * scale + 1e-15) << key;
  }
  EXPECT_GE(compared, 25U);
}

// With fixed lengths the replicas of a class run alike, so simulating one per class changes no
// metric: 2 replicas simulated for 4, 5 users for 11, and the platform's power within 1%.
TEST_F(AccelerationCliTest, ReplicaClassesGiveEveryInferenceXMetricOfTheFullRun) {
  // Every step simulated on both sides: the classes alone are compared.
  const std::vector<std::string> fixed{"--set", "scenario.random_range_ratio=1", "--sample-period", "1"};
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

// Sampled decode steps on a mixture-of-experts model (its routing varies every step): one user on
// a tp-8 replica (22 requests of InferenceX's 8k/1k shape), whose 1k-token answers are long steady
// decode runs, and 11 users on four
// replicas (replica classes too), whose runs end whenever a request joins or leaves. Every
// InferenceX metric and the energy within 1% of the run that simulates every step, most steps
// replayed, and the report's bound on the replayed time's error below 1%.
TEST_F(AccelerationCliTest, SampledDecodeStepsGiveEveryInferenceXMetricOfTheFullRun) {
  const std::vector<std::string> oneUser{"--set", "scenario.load.concurrency=1", "--set", "scenario.input_tokens=8192"};
  const std::vector<std::string> fixed{"--set", "scenario.random_range_ratio=1"};
  struct Case {
    std::string name;
    std::vector<std::string> args;
    bool closed;
    int dp;
    int tp;
  };
  for (const Case& c : {Case{"one", oneUser, false, 1, 8}, Case{"eleven", fixed, true, 4, 2}}) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> exactArgs = c.args;
    exactArgs.push_back("--exact");
    const nlohmann::json exact = serve(c.name + "-exact", exactArgs, c.closed, c.dp, "tiny-moe", c.tp);
    const nlohmann::json sampled = serve(c.name + "-sampled", c.args, c.closed, c.dp, "tiny-moe", c.tp);
    ASSERT_FALSE(exact.empty());
    ASSERT_FALSE(sampled.empty());
    EXPECT_EQ(exact["results"]["decode_steps"]["mode"], "exact");
    EXPECT_EQ(exact["results"]["decode_steps"]["why"], "asked for (--exact)");
    const nlohmann::json& s = sampled["results"]["decode_steps"];
    ASSERT_EQ(s["mode"], "sampled");
    EXPECT_EQ(s["period"], 16);
    EXPECT_GT(s["replayed_fraction"].get<double>(), 0.5);
    EXPECT_GT(s["step_time_error"]["predictions"].get<int>(), 10);
    EXPECT_LT(s["error_bound_95"]["replayed_time"].get<double>(), 0.01);
    EXPECT_LE(s["error_bound_95"]["busy_time"].get<double>(), s["error_bound_95"]["replayed_time"].get<double>());
    expectInferenceXWithin(exact, sampled, 0.01);
    EXPECT_EQ(sampled["results"]["metrics"]["requests"], exact["results"]["metrics"]["requests"]);
    for (const char* key : {"energy_j", "average_w"}) {
      const double pe = exact["power"]["platform"][key].get<double>();
      EXPECT_NEAR(sampled["power"]["platform"][key].get<double>(), pe, 0.01 * pe) << key;
    }
    // The replayed steps count in the modules' statistics as the recorded ones did.
    const auto hbmBytes = [](const nlohmann::json& r) {
      return r["stats"]["platform"]["groups"]["chip0"]["groups"]["hbm"]["stats"]["bytes_read"]["value"].get<double>();
    };
    EXPECT_NEAR(hbmBytes(sampled), hbmBytes(exact), 0.01 * hbmBytes(exact));
    EXPECT_EQ(sampled["results"]["replicas"][0]["steps"], exact["results"]["replicas"][0]["steps"]);
  }
}

// A governor that moves the clocks while the decode steps are sampled: a recording stands only for
// steps at the clocks it was made at, so the sampled run keeps the clock changes of the run that
// simulates every step. A 300 W cap on the tiny model's chips makes them cross it, step after step
// (over a hundred changes of point). Every step-time metric stays within 0.5% (replaying the
// recordings across the changes puts one beyond 1%) and the energy within 1%. The time to first
// token follows where the clock happens to be when a prompt arrives, which the replayed activity
// (merged spans) moves at the margin: its mean within 5%.
TEST_F(AccelerationCliTest, AGovernedRunSamplesItsDecodeStepsAtTheClocksTheyRanAt) {
  const std::vector<std::string> cap{"--set", "platform.power.governor.impl=cap_target", "--set",
                                     "platform.power.governor.target=300 W"};
  std::vector<std::string> everyArgs = cap;
  everyArgs.insert(everyArgs.end(), {"--sample-period", "1"});
  const nlohmann::json every = serve("every", everyArgs);
  const nlohmann::json sampled = serve("governed", cap);
  ASSERT_FALSE(every.empty());
  ASSERT_FALSE(sampled.empty());
  EXPECT_EQ(every["results"]["decode_steps"]["why"], "asked for (--sample-period 1)");
  const nlohmann::json& s = sampled["results"]["decode_steps"];
  ASSERT_EQ(s["mode"], "sampled");
  EXPECT_GT(s["replayed_fraction"].get<double>(), 0.5);
  const auto changes = [](const nlohmann::json& r) {
    return r["stats"]["platform"]["groups"]["chip0"]["groups"]["power_manager"]["stats"]["operating_point_changes"]
            ["value"]
                .get<double>();
  };
  EXPECT_GT(changes(every), 100.0);
  EXPECT_GT(changes(sampled), 0.5 * changes(every));
  const nlohmann::json& e = every["results"]["metrics"]["inferencex"];
  const nlohmann::json& f = sampled["results"]["metrics"]["inferencex"];
  for (const char* key : {"median_tpot", "mean_tpot", "p99_tpot", "median_itl", "p99_itl", "median_e2el", "p99_e2el",
                          "tput_per_gpu", "output_tput_per_kw"}) {
    EXPECT_NEAR(f[key].get<double>(), e[key].get<double>(), 0.005 * e[key].get<double>()) << key;
  }
  EXPECT_NEAR(f["mean_ttft"].get<double>(), e["mean_ttft"].get<double>(), 0.05 * e["mean_ttft"].get<double>());
  const double pe = every["power"]["platform"]["energy_j"].get<double>();
  EXPECT_NEAR(sampled["power"]["platform"]["energy_j"].get<double>(), pe, 0.01 * pe);
}

// The dry run checks the inputs, predicts what the run will simulate and cost, and runs nothing.
TEST_F(AccelerationCliTest, ADryRunPredictsTheRunsCostAndWritesNothing) {
  const std::string out = dir.file("dry");
  const ProcessResult r = runScoville(
      {"run", "--dry-run", "-p", "gb200-nvl72", "-m", "gpt-oss-120b", "-s", "inferencex-8k1k", "--out", out});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "a dry run writes nothing";
  EXPECT_NE(r.out.find("72 chips, 9 replicas; 2 simulated"), std::string::npos) << r.out;  // 64 users: 8 and 7
  EXPECT_NE(r.out.find("replica classes: yes; decode steps sampled: yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted wall time:"), std::string::npos);
  EXPECT_NE(r.out.find("estimated memory:"), std::string::npos);
  // More work predicts more time: every step simulated on every chip.
  const auto predicted = [](const std::string& text) {
    const std::size_t at = text.find("predicted wall time: ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + 21));
  };
  const ProcessResult exact = runScoville({"run", "--dry-run", "--exact", "-p", "gb200-nvl72", "-m", "gpt-oss-120b",
                                           "-s", "inferencex-8k1k", "--out", out});
  ASSERT_EQ(exact.exitCode, 0) << exact.err;
  EXPECT_NE(exact.out.find("9 simulated"), std::string::npos) << exact.out;
  EXPECT_GT(predicted(exact.out), 2.0 * predicted(r.out));
  // 256 users whose KV the replica cannot hold at once: the real run queues some, the dry run too.
  const ProcessResult queued = runScoville({"run", "--dry-run", "-p", "jalapeno-8", "-m", "kimi-k2.5-fp8", "-s",
                                            "inferencex-8k1k", "--set", "scenario.load.concurrency=256"});
  EXPECT_EQ(queued.exitCode, 0) << queued.err;
  EXPECT_NE(queued.out.find("predicted wall time:"), std::string::npos) << queued.out;
  // Bad input is refused as by a real run.
  const ProcessResult bad = runScoville({"run", "--dry-run", "-p", "gb200-nvl72", "-m", "no-such-model"});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("no-such-model"), std::string::npos) << bad.err;
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
