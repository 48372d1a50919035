// Software-stack profiles (scenario key software_stack, workloads/SoftwareStack.h), end to end:
// the ideal profile changes nothing, memory efficiency stretches a memory-bound decode, step
// overhead adds to every step, collective latency to every collective, a kernel launch latency to
// every kernel, a request overhead to every request's first token, and bad profiles are refused
// naming the key. tiny-dense on jalapeno (and jalapeno-8 for collectives). The warm-up barrier
// and the per-request throughput InferenceX counts are checked here too.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

class SoftwareStackCliTest : public ::testing::Test {
 protected:
  TempDir dir;

  /// A tiny-dense serving run on `platform` (`users` users, default 4, and 8 requests of 256 + 64
  /// tokens); its report.
  Json run(const std::string& name, const std::vector<std::string>& sets, const std::string& platform = "jalapeno",
           const std::string& model = "tiny-dense", int users = 4) {
    std::vector<std::string> args = {"run",   "-q",          "-m", model, "-p", platform, "-s", "inferencex-1k1k",
                                     "--out", dir.file(name)};
    for (const std::string& s : std::vector<std::string>{
             "scenario.load.concurrency=" + std::to_string(users), "scenario.requests=8", "scenario.input_tokens=256",
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
  static double ix(const Json& report, const std::string& key) {
    return report["results"]["metrics"]["inferencex"][key].get<double>();
  }

  /// requests.csv of run `name`: per row, the columns by name.
  std::vector<std::map<std::string, std::string>> requests(const std::string& name) {
    std::istringstream in(readFile(dir.file(name + "/requests.csv")));
    std::string line;
    std::getline(in, line);
    const auto split = [](const std::string& text) {
      std::vector<std::string> cells;
      std::stringstream cellStream(text);
      std::string cell;
      while (std::getline(cellStream, cell, ',')) cells.push_back(cell);
      if (!text.empty() && text.back() == ',') cells.emplace_back();
      return cells;
    };
    const std::vector<std::string> header = split(line);
    std::vector<std::map<std::string, std::string>> rows;
    while (std::getline(in, line)) {
      const std::vector<std::string> cells = split(line);
      std::map<std::string, std::string> row;
      for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
      rows.push_back(std::move(row));
    }
    return rows;
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

// A stack's MoE kernel (workloads/MoeKernel.h) on tiny-moe's MXFP4 experts computed in BF16: its
// tile rows pad the experts' GEMMs (more FLOPs; on jalapeno's 128-deep arrays a short tile takes a
// full tile's time anyway); its conversions run on the
// vector unit while the weights load (a little costs nothing, much costs time); its own efficiency
// stands in for moe_efficiency; a kernel for other precisions changes nothing.
TEST_F(SoftwareStackCliTest, AMoeKernelPadsTheExpertsConvertsTheirWeightsAndCarriesItsOwnEfficiency) {
  const auto moe = [&](const std::string& name, const std::string& body) {
    std::vector<std::string> sets;
    if (!body.empty()) sets.push_back(stack(name, body));
    return run(name, sets, "jalapeno", "tiny-moe");
  };
  const auto unit = [](const Json& r, const char* u, const char* counter) {
    return r["stats"]["platform"]["groups"]["chip0"]["groups"][u]["stats"][counter]["value"].get<double>();
  };
  const std::string tiles = "min_tile_rows: 64, max_tile_rows: 64";
  const Json none = moe("k-none", "");
  const Json padded = moe("k-pad", "moe_kernels:\n- {name: pad, " + tiles + "}\n");
  const Json light = moe("k-light", "moe_kernels:\n- {name: light, " + tiles + ", convert_ops: 0.5}\n");
  const Json heavy = moe("k-heavy", "moe_kernels:\n- {name: heavy, " + tiles + ", convert_ops: 200}\n");
  const Json own = moe("k-own", "moe_kernels:\n- {name: own, efficiency: 0.1}\n");
  const Json byClass = moe("k-class", "moe_efficiency: 0.1\nmoe_kernels:\n- {name: by-class}\n");
  const Json other = moe("k-other", "moe_kernels:\n- {name: fp8, expert_precisions: [fp8], " + tiles + "}\n");
  ASSERT_FALSE(none.empty() || padded.empty() || light.empty() || heavy.empty() || own.empty() || byClass.empty() ||
               other.empty());
  EXPECT_EQ(padded["inputs"]["software_stack"]["moe_kernels"][0].get<std::string>(), "pad");
  EXPECT_GT(unit(padded, "tensor_core", "flops"), unit(none, "tensor_core", "flops"));
  EXPECT_EQ(unit(padded, "vector_unit", "convert_ops"), 0.0);
  EXPECT_GT(unit(light, "vector_unit", "convert_ops"), 0.0);
  EXPECT_NEAR(unit(heavy, "vector_unit", "convert_ops") / unit(light, "vector_unit", "convert_ops"), 400.0, 1e-9)
      << "the same tiles convert the same weights";
  // Half a lane operation per weight is about 10 us a step: hidden behind the loads (in line it
  // would add 19%).
  EXPECT_NEAR(tpot(light), tpot(padded), 0.01 * tpot(padded)) << "converted while the weights load";
  EXPECT_GT(tpot(heavy), 1.2 * tpot(padded)) << "a conversion longer than the load holds the tile";
  EXPECT_DOUBLE_EQ(tpot(own), tpot(byClass));
  EXPECT_GT(tpot(own), 1.5 * tpot(none));
  EXPECT_EQ(other["results"]["metrics"], none["results"]["metrics"]) << "no kernel runs MXFP4 experts";
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

// The front end's per-request time: one user, so every request finds the engine idle and its
// first token comes exactly request_overhead + 256 x request_overhead_per_token later. The tokens
// after it are not delayed, except by the hardware's state after a longer idle spell (the DRAM
// refresh phase, gated clocks): microseconds over a request.
TEST_F(SoftwareStackCliTest, ARequestOverheadDelaysEachFirstTokenByItsTimeAndNothingElse) {
  const Json none = run("fe-none", {}, "jalapeno", "tiny-dense", 1);
  const Json front = run("fe", {stack("fe", "request_overhead: 2 ms\nrequest_overhead_per_token: 4 us\n")}, "jalapeno",
                         "tiny-dense", 1);
  ASSERT_FALSE(none.empty() || front.empty());
  EXPECT_DOUBLE_EQ(front["inputs"]["software_stack"]["request_overhead_s"].get<double>(), 2e-3);
  EXPECT_DOUBLE_EQ(front["inputs"]["software_stack"]["request_overhead_per_token_s"].get<double>(), 4e-6);
  const double added = 2e-3 + 256 * 4e-6;
  for (const char* key : {"median_ttft", "mean_ttft", "p99_ttft"}) {
    EXPECT_NEAR(ix(front, key) - ix(none, key), added, 1e-7) << key;
  }
  for (const char* key : {"median_e2el", "mean_e2el"}) {
    EXPECT_NEAR(ix(front, key) - ix(none, key), added, 5e-6) << key;
  }
  EXPECT_NEAR(tpot(front), tpot(none), 2e-3 * tpot(none));
  // InferenceX's throughput counts the waits: the 8 requests took about 8 x `added` longer.
  const double duration = none["results"]["metrics"]["window_s"]["duration"].get<double>();
  const double longer = front["results"]["metrics"]["window_s"]["duration"].get<double>();
  EXPECT_NEAR(longer - duration, 8 * added, 8 * 5e-6);
  EXPECT_DOUBLE_EQ(ix(front, "tput_per_gpu") * longer, ix(none, "tput_per_gpu") * duration) << "the same tokens";
}

// InferenceX's benchmark: a warm-up phase that ends before the measured requests start, every user
// at once; its throughput counts the measured requests' tokens over the benchmark's duration.
TEST_F(SoftwareStackCliTest, AWarmupBarrierStartsEveryUserTogetherAfterTheWarmupAndThroughputCountsPerRequest) {
  const Json report = run("barrier", {"scenario.warmup_barrier=true", "scenario.warmup_requests=6"});
  ASSERT_FALSE(report.empty());
  EXPECT_TRUE(report["results"]["load"]["warmup_barrier"].get<bool>());
  double lastWarmupFinish = 0.0;
  std::vector<double> firstMeasured;
  std::map<std::string, bool> userSeen;
  double inputTokens = 0.0, outputTokens = 0.0, lastFinish = 0.0;
  for (const auto& row : requests("barrier")) {
    if (row.at("measured") == "0") {
      if (!row.at("finish_s").empty()) lastWarmupFinish = std::max(lastWarmupFinish, std::stod(row.at("finish_s")));
      continue;
    }
    if (!userSeen[row.at("user")]) {
      userSeen[row.at("user")] = true;
      firstMeasured.push_back(std::stod(row.at("arrival_s")));
    }
    inputTokens += std::stod(row.at("input_tokens"));
    outputTokens += std::stod(row.at("output_tokens"));
    lastFinish = std::max(lastFinish, std::stod(row.at("finish_s")));
  }
  ASSERT_EQ(firstMeasured.size(), 4u);
  for (const double t : firstMeasured) EXPECT_DOUBLE_EQ(t, lastWarmupFinish) << "every user starts at the barrier";
  const Json& m = report["results"]["metrics"];
  EXPECT_DOUBLE_EQ(m["window_s"]["start"].get<double>(), lastWarmupFinish);
  EXPECT_DOUBLE_EQ(m["window_s"]["end"].get<double>(), lastFinish);
  const double duration = lastFinish - lastWarmupFinish;
  EXPECT_DOUBLE_EQ(inputTokens, 8 * 256.0);
  EXPECT_DOUBLE_EQ(outputTokens, 8 * 64.0);
  EXPECT_DOUBLE_EQ(m["benchmark_serving"]["total_token_throughput"].get<double>(),
                   (inputTokens + outputTokens) / duration);
  EXPECT_DOUBLE_EQ(ix(report, "output_tput_per_gpu"), outputTokens / duration);  // one chip
  EXPECT_DOUBLE_EQ(m["benchmark_serving"]["request_throughput"].get<double>(), 8 / duration);

  // Without the barrier the users go on from their warm-up requests one by one.
  const Json free = run("no-barrier", {"scenario.warmup_requests=6"});
  ASSERT_FALSE(free.empty());
  std::vector<double> starts;
  std::map<std::string, bool> seen;
  for (const auto& row : requests("no-barrier")) {
    if (row.at("measured") == "1" && !seen[row.at("user")]) {
      seen[row.at("user")] = true;
      starts.push_back(std::stod(row.at("arrival_s")));
    }
  }
  ASSERT_FALSE(starts.empty());
  EXPECT_LT(*std::min_element(starts.begin(), starts.end()), lastWarmupFinish);
}

// vLLM's async scheduling (scheduler.async_scheduling): a request that arrives while a step runs
// joins the step after the next, so its first token comes one step later; an idle engine composes
// at once. One user always finds the engine idle; four users with outputs of 32 to 64 tokens
// arrive while the others decode, and each of those waits one decode step more (its TPOT).
TEST_F(SoftwareStackCliTest, AsyncSchedulingDelaysAPromptThatArrivesMidStepByOneStep) {
  const Json alone = run("sync1", {}, "jalapeno", "tiny-dense", 1);
  const Json aloneAsync = run("async1", {"scenario.scheduler.async_scheduling=true"}, "jalapeno", "tiny-dense", 1);
  ASSERT_FALSE(alone.empty() || aloneAsync.empty());
  EXPECT_DOUBLE_EQ(ix(aloneAsync, "mean_ttft"), ix(alone, "mean_ttft")) << "an idle engine composes at once";
  const auto staggered = [this](const std::string& name, bool async) {
    const ProcessResult r =
        runScoville({"run",   "-q",
                     "-m",    "tiny-dense",
                     "-p",    "jalapeno",
                     "-s",    "inferencex-1k1k",
                     "--out", dir.file(name),
                     "--set", "scenario.load.concurrency=4",
                     "--set", "scenario.requests=16",
                     "--set", "scenario.input_tokens=256",
                     "--set", "scenario.output_tokens=64",
                     "--set", "scenario.random_range_ratio=0.5",
                     "--set", std::string("scenario.scheduler.async_scheduling=") + (async ? "true" : "false")});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r.exitCode == 0 ? Json::parse(readFile(dir.file(name + "/report.json"))) : Json::object();
  };
  const Json sync = staggered("sync4", false);
  const Json later = staggered("async4", true);
  ASSERT_FALSE(sync.empty() || later.empty());
  const auto ttfts = [this](const std::string& name) {
    std::map<int, double> out;
    for (const auto& row : requests(name)) {
      if (!row.at("ttft_s").empty()) out[std::stoi(row.at("id"))] = std::stod(row.at("ttft_s"));
    }
    return out;
  };
  const std::map<int, double> a = ttfts("sync4"), b = ttfts("async4");
  ASSERT_GE(a.size(), 16u);
  const double step = tpot(sync);
  for (const auto& [id, t] : a) {
    SCOPED_TRACE("request " + std::to_string(id));
    ASSERT_EQ(b.count(id), 1u);
    if (id <= 4) {
      EXPECT_DOUBLE_EQ(b.at(id), t) << "the first four start together on an idle engine";
    } else {
      // At least the decode step that was composed without it; more when that step held a prompt.
      EXPECT_GT(b.at(id) - t, 0.95 * step);
      EXPECT_LT(b.at(id) - t, 1.5 * step);
    }
  }
  EXPECT_NEAR(tpot(later), step, 0.01 * step) << "decode steps are not delayed";
}

TEST_F(SoftwareStackCliTest, AWarmupBarrierNeedsAClosedLoop) {
  const ProcessResult r =
      runScoville({"run", "-q", "-m", "tiny-dense", "-s", "inferencex-1k1k", "--out", dir.file("open"), "--set",
                   "scenario.load={impl: poisson, rate_per_s: 10}", "--set", "scenario.warmup_barrier=true"});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("warmup_barrier"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("closed_loop"), std::string::npos) << r.err;
}

// A stack's attention kernel: the planners lay GQA attention out as FlashAttention 2 does (padded
// blocks at mma.sync's rate, the thread blocks on the SMs, flash-decoding's combine kernel), so on a
// Hopper chip the prefill and the decode steps both take longer than exact GEMMs; the report echoes
// the kernel. On jalapeno (no SMs declared, no warp MMA rate) only the padding remains.
TEST_F(SoftwareStackCliTest, AnAttentionKernelLaysAttentionOutAsThatKernelRunsIt) {
  const std::string fa2 =
      "attention_kernel:\n  name: fa2\n  mma: warp\n  query_block: 128\n  kv_block: 64\n  blocks_per_unit: 2\n"
      "  split_kv: {query_block: 64, kv_block: 128, blocks_per_unit: 2}\n";
  const Json none = run("ak-none", {}, "h100-hgx8");
  const Json kernel = run("ak-fa2", {stack("fa2", fa2)}, "h100-hgx8");
  ASSERT_FALSE(none.empty() || kernel.empty());
  EXPECT_EQ(kernel["inputs"]["software_stack"]["attention_kernel"], "fa2");
  EXPECT_FALSE(none["inputs"].contains("software_stack") &&
               none["inputs"]["software_stack"].contains("attention_kernel"));
  EXPECT_GT(ix(kernel, "median_ttft"), ix(none, "median_ttft"));
  EXPECT_GT(tpot(kernel), tpot(none));
  const ProcessResult bad =
      runScoville({"run", "-q", "-m", "tiny-dense", "-s", "inferencex-1k1k", "--out", dir.file("ak-bad"), "--set",
                   stack("bad", "attention_kernel: {name: x, query_blok: 64}\n")});
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
  EXPECT_NE(bad.err.find("query_blok"), std::string::npos) << bad.err;
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
  rejected("request", stack("request", "request_overhead: -1 ms\n"), "request_overhead");
  rejected("token", stack("token", "request_overhead_per_token: 2\n"), "request_overhead_per_token");
  rejected("unknown", "scenario.software_stack=tensorrt-llm-on-a-toaster", "software_stack");
}

}  // namespace
}  // namespace scoville::test
