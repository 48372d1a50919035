// Serving runs end to end, through the scoville executable: InferenceX metrics, determinism,
// the cost of tensor parallelism, routing imbalance, KV-cache preemption, load models, and bad
// serving input. Small models and short requests keep each run well under a second.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "config/Loader.h"
#include "test/cli/ServingCliFixture.h"
#include "test/support/Shipped.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class ServingCliTest : public ServingCliFixture {};

TEST_F(ServingCliTest, ReportsInferenceXMetricsAndIsDeterministic) {
  const auto args = join({"-m", "tiny-dense", "--seed", "3"}, smallLoad(4, 8, 512, 32));
  const Json r = serve("a", args);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r["kind"], "serving");
  EXPECT_EQ(r["load"]["measured_requests"], 8);
  EXPECT_EQ(r["load"]["warmup_requests"], 4) << "closed loop: the first `concurrency` requests warm up";
  const Json& ix = r["metrics"]["inferencex"];
  for (const char* key : {"median_ttft", "p99_ttft", "median_tpot", "p99_tpot", "median_e2el", "median_intvty",
                          "tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu", "tput_per_kw"}) {
    ASSERT_TRUE(ix.contains(key)) << key;
    EXPECT_TRUE(std::isfinite(ix[key].get<double>())) << key;
    EXPECT_GT(ix[key].get<double>(), 0.0) << key;
  }
  EXPECT_NEAR(ix["median_intvty"].get<double>() * ix["median_tpot"].get<double>(), 1.0, 1e-9);
  // Every request decodes output_tokens - 1 steps after its first token: E2EL = TTFT + that.
  EXPECT_GT(ix["median_e2el"].get<double>(), ix["median_ttft"].get<double>() + 30 * ix["median_tpot"].get<double>());
  EXPECT_LE(ix["output_tput_per_gpu"].get<double>(), ix["tput_per_gpu"].get<double>());
  EXPECT_EQ(r["preemptions"], 0);

  const std::string first = readFile(dir.file("a/report.json"));
  // The simulator's work, for the benchmarks: deterministic like the rest of the report.
  const Json kernel = Json::parse(first)["kernel"];
  EXPECT_GT(kernel["unit_transactions"].get<double>(), 500.0);
  EXPECT_GT(kernel["delta_cycles"].get<double>(), 100.0);
  serve("b", args);
  EXPECT_EQ(readFile(dir.file("b/report.json")), first) << "same inputs and seed: byte-identical report";
  // A range of lengths drawn from another seed changes the run.
  serve("c", join({"-m", "tiny-dense", "--seed", "4", "--set", "scenario.random_range_ratio=0.5"},
                  {"--set", "scenario.load.concurrency=4", "--set", "scenario.requests=8", "--set",
                   "scenario.input_tokens=512", "--set", "scenario.output_tokens=32"}));
  serve("d", join({"-m", "tiny-dense", "--seed", "5", "--set", "scenario.random_range_ratio=0.5"},
                  {"--set", "scenario.load.concurrency=4", "--set", "scenario.requests=8", "--set",
                   "scenario.input_tokens=512", "--set", "scenario.output_tokens=32"}));
  EXPECT_NE(readFile(dir.file("c/report.json")), readFile(dir.file("d/report.json")));
}

// kill -9 at any moment of a run leaves its outputs whole or absent: a run starts by removing
// the outputs of the run before it (here one with shorter answers), and writes each file to a
// temporary renamed into place, report.json last. Runs are deterministic, so a whole file equals
// the uninterrupted run's.
TEST_F(ServingCliTest, KillNineDuringARunLeavesWholeFilesOrNone) {
  const auto argsTo = [&](const std::string& out, int outputTokens) {
    return join({"run", "-q", "-s", "inferencex-1k1k", "-m", "tiny-dense", "--out", dir.file(out)},
                smallLoad(8, 96, 512, outputTokens));
  };
  const std::vector<std::string> args = argsTo("k", 128);
  const ProcessResult straight = runScoville(argsTo("reference", 128));
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  std::map<std::string, std::string> whole;
  for (const char* name : {"report.json", "requests.csv", "power.csv"}) {
    whole[name] = readFile(dir.file("reference/" + std::string(name)));
  }
  ASSERT_EQ(runScoville(argsTo("k", 96)).exitCode, 0);  // an earlier run's outputs, all different
  std::map<std::string, std::string> earlier;
  for (const auto& [name, bytes] : whole) earlier[name] = readFile(dir.file("k/" + name));
  ASSERT_NE(earlier["requests.csv"], whole["requests.csv"]);
  const auto present = [&] {
    std::map<std::string, std::string> files;
    for (const auto& [name, bytes] : whole) {
      if (fs::exists(dir.file("k/" + name))) files[name] = readFile(dir.file("k/" + name));
    }
    return files;
  };
  // Killed right after its first file is in place (fault injection): that file is this run's,
  // and nothing of the earlier run is left beside it.
  ::setenv("SCOVILLE_FAULT_KILL_AFTER", "requests.csv", 1);
  const ProcessResult killed = runScoville(args);
  ::unsetenv("SCOVILLE_FAULT_KILL_AFTER");
  EXPECT_NE(killed.exitCode, 0);
  EXPECT_EQ(present(), (std::map<std::string, std::string>{{"requests.csv", whole["requests.csv"]}}));
  ASSERT_EQ(runScoville(argsTo("k", 96)).exitCode, 0);
  // Killed while clearing the earlier outputs, right after their report (fault injection): what is
  // left of them has no report.json to claim it whole.
  ::setenv("SCOVILLE_FAULT_KILL_AFTER", "clear", 1);
  EXPECT_NE(runScoville(args).exitCode, 0);
  ::unsetenv("SCOVILLE_FAULT_KILL_AFTER");
  std::map<std::string, std::string> cleared = earlier;
  cleared.erase("report.json");
  EXPECT_EQ(present(), cleared);
  ASSERT_EQ(runScoville(argsTo("k", 96)).exitCode, 0);
  // Killed at moments of the run: before it reached its directory, while it ran, or after.
  int interrupted = 0;
  for (const int delayMs : {5, 40, 80, 160, 320}) {
    const int pid = startScoville(args);
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    int status = 0;
    interrupted += ::waitpid(pid, &status, WNOHANG) == 0 ? 1 : 0;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    const std::map<std::string, std::string> files = present();
    // Killed before the run reached its output directory: the earlier run's outputs, untouched.
    if (files == earlier) continue;
    // Otherwise each file whole: this run's, or, killed while the run cleared the earlier outputs
    // (their report first), what was left of them; and report.json only with the others.
    for (const auto& [name, bytes] : files) {
      const bool cleared = files.count("report.json") == 0 && bytes == earlier[name];
      EXPECT_TRUE(bytes == whole[name] || cleared) << name << " after a kill at " << delayMs << " ms";
    }
    if (files.count("report.json") != 0) {
      EXPECT_EQ(files.size(), whole.size()) << "report.json is written last";
    }
  }
  EXPECT_GE(interrupted, 1) << "no kill landed while the run was running";
  // A run after the kills finishes and clears their temporaries.
  ASSERT_EQ(runScoville(args).exitCode, 0);
  for (const auto& entry : fs::directory_iterator(dir.file("k"))) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(readFile(dir.file("k/report.json")), whole["report.json"]);
}

TEST_F(ServingCliTest, MirroredTensorParallelRanksGiveExactlyTheSimulatedResults) {
  // tiny-moe splits evenly eight ways: ranks 1-7 plan like rank 0 and mirror it, unless every
  // chip is simulated. The results must not tell the two apart.
  // Every step simulated (no sampled decode steps) on both sides: the mirrors alone are compared.
  const auto args = join({"-m", "tiny-moe", "-p", "jalapeno-8", "--sample-period", "1"}, smallLoad(4, 4, 1024, 16));
  const Json mirrored = serve("mirrored", args);
  const Json exact = serve("exact", join(args, {"--exact-all-chips"}));
  ASSERT_FALSE(mirrored.empty());
  ASSERT_FALSE(exact.empty());
  EXPECT_EQ(mirrored["mirrored_chips"], 7);
  EXPECT_EQ(exact["mirrored_chips"], 0);
  EXPECT_EQ(mirrored["metrics"], exact["metrics"]);
  EXPECT_EQ(mirrored["window"], exact["window"]);
  EXPECT_EQ(mirrored["replicas"][0]["busy_time_s"], exact["replicas"][0]["busy_time_s"]);
  EXPECT_EQ(mirrored["replicas"][0]["steps"], exact["replicas"][0]["steps"]);
  // Rank 0 ran the group's collectives as rotations (one per all-reduce block), which the switch
  // served as every member's messages, timed once: each switch port carried and waited exactly
  // as when every rank sent its own, and the chips' power is the same.
  const auto report = [&](const std::string& name) { return Json::parse(readFile(dir.file(name + "/report.json"))); };
  const Json mirroredReport = report("mirrored");
  const Json exactReport = report("exact");
  const Json& net = mirroredReport["stats"]["platform"]["groups"]["network"]["groups"];
  const Json& netExact = exactReport["stats"]["platform"]["groups"]["network"]["groups"];
  EXPECT_GT(net["switch0"]["stats"]["rotations"]["value"].get<double>(), 0.0);
  EXPECT_EQ(net["switch0"]["stats"]["symmetric_rotations"]["value"], net["switch0"]["stats"]["rotations"]["value"]);
  EXPECT_EQ(netExact["switch0"]["stats"]["rotations"]["value"], 0.0);
  for (const char* stat : {"messages", "bytes", "packets", "output_queue_time", "credit_stall_time"}) {
    EXPECT_EQ(net["switch0"]["stats"][stat]["value"], netExact["switch0"]["stats"][stat]["value"]) << stat;
  }
  for (int c = 0; c < 8; ++c) {
    const std::string port = "port0_" + std::to_string(c);
    EXPECT_EQ(net[port]["stats"], netExact[port]["stats"]) << port;
  }
  for (std::size_t c = 0; c < 8; ++c) {
    const Json& a = mirroredReport["power"]["chips"][c];
    const Json& b = exactReport["power"]["chips"][c];
    EXPECT_NEAR(a["average_w"].get<double>(), b["average_w"].get<double>(), 1e-9 * b["average_w"].get<double>());
    EXPECT_NEAR(a["energy_j"].get<double>(), b["energy_j"].get<double>(), 1e-9 * b["energy_j"].get<double>());
  }
  // Ring (rotations by one when its chunks are even, sends one by one otherwise) and tree (no
  // rotation: sends one by one from rank 0's thread) give the same results mirrored or not.
  for (const std::string algorithm : {"ring", "tree"}) {
    const auto withAlgorithm = join(args, {"--set", "platform.placement.all_reduce=" + algorithm});
    const Json m = serve("mirrored_" + algorithm, withAlgorithm);
    const Json e = serve("exact_" + algorithm, join(withAlgorithm, {"--exact-all-chips"}));
    ASSERT_FALSE(m.empty());
    ASSERT_FALSE(e.empty());
    EXPECT_EQ(m["mirrored_chips"], 7) << algorithm;
    EXPECT_EQ(m["metrics"], e["metrics"]) << algorithm;
    EXPECT_NE(m["metrics"], mirrored["metrics"]) << algorithm << " must change the collectives' time";
    const Json mr = report("mirrored_" + algorithm);
    const Json er = report("exact_" + algorithm);
    for (int c = 0; c < 8; ++c) {
      const std::string port = "port0_" + std::to_string(c);
      EXPECT_EQ(mr["stats"]["platform"]["groups"]["network"]["groups"][port]["stats"],
                er["stats"]["platform"]["groups"]["network"]["groups"][port]["stats"])
          << algorithm << " " << port;
    }
  }
  // Expert parallelism gives each rank other experts: nothing to mirror.
  const Json ep = serve("ep", join(args, {"--set", "platform.placement.ep=8"}));
  ASSERT_FALSE(ep.empty());
  EXPECT_EQ(ep["mirrored_chips"], 0);
}

TEST_F(ServingCliTest, TimeToFirstTokenNeverBeatsThePromptsFlops) {
  const Json r = serve("a", join({"-m", "tiny-dense"}, smallLoad(1, 2, 4096, 4)));
  ASSERT_FALSE(r.empty());
  // The prompt's GEMMs alone: 2 FLOPs per weight (embedding excluded) per token, at peak.
  const workload::ModelConfig model = shippedModel("tiny-dense");
  const platform::PlatformConfig platform = shippedPlatform("jalapeno");
  const double flops = 2.0 * static_cast<double>(model.totalParams() - model.embeddingParams()) * 4096;
  const double bound = flops / platform.chipConfig(0).tensorCore.peakFlops(model.computePrecision);
  EXPECT_GT(r["metrics"]["inferencex"]["median_ttft"].get<double>(), bound);
}

TEST_F(ServingCliTest, TensorParallelismPaysForItsAllReduces) {
  const auto load = smallLoad(1, 2, 256, 64);
  const Json one = serve("tp1", join({"-m", "tiny-dense", "-p", "jalapeno-8", "--set", "platform.chips[0].count=2",
                                      "--set", "platform.placement.tp=1", "--set", "platform.placement.dp=2"},
                                     load));
  const Json two = serve("tp2", join({"-m", "tiny-dense", "-p", "jalapeno-8", "--set", "platform.chips[0].count=2",
                                      "--set", "platform.placement.tp=2", "--set", "platform.placement.dp=1"},
                                     load));
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(two.empty());
  EXPECT_EQ(one["replicas"][0]["collective_bytes"], 0.0);
  EXPECT_GT(two["replicas"][0]["collective_bytes"].get<double>(), 0.0);
  const double tpot1 = one["metrics"]["inferencex"]["median_tpot"].get<double>();
  const double tpot2 = two["metrics"]["inferencex"]["median_tpot"].get<double>();
  // Half the weights per chip, but every layer's all-reduces are on the critical path.
  EXPECT_LT(tpot2, tpot1);
  EXPECT_GT(tpot2, 0.55 * tpot1);
}

TEST_F(ServingCliTest, SkewedRoutingIsSlowerThanUniformUnderExpertParallelism) {
  // Two chips holding eight whole experts each; long prompts make the expert GEMMs the work.
  const std::vector<std::string> ep{"-m",    "tiny-moe",
                                    "-p",    "jalapeno-8",
                                    "--set", "platform.chips[0].count=2",
                                    "--set", "platform.placement.tp=2",
                                    "--set", "platform.placement.ep=2"};
  const auto load = smallLoad(2, 2, 8192, 4);
  const Json uniform = serve("uniform", join(ep, load));
  const Json skewed = serve("skewed", join(join(ep, load), {"--set", "scenario.routing.impl=skewed", "--set",
                                                            "scenario.routing.zipf_exponent=1.5"}));
  ASSERT_FALSE(uniform.empty());
  ASSERT_FALSE(skewed.empty());
  EXPECT_GT(skewed["moe_routing"]["mean_max_over_mean_tokens_per_expert"].get<double>(),
            1.5 * uniform["moe_routing"]["mean_max_over_mean_tokens_per_expert"].get<double>());
  EXPECT_GT(skewed["moe_routing"]["mean_max_over_mean_tokens_per_chip"].get<double>(),
            uniform["moe_routing"]["mean_max_over_mean_tokens_per_chip"].get<double>());
  EXPECT_GT(skewed["metrics"]["inferencex"]["median_ttft"].get<double>(),
            uniform["metrics"]["inferencex"]["median_ttft"].get<double>());
}

TEST_F(ServingCliTest, ExpertsAcrossDataParallelReplicasDispatchAndCombineAllToAll) {
  // Eight replicas of tp 1 (attention data parallel), the 16 experts spread two per chip: every
  // MoE layer of every step dispatches tokens to the experts' chips and combines them back, all
  // replicas in lockstep; with four users, four replicas have no requests but serve experts.
  const std::string report = "ep/report.json";
  const Json r = serve("ep", join({"-m", "tiny-moe", "-p", "jalapeno-8", "--set", "platform.placement.tp=1", "--set",
                                   "platform.placement.dp=8", "--set", "platform.placement.ep=8"},
                                  smallLoad(4, 4, 512, 32)));
  ASSERT_FALSE(r.empty());
  const Json stats = Json::parse(readFile(dir.file(report)))["stats"]["ep_group"]["stats"];
  const Json& busy = r["replicas"][0];
  const Json& idle = r["replicas"][7];
  const double steps = busy["steps"].get<double>() + busy["idle_steps"].get<double>();
  EXPECT_EQ(steps, idle["steps"].get<double>() + idle["idle_steps"].get<double>()) << "lockstep";
  EXPECT_EQ(idle["steps"], 0);
  EXPECT_GT(idle["idle_steps"].get<double>(), 0.0);
  // tiny-moe has 4 MoE layers: a dispatch and a combine each, every step.
  EXPECT_EQ(stats["collectives"]["value"].get<double>(), 2 * 4 * steps);
  EXPECT_GT(stats["bytes"]["value"].get<double>(), 0.0);
  EXPECT_EQ(r["mirrored_chips"], 0);
  EXPECT_GT(r["moe_routing"]["mean_max_over_mean_tokens_per_chip"].get<double>(), 1.0);
  EXPECT_EQ(r["metrics"]["ttft_s"]["count"], 4);
}

TEST_F(ServingCliTest, ADecodeReplicaHandedItsOnlyRequestDecodesItAtOnce) {
  // As many users as decode replicas: each decode replica receives one prefilled request at a
  // time. It used to admit it, plan nothing that step and wait for another arrival (none came:
  // the run starved; with one more user, decodes stalled for a whole other request's prefill).
  const Json r = serve("one-each", join({"-m", "tiny-moe", "-p", "h200-hgx8", "--set", "platform.placement.tp=2",
                                         "--set", "platform.placement.dp=3", "--set",
                                         "platform.placement.disaggregation={prefill_chips: [0, 1], decode_chips: "
                                         "[2, 3, 4, 5, 6, 7]}"},
                                        smallLoad(3, 6, 256, 32)));
  ASSERT_FALSE(r.empty());
  const Json& itl = r["metrics"]["itl_s"];
  EXPECT_LT(itl["max"].get<double>(), 4.0 * itl["median"].get<double>()) << "a token waited for another arrival";
}

// Issue 38: users fewer than, as many as and more than the (decode) replicas, with and without
// disaggregation, all run to the end: every measured request completes and no token waits for
// another request's arrival (the disaggregated run with as many users as decode replicas starved).
TEST_F(ServingCliTest, UsersBelowAtAndAboveTheReplicaCountAllRunToTheEnd) {
  const std::vector<std::string> colocated{
      "-m", "tiny-moe", "-p", "h200-hgx8", "--set", "platform.placement.tp=2", "--set", "platform.placement.dp=4"};
  const std::vector<std::string> disaggregated{
      "-m",    "tiny-moe",
      "-p",    "h200-hgx8",
      "--set", "platform.placement.tp=2",
      "--set", "platform.placement.dp=3",
      "--set", "platform.placement.disaggregation={prefill_chips: [0, 1], decode_chips: [2, 3, 4, 5, 6, 7]}"};
  for (const auto& [placement, replicas] : {std::make_pair(colocated, 4), std::make_pair(disaggregated, 3)}) {
    for (const int users : {replicas - 1, replicas, replicas + 1}) {
      const std::string name = std::to_string(replicas) + "-replicas-" + std::to_string(users) + "-users";
      SCOPED_TRACE(name);
      const Json r = serve(name, join(placement, smallLoad(users, 2 * users, 256, 32)));
      ASSERT_FALSE(r.empty());
      EXPECT_EQ(r["metrics"]["requests"].get<int>(), 2 * users) << "every measured request completes";
      EXPECT_EQ(r["metrics"]["tpot_s"]["count"].get<int>(), 2 * users);
      const Json& itl = r["metrics"]["itl_s"];
      EXPECT_LT(itl["max"].get<double>(), 4.0 * itl["median"].get<double>()) << "a token waited for an arrival";
    }
  }
}

// tiny-moe's sliding-window layers (every second one, 128 tokens) keep their window only: the same
// HBM holds twice the tokens of the model with every layer attending to everything, and a load
// that the cache holds only in part without the saving runs whole with it.
TEST_F(ServingCliTest, SlidingWindowLayersKeepOnlyTheirWindowSoTheCacheHoldsTwiceTheTokens) {
  const std::vector<std::string> load = join({"-m", "tiny-moe", "-p", "jalapeno"}, smallLoad(8, 8, 2048, 64));
  const std::vector<std::string> noWindow{"--set", "model.sliding_window=0", "--set", "model.sliding_window_every=0"};
  const Json windowed = serve("windowed", load);
  const Json full = serve("full", join(load, noWindow));
  ASSERT_FALSE(windowed.empty());
  ASSERT_FALSE(full.empty());
  const double tokens = windowed["kv_cache_capacity_tokens_per_replica"].get<double>();
  const double fullTokens = full["kv_cache_capacity_tokens_per_replica"].get<double>();
  EXPECT_NEAR(tokens, 2 * fullTokens, 16.0) << "the same bytes, per token of the two full layers instead of four";
  EXPECT_EQ(windowed["chips"][0]["kv_cache_capacity_bytes"], full["chips"][0]["kv_cache_capacity_bytes"]);
  // HBM for about 6 requests of 2,112 tokens without the saving; with it, all 8 fit.
  const Json& chip = full["chips"][0];
  const double perToken = chip["kv_cache_capacity_bytes"].get<double>() / fullTokens;
  const double bytes =
      chip["weight_bytes"].get<double>() + chip["activation_memory_bytes"].get<double>() + 4096 + 6.0 * 2112 * perToken;
  const std::vector<std::string> tight{"--set", "platform.chip_types[0].hbm.capacity=" +
                                                    std::to_string(static_cast<long>(std::ceil(bytes / 1e6))) + " MB"};
  const Json tightWindowed = serve("tight-windowed", join(load, tight));
  const Json tightFull = serve("tight-full", join(join(load, noWindow), tight));
  ASSERT_FALSE(tightWindowed.empty());
  ASSERT_FALSE(tightFull.empty());
  // Admission waits for room: six run at once without the saving, all eight with it.
  EXPECT_LT(tightFull["replicas"][0]["mean_sequences_per_step"].get<double>(), 6.5);
  EXPECT_GT(tightWindowed["replicas"][0]["mean_sequences_per_step"].get<double>(), 7.5);
  EXPECT_LT(tightWindowed["metrics"]["ttft_s"]["median"].get<double>(),
            tightFull["metrics"]["ttft_s"]["median"].get<double>());
  EXPECT_LT(tightWindowed["metrics"]["e2el_s"]["median"].get<double>(),
            tightFull["metrics"]["e2el_s"]["median"].get<double>());
}

TEST_F(ServingCliTest, DisaggregatedPrefillHandsEachPromptsKvToTheDecodePool) {
  // Chips 0-3 prefill (one tp-4 replica), chips 4-7 decode: every request's first token comes
  // from the prefill pool, its prompt KV crosses the switch, the decode pool produces the rest.
  const Json r = serve("disaggregated",
                       join({"-m", "tiny-moe", "-p", "jalapeno-8", "--set", "platform.placement.tp=4", "--set",
                             "platform.placement.dp=1", "--set",
                             "platform.placement.disaggregation={prefill_chips: [0, 1, 2, 3], decode_chips: [4, 5, 6, "
                             "7]}"},
                            smallLoad(4, 4, 512, 32)));
  ASSERT_FALSE(r.empty());
  ASSERT_EQ(r["replicas"].size(), 2u);
  const Json& prefill = r["replicas"][0];
  const Json& decode = r["replicas"][1];
  EXPECT_EQ(prefill["role"], "prefill");
  EXPECT_EQ(decode["role"], "decode");
  EXPECT_EQ(prefill["decode_tokens"], 0);
  EXPECT_GT(prefill["prefill_tokens"].get<double>(), 0.0);
  EXPECT_EQ(decode["prefill_tokens"], 0) << "nothing preempted, so the decode pool never prefills";
  const workload::ModelConfig model = shippedModel("tiny-moe");
  // Its sliding-window layers (every second one, of 128 tokens) send their window only.
  ASSERT_EQ(model.slidingWindow, 128);
  ASSERT_EQ(model.slidingWindowEvery, 2);
  const double perPrompt = model.kvBytesPerTokenPerLayer() * (model.layers / 2 * 512 + model.layers / 2 * 128);
  const double transfers = r["kv_transfers"]["count"].get<double>();
  EXPECT_GE(transfers, 8.0);
  EXPECT_DOUBLE_EQ(r["kv_transfers"]["bytes"].get<double>(), transfers * perPrompt);
  // The transfer sits between the first and the second token: at least its bytes over the
  // prefill chips' links.
  const platform::PlatformConfig platform = shippedPlatform("jalapeno-8");
  EXPECT_GE(r["kv_transfers"]["mean_time_s"].get<double>(),
            perPrompt / 4 / platform.chipConfig(0).fabricPorts.bandwidthBytesPerS());
  EXPECT_EQ(r["metrics"]["ttft_s"]["count"], 4);
}

TEST_F(ServingCliTest, PipelineStagesRunEachStepInTurnAndHandOffActivations) {
  // tp 4 x pp 2 against tp 4 x dp 2 on eight chips, one user: each stage holds half the layers on
  // four chips, so a token costs what one tp-4 replica's does plus the hand-off (no microbatches
  // overlap the stages).
  const auto load = smallLoad(1, 2, 256, 32);
  const std::vector<std::string> base{"-m", "tiny-moe", "-p", "jalapeno-8", "--set", "platform.placement.tp=4"};
  const Json flat = serve("flat", join(join(base, {"--set", "platform.placement.dp=2"}), load));
  const Json piped =
      serve("piped", join(join(base, {"--set", "platform.placement.pp=2", "--set", "platform.placement.dp=1"}), load));
  ASSERT_FALSE(flat.empty());
  ASSERT_FALSE(piped.empty());
  const Json stats = Json::parse(readFile(dir.file("piped/report.json")))["stats"];
  const double steps = piped["replicas"][0]["steps"].get<double>();
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(stats["stage_link0_0_" + std::to_string(rank)]["stats"]["messages"]["value"].get<double>(), steps);
  }
  EXPECT_EQ(piped["mirrored_chips"], 6) << "ranks 1-3 of each stage mirror the stage's rank 0";
  EXPECT_GT(piped["metrics"]["inferencex"]["median_tpot"].get<double>(),
            flat["metrics"]["inferencex"]["median_tpot"].get<double>());
  EXPECT_LT(piped["metrics"]["inferencex"]["median_tpot"].get<double>(),
            1.5 * flat["metrics"]["inferencex"]["median_tpot"].get<double>());
}

TEST_F(ServingCliTest, FullKvCachePreemptsAndEveryRequestStillCompletes) {
  const auto load = smallLoad(4, 8, 512, 256);
  const Json roomy = serve("roomy", join({"-m", "tiny-dense"}, load));
  ASSERT_FALSE(roomy.empty());
  // Room for the four prompts (4 x 512 tokens) but not for all four answers on top.
  const double weights = roomy["chips"][0]["weight_bytes"].get<double>();
  const workload::ModelConfig model = shippedModel("tiny-dense");
  const double perToken = model.kvBytesPerTokenPerLayer() * model.layers;
  const double hbm = std::ceil((weights + 4096 + 4 * 640 * perToken) / 1e6);  // MB, above the prompts' need
  const Json tight =
      serve("tight", join(join({"-m", "tiny-dense"}, load),
                          {"--set", "platform.chip_types[0].hbm.capacity=" + std::to_string(hbm) + " MB"}));
  ASSERT_FALSE(tight.empty());
  EXPECT_GT(tight["preemptions"].get<int>(), 0);
  EXPECT_EQ(tight["metrics"]["ttft_s"]["count"], 8) << "every measured request completed";
  EXPECT_GT(tight["replicas"][0]["kv_cache"]["peak_fraction"].get<double>(), 0.9);
  EXPECT_EQ(roomy["preemptions"], 0);
  // Reserving each request's prompt and answer at admission (TensorRT-LLM's policy), three of the
  // four users' 768 tokens fit the 2,560: the fourth waits and nothing is preempted.
  const Json reserved =
      serve("reserved", join(join({"-m", "tiny-dense", "--set", "scenario.scheduler.admission=reserve"}, load),
                             {"--set", "platform.chip_types[0].hbm.capacity=" + std::to_string(hbm) + " MB"}));
  ASSERT_FALSE(reserved.empty());
  EXPECT_EQ(reserved["preemptions"], 0);
  EXPECT_EQ(reserved["metrics"]["ttft_s"]["count"], 8);
  EXPECT_LT(reserved["replicas"][0]["mean_sequences_per_step"].get<double>(), 3.01);
  EXPECT_GT(roomy["replicas"][0]["mean_sequences_per_step"].get<double>(), 3.5);
}

TEST_F(ServingCliTest, PoissonAndTraceLoadsAndMultiTurnConversations) {
  const Json poisson = serve(
      "poisson", {"-m", "tiny-dense", "--set", "scenario.load={impl: poisson, rate_per_s: 2000}", "--set",
                  "scenario.requests=6", "--set", "scenario.input_tokens=256", "--set", "scenario.output_tokens=16"});
  ASSERT_FALSE(poisson.empty());
  EXPECT_EQ(poisson["load"]["impl"], "poisson");
  EXPECT_EQ(poisson["load"]["warmup_requests"], 0);

  writeFile(dir.file("arrivals.csv"),
            "# three requests\narrival_s,input_tokens,output_tokens\n0,128,8\n0.001,256,8\n0.002,64,8\n");
  const std::string traced =
      scenarioFile("traced.yaml",
                   "name: traced\ndescription: replayed\nkind: serving\nload: {impl: trace, file: arrivals.csv}\n"
                   "input_tokens: 256\noutput_tokens: 8\nrequests: 3\n");
  const ProcessResult r = runScoville({"run", "-q", "-m", "tiny-dense", "-s", traced, "--out", dir.file("trace")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Json trace = Json::parse(readFile(dir.file("trace/report.json")))["results"];
  EXPECT_EQ(trace["load"]["sent_requests"], 3);
  EXPECT_EQ(trace["metrics"]["ttft_s"]["count"], 3);

  // A routing trace next to the scenario file: every token of every layer goes to experts 0-3
  // of tiny-moe, so four experts take all the load.
  std::string routes = "layer,experts\n";
  for (int layer = 0; layer < 4; ++layer) routes += std::to_string(layer) + ",0 1 2 3\n";
  writeFile(dir.file("routes.csv"), routes);
  const std::string routed = scenarioFile(
      "routed.yaml",
      "name: routed\ndescription: replayed routing\nkind: serving\nload: {impl: closed_loop, concurrency: 2}\n"
      "input_tokens: 64\noutput_tokens: 8\nrequests: 2\nrouting: {impl: trace, file: routes.csv}\n");
  const ProcessResult rr = runScoville({"run", "-q", "-m", "tiny-moe", "-s", routed, "--out", dir.file("routed")});
  ASSERT_EQ(rr.exitCode, 0) << rr.err;
  const Json replayed = Json::parse(readFile(dir.file("routed/report.json")))["results"];
  // 16 experts, 4 of them with all tokens: max / mean = 16 / 4 in every routed layer.
  EXPECT_DOUBLE_EQ(replayed["moe_routing"]["mean_max_over_mean_tokens_per_expert"].get<double>(), 4.0);

  // Conversations of three turns: later prompts carry the earlier turns, so prefill takes longer.
  const auto load = smallLoad(2, 6, 512, 64);
  const Json single = serve("single", join({"-m", "tiny-dense"}, load));
  const Json turns = serve("turns", join(join({"-m", "tiny-dense"}, load), {"--set", "scenario.multi_turn.turns=3"}));
  ASSERT_FALSE(turns.empty());
  EXPECT_EQ(turns["load"]["turns"], 3);
  EXPECT_GT(turns["replicas"][0]["prefill_tokens"].get<double>(),
            1.5 * single["replicas"][0]["prefill_tokens"].get<double>());
}

TEST_F(ServingCliTest, BadServingInputIsRejectedWithTheKeyAndNoReport) {
  const auto expectError = [&](std::vector<std::string> args, const std::string& errorClass,
                               const std::vector<std::string>& mentions) {
    args.insert(args.begin(), "run");
    args.insert(args.end(), {"--out", dir.file("bad")});
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("error[" + errorClass + "]"), std::string::npos) << r.err;
    for (const std::string& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << m << " not in: " << r.err;
    EXPECT_FALSE(fs::exists(dir.file("bad/report.json")));
  };
  const std::string misspelled =
      scenarioFile("typo.yaml",
                   "name: t\ndescription: t\nkind: serving\nload: {impl: closed_loop, concurency: 4}\n"
                   "input_tokens: 8\noutput_tokens: 8\nrequests: 1\n");
  expectError({"-m", "tiny-dense", "-s", misspelled}, "unknown-key", {misspelled + ":4", "did you mean 'concurrency'"});
  const std::string stepKey = scenarioFile(
      "mixed.yaml",
      "name: t\ndescription: t\nkind: serving\nbatch: 4\ninput_tokens: 8\noutput_tokens: 8\nrequests: 1\n");
  expectError({"-m", "tiny-dense", "-s", stepKey}, "invalid-config", {"batch", "decode_step key"});
  const std::string missingTrace =
      scenarioFile("trace.yaml",
                   "name: t\ndescription: t\nkind: serving\nload: {impl: trace, file: nowhere.csv}\n"
                   "input_tokens: 8\noutput_tokens: 8\nrequests: 1\n");
  expectError({"-m", "tiny-dense", "-s", missingTrace}, "file-not-found", {"nowhere.csv"});
  writeFile(dir.file("two.csv"), "arrival_s,input_tokens,output_tokens\n0,8,8\n0.5,8,8\n");
  const std::string shortTrace =
      scenarioFile("short.yaml",
                   "name: t\ndescription: t\nkind: serving\nload: {impl: trace, file: two.csv}\n"
                   "input_tokens: 8\noutput_tokens: 8\nrequests: 3\n");
  expectError({"-m", "tiny-dense", "-s", shortTrace}, "invalid-config", {"two.csv", "holds 2 requests"});
  // A prompt longer than the whole KV cache can never be served.
  expectError({"-m", "tiny-dense", "-s", "inferencex-8k1k", "--set", "platform.chip_types[0].hbm.capacity=270 MB"},
              "does-not-fit", {"KV cache holds", "longest request needs"});
}

}  // namespace
}  // namespace scoville::test
