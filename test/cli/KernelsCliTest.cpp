// `scoville kernels`, end to end: a small dataset on the H200 platform (every kind, an excluded
// kernel, idle and loaded power); the signed errors, no kernel beating its roofline, exclusions
// listed, power as the chip's static power plus the load's energy rate, byte-identical reruns,
// and bad input refused before anything runs. The shipped H200 dataset's fidelity is guarded in
// golden/KernelsGoldenTest.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

const char* kDataset = R"(name: t
description: a test
hardware: H200
platform: h200-hgx8
date: '2026-12-04'
source: a test
method: made up
kernels:
- {id: read, kind: hbm_read, bytes: 512 MiB, time: 135 us}
- {id: write, kind: hbm_write, bytes: 256 MiB, time: 80 us}
- {id: copy, kind: hbm_copy, bytes: 512 MiB, time: 1 ms, exclude: a made-up artefact}
- {id: gemv, kind: gemm, m: 8, k: 8192, n: 28672, time: 110 us}
- {id: gemm, kind: gemm, precision: fp8, m: 4096, k: 8192, n: 8192, time: 500 us}
- {id: decode, kind: attention_decode, batch: 8, context: 8192, heads: 64, kv_heads: 8, head_dim: 128, time: 72 us}
- {id: prefill, kind: attention_prefill, context: 2048, heads: 32, head_dim: 128, time: 160 us}
power:
- {id: idle, power: 125 W}
- {id: streaming, kernel: copy, power: 620 W}
- {id: computing, kernel: gemm, power: 690 W, sm_clock: 1455 MHz}
- {id: half, kernel: gemm, duty: 0.5, power: 400 W}
)";

TEST(KernelsCli, ComparesEveryKernelWithinItsRooflineListsExclusionsAndPowerAndIsDeterministic) {
  TempDir dir;
  writeFile(dir.file("k.yaml"), kDataset);
  // The uncore is pinned: its fitted value moves whenever calibrate-power is rerun.
  const std::string uncore = "platform.chip_types[0].power.uncore=35 W";
  const ProcessResult r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("a"), "--set", uncore});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("copy"), std::string::npos);
  const Json k = Json::parse(readFile(dir.file("a/kernels.json")));
  EXPECT_EQ(k["platform"], "h200-hgx8");
  EXPECT_EQ(k["chip_type"], "h200-sxm");
  ASSERT_EQ(k["kernels"].size(), 7u);
  int compared = 0;
  for (const Json& e : k["kernels"]) {
    SCOPED_TRACE(e.dump());
    if (e["id"] == "copy") {
      EXPECT_EQ(e["status"], "excluded");
      EXPECT_EQ(e["reason"], "a made-up artefact");
      EXPECT_FALSE(e.contains("simulated_s"));
      continue;
    }
    ++compared;
    EXPECT_EQ(e["status"], "compared");
    const double measured = e["measured_s"].get<double>(), simulated = e["simulated_s"].get<double>();
    // Physics first: no simulated kernel beats its roofline (bytes / HBM bandwidth, FLOPs / peak).
    EXPECT_GE(simulated, e["roofline_s"].get<double>() * (1 - 1e-12));
    EXPECT_NEAR(e["error_percent"].get<double>(), (simulated - measured) / measured * 100.0, 1e-9);
    EXPECT_NEAR(e["simulated_fraction_of_roofline"].get<double>(), e["roofline_s"].get<double>() / simulated, 1e-12);
  }
  EXPECT_EQ(compared, 6);
  EXPECT_EQ(k["kernels"][3]["class"], "gemm_bf16_memory");
  EXPECT_EQ(k["kernels"][4]["class"], "gemm_fp8_compute");
  EXPECT_EQ(k["summary"]["hbm"]["points"], 2);
  EXPECT_TRUE(k["summary"]["hbm"]["fit_efficiency"].is_number()) << "two points fit a line";
  EXPECT_TRUE(k["summary"]["attention_decode"]["fit_efficiency"].is_null()) << "one point fits none";

  // Power: idle is the chip's static power and its HBM refresh; a load adds one launch's energy
  // over its time and the clocked floor; an excluded kernel still runs as a load. Streaming and
  // computing draw more than idle.
  ASSERT_EQ(k["power"].size(), 4u);
  const double idle = k["power"][0]["simulated_w"].get<double>();
  // The pinned uncore 35 + chips/h200-sxm.yaml's statics 25 + 10 + 10 + 7 + 25 + 6, and 192
  // channels refreshed every 3.9 us at 96 nJ.
  EXPECT_NEAR(idle, 35.0 + 83.0 + 192 / 3.9e-6 * 96e-9, 1e-9);
  EXPECT_GT(k["power"][1]["simulated_w"].get<double>(), idle);
  EXPECT_GT(k["power"][2]["simulated_w"].get<double>(), k["power"][1]["simulated_w"].get<double>());
  EXPECT_DOUBLE_EQ(k["power"][2]["sm_clock_hz"].get<double>(), 1.455e9);
  // Run half the time, the load adds half its dynamic power.
  EXPECT_NEAR(k["power"][3]["simulated_w"].get<double>(),
              idle + 0.5 * (k["power"][2]["simulated_w"].get<double>() - idle), 1e-9);
  EXPECT_DOUBLE_EQ(k["power"][3]["duty"].get<double>(), 0.5);
  EXPECT_NEAR(k["power"][0]["error_percent"].get<double>(), (idle - 125.0) / 125.0 * 100.0, 1e-9);
  // Without a launch time the load runs at the kernel's timed rate; as simulated, at the simulator's.
  EXPECT_DOUBLE_EQ(k["power"][2]["launch_time_s"].get<double>(), 500e-6);
  EXPECT_GT(k["power"][2]["simulated_launch_time_s"].get<double>(), 0.0);

  // Deterministic: the same inputs give the same bytes.
  const ProcessResult again =
      runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("b"), "-q", "--set", uncore});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(readFile(dir.file("a/kernels.json")), readFile(dir.file("b/kernels.json")));
}

TEST(KernelsCli, ASoftwareStackStretchesComputeAndMemoryAsInServingRuns) {
  TempDir dir;
  writeFile(dir.file("k.yaml"), kDataset);
  writeFile(dir.file("s.yaml"),
            "name: half\ndescription: d\nframework: f\nhardware: h\ngemm_efficiency: 0.5\nmemory_efficiency: 0.5\n");
  ASSERT_EQ(runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("a"), "--only", "gemm,read"}).exitCode, 0);
  const ProcessResult r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("b"), "--only", "gemm,read",
                                       "--software-stack", dir.file("s.yaml")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Json a = Json::parse(readFile(dir.file("a/kernels.json")));
  const Json b = Json::parse(readFile(dir.file("b/kernels.json")));
  EXPECT_EQ(b["software_stack"], "half");
  EXPECT_EQ(a["kernels"][1]["status"], "not_selected");
  for (int i : {0, 4}) {  // read, gemm
    SCOPED_TRACE(i);
    EXPECT_NEAR(b["kernels"][i]["simulated_s"].get<double>() / a["kernels"][i]["simulated_s"].get<double>(), 2.0, 0.05);
  }
  EXPECT_TRUE(b["power"].empty()) << "--only compares no power";
}

// An attention_kernel lays the attention kernels out as that kernel runs them, and the chip's
// mechanisms time it (docs/validation.md#the-attention-kernel-2026-12-07): padded blocks, warp MMA
// and the thread blocks' schedule make the prefill slower than exact GEMMs; the chip's warp MMA rate
// and its special-function lanes each matter, end to end through the modules.
TEST(KernelsCli, AnAttentionKernelsLayoutAndTheChipsMechanismsTimeTheAttentionKernels) {
  TempDir dir;
  writeFile(dir.file("k.yaml"), kDataset);
  std::string withKernel = kDataset;
  withKernel.replace(withKernel.find("kernels:\n"), 9,
                     "attention_kernel: {name: fa2, mma: warp, query_block: 128, kv_block: 64, blocks_per_unit: 2,\n"
                     "  split_kv: {query_block: 64, kv_block: 128, blocks_per_unit: 2}}\nkernels:\n");
  writeFile(dir.file("fa2.yaml"), withKernel);
  const auto prefillAndDecode = [&](const std::string& file, const std::string& out,
                                    std::vector<std::string> sets) -> std::pair<double, double> {
    std::vector<std::string> args = {"kernels", dir.file(file), "--out",         dir.file(out),
                                     "-q",      "--only",       "decode,prefill"};
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back("platform.chip_types[0]." + s);
    }
    const ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    const Json k = Json::parse(readFile(dir.file(out + "/kernels.json")));
    return {k["kernels"][6]["simulated_s"].get<double>(), k["kernels"][5]["simulated_s"].get<double>()};
  };
  const auto exact = prefillAndDecode("k.yaml", "a", {});
  const auto fa2 = prefillAndDecode("fa2.yaml", "b", {});
  const auto fullRate = prefillAndDecode("fa2.yaml", "c", {"tensor_core.warp_mma_rate=1"});
  const auto noSfu = prefillAndDecode("fa2.yaml", "d", {"vector_unit.special_function_lanes=0"});
  EXPECT_GT(fa2.first, 1.3 * exact.first) << "prefill: padded blocks at mma.sync's rate, scheduled on the SMs";
  EXPECT_LT(fullRate.first, fa2.first) << "the chip's warp MMA rate";
  EXPECT_LT(noSfu.first, fa2.first) << "exps on the 16 units per SM take longer than on the 128 lanes";
  // Decode at batch 8 streams its KV whatever the kernel: memory-bound, within 20%.
  EXPECT_NEAR(fa2.second / exact.second, 1.0, 0.2);
  // Bad input: an unknown MMA kind, a misspelt key.
  std::string bad = withKernel;
  bad.replace(bad.find("mma: warp"), 9, "mma: wrap");
  writeFile(dir.file("bad.yaml"), bad);
  ProcessResult refused = runScoville({"kernels", dir.file("bad.yaml"), "--out", dir.file("x")});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("attention_kernel.mma"), std::string::npos) << refused.err;
  bad = withKernel;
  bad.replace(bad.find("kv_block: 64"), 12, "kv_blocks: 64");
  writeFile(dir.file("bad.yaml"), bad);
  refused = runScoville({"kernels", dir.file("bad.yaml"), "--out", dir.file("x")});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("kv_blocks"), std::string::npos) << refused.err;
}

// timing_load sustained: each kernel is timed under the chip's rated-power limiter in its steady
// state (power/PowerLimit.h). A large fp8 GEMM, which draws far more than 700 W at the nominal clock,
// slows by its clock, which the limiter holds where the sustained power averages the rating; a
// memory-bound GEMV, under the rating, keeps its nominal time. A misspelt value is refused.
TEST(KernelsCli, TimedBackToBackTheComputeBoundKernelsRunAtTheClockTheRatingAllows) {
  TempDir dir;
  writeFile(dir.file("single.yaml"), kDataset);
  std::string sustained = kDataset;
  sustained.replace(sustained.find("kernels:"), 8, "timing_load: sustained\nkernels:");
  writeFile(dir.file("sustained.yaml"), sustained);
  const std::string only = "gemv,gemm";
  ASSERT_EQ(runScoville({"kernels", dir.file("single.yaml"), "--out", dir.file("a"), "--only", only}).exitCode, 0);
  const ProcessResult r = runScoville({"kernels", dir.file("sustained.yaml"), "--out", dir.file("b"), "--only", only});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Json a = Json::parse(readFile(dir.file("a/kernels.json")));
  const Json b = Json::parse(readFile(dir.file("b/kernels.json")));
  const Json& gemvA = a["kernels"][3];
  const Json& gemvB = b["kernels"][3];
  const Json& gemmA = a["kernels"][4];
  const Json& gemmB = b["kernels"][4];
  // Single launches: the nominal clock, no limiter.
  EXPECT_DOUBLE_EQ(gemmA["clock_scale"].get<double>(), 1.0);
  EXPECT_TRUE(gemmA["sustained_power_w"].is_null());
  EXPECT_DOUBLE_EQ(gemmA["simulated_s"].get<double>(), gemmA["simulated_nominal_s"].get<double>());
  // The GEMV stays under the rating: its nominal time, at the nominal clock.
  EXPECT_FALSE(gemvB["power_limited"].get<bool>());
  EXPECT_LT(gemvB["sustained_power_w"].get<double>(), 700.0);
  EXPECT_DOUBLE_EQ(gemvB["simulated_s"].get<double>(), gemvA["simulated_s"].get<double>());
  // The GEMM is held at the rating, at a lower mean clock, and slower by about the clock's share
  // (compute-bound: its time is its cycles over the clock).
  EXPECT_TRUE(gemmB["power_limited"].get<bool>());
  EXPECT_NEAR(gemmB["sustained_power_w"].get<double>(), 700.0, 1e-6);
  const double clock = gemmB["clock_scale"].get<double>();
  EXPECT_LT(clock, 0.9);
  EXPECT_GT(clock, 0.49);
  EXPECT_DOUBLE_EQ(gemmB["simulated_nominal_s"].get<double>(), gemmA["simulated_s"].get<double>());
  const double slowdown = gemmB["simulated_s"].get<double>() / gemmA["simulated_s"].get<double>();
  EXPECT_GT(slowdown, 1.0 / clock * 0.9);
  EXPECT_LE(slowdown, 1.0 / clock * 1.02);
  EXPECT_GE(gemmB["simulated_s"].get<double>(), gemmB["roofline_s"].get<double>());

  // A platform governor would move the clock of the runs the steady state is computed from.
  const ProcessResult governed = runScoville({"kernels", dir.file("sustained.yaml"), "--out", dir.file("g"), "--set",
                                              "platform.power.governor.impl=cap_rated"});
  EXPECT_EQ(governed.exitCode, 2);
  EXPECT_NE(governed.err.find("platform.power.governor"), std::string::npos) << governed.err;

  std::string bad = kDataset;
  bad.replace(bad.find("kernels:"), 8, "timing_load: sustianed\nkernels:");
  writeFile(dir.file("bad.yaml"), bad);
  const ProcessResult refused = runScoville({"kernels", dir.file("bad.yaml"), "--out", dir.file("c")});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("timing_load"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("sustained"), std::string::npos) << refused.err;
}

const char* kPowerFit = R"(power_fit:
  training: [idle, computing]
  parameters:
  - {key: uncore, min: 10 W, max: 60 W, source: a test}
  - {key: tensor_core.energy_per_flop.fp8, min: 0.1 pJ/FLOP, max: 2 pJ/FLOP, source: a test}
  tied:
  - {key: tensor_core.energy_per_flop.bf16, to: tensor_core.energy_per_flop.fp8, ratio: 2, source: a test}
)";

// `scoville calibrate-power` fits the named constants on the training points, predicts the rest,
// lists them apart, says whether the chip file holds the fit, and writes its JSON (the plot is
// covered by the script test); bad fit specifications are refused with their key.
TEST(CalibratePowerCli, FitsTheNamedConstantsOnTheTrainingPointsAndPredictsTheRest) {
  TempDir dir;
  writeFile(dir.file("k.yaml"), std::string(kDataset) + kPowerFit);
  const ProcessResult r = runScoville({"calibrate-power", dir.file("k.yaml"), "--out", dir.file("c"), "--no-plot"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("training points"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted points"), std::string::npos) << r.out;
  const Json c = Json::parse(readFile(dir.file("c/calibrate-power.json")));
  ASSERT_EQ(c["parameters"].size(), 2u);
  EXPECT_EQ(c["parameters"][0]["key"], "uncore");
  // Two training points, two constants: the idle point sets the uncore, the GEMM the FP8 energy;
  // both are met (the prior's pull is small), and the tie follows.
  for (const Json& p : c["points"]) {
    if (p["training"].get<bool>()) {
      EXPECT_LT(std::fabs(p["error_percent"].get<double>()), 0.5) << p["id"];
    }
  }
  EXPECT_NEAR(c["tied"][0]["value"].get<double>(), 2 * c["parameters"][1]["value"].get<double>(), 1e-24);
  int predicted = 0;
  for (const Json& p : c["points"]) predicted += p["training"].get<bool>() ? 0 : 1;
  EXPECT_EQ(predicted, 2);
  EXPECT_FALSE(c["chip_file_holds_fit"].get<bool>()) << "made-up measurements move the shipped values";

  // Bad input, each the dataset with one edit: a training set over half the points, an unknown key,
  // a tie to a constant not fitted, a wrong unit.
  const auto calibrateEdited = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string text = std::string(kDataset) + kPowerFit;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    writeFile(dir.file(name), text);
    return runScoville({"calibrate-power", dir.file(name), "--out", dir.file("x"), "--no-plot"});
  };
  ProcessResult bad = calibrateEdited("many.yaml", "[idle, computing]", "[idle, computing, half]");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("at most half"), std::string::npos) << bad.err;
  bad = calibrateEdited("unknown.yaml", "key: uncore", "key: uncorr");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("uncorr"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("unknown.yaml"), std::string::npos) << bad.err;
  bad = calibrateEdited("untied.yaml", "to: tensor_core.energy_per_flop.fp8", "to: floor");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("not one of the fitted"), std::string::npos) << bad.err;
  bad = calibrateEdited("unit.yaml", "max: 60 W", "max: 60 J");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("expected a power"), std::string::npos) << bad.err;
  // A dataset without a power_fit has nothing to calibrate.
  writeFile(dir.file("plain.yaml"), kDataset);
  bad = runScoville({"calibrate-power", dir.file("plain.yaml"), "--out", dir.file("x"), "--no-plot"});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("power_fit"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x/calibrate-power.json")));
}

// timing_fit: the chip's launch gap fitted on the named kernels in closed form. With one training
// kernel the fit is the gap that makes it exact: written into the chip (--set), the kernel's
// simulated time is its measured one and the file holds the fit. The others are predicted and
// summarised apart. A training id the dataset lacks, or more than half the kernels, is refused.
TEST(KernelsCli, TheLaunchGapIsFittedOnTheTrainingKernelsAndThePredictedOnesAreSummarisedApart) {
  TempDir dir;
  std::string fit = kDataset;
  fit.replace(fit.find("kernels:"), 8, "timing_fit: {training: [gemv]}\nkernels:");
  fit.replace(fit.find("time: 110 us"), 12, "time: 125 us");  // above the simulated GEMV without a gap
  writeFile(dir.file("fit.yaml"), fit);
  const std::string gap = "platform.chip_types[0].command_processor.kernel_launch=";
  const ProcessResult r =
      runScoville({"kernels", dir.file("fit.yaml"), "--out", dir.file("a"), "-q", "--set", gap + "0 s"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Json a = Json::parse(readFile(dir.file("a/kernels.json")));
  EXPECT_EQ(a["kernels"][3]["role"], "training");
  EXPECT_EQ(a["kernels"][4]["role"], "predicted");
  EXPECT_FALSE(a["kernels"][2].contains("role")) << "an excluded kernel neither trains nor is predicted";
  EXPECT_EQ(a["timing_fit"]["training"], 1);
  EXPECT_EQ(a["timing_fit"]["predicted"], 5);
  EXPECT_FALSE(a["timing_fit"]["chip_file_holds_fit"].get<bool>());
  EXPECT_FALSE(a["summary_predicted"].contains("gemm_bf16_memory")) << "the GEMV trained the fit";
  EXPECT_TRUE(a["summary_predicted"].contains("gemm_fp8_compute"));
  // Without a gap the GEMV is short of its 125 us by the gap and the launch's two 50 ns hops.
  const double fitted = a["timing_fit"]["fitted_s"].get<double>();
  EXPECT_NEAR(fitted, 125e-6 - a["kernels"][3]["simulated_s"].get<double>() - 0.1e-6, 1e-12);
  EXPECT_GT(fitted, 0.0);
  const ProcessResult again = runScoville({"kernels", dir.file("fit.yaml"), "--out", dir.file("b"), "-q", "--set",
                                           gap + fmt::format("{:.6f} us", fitted * 1e6)});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  const Json b = Json::parse(readFile(dir.file("b/kernels.json")));
  EXPECT_TRUE(b["timing_fit"]["chip_file_holds_fit"].get<bool>());
  // (to a few nanoseconds: starting later, the kernel meets the HBM's refreshes elsewhere)
  EXPECT_NEAR(b["kernels"][3]["simulated_s"].get<double>(), 125e-6, 10e-9);
  EXPECT_NEAR(b["timing_fit"]["fitted_s"].get<double>(), fitted, 10e-9);

  // --only without a training kernel fits nothing, and says so.
  const ProcessResult only = runScoville({"kernels", dir.file("fit.yaml"), "--out", dir.file("d"), "--only", "gemm"});
  ASSERT_EQ(only.exitCode, 0) << only.err;
  EXPECT_NE(only.out.find("no training kernel ran"), std::string::npos) << only.out;
  EXPECT_TRUE(Json::parse(readFile(dir.file("d/kernels.json")))["timing_fit"]["fitted_s"].is_null());

  std::string unknown = kDataset;
  unknown.replace(unknown.find("kernels:"), 8, "timing_fit: {training: [gemv, nope]}\nkernels:");
  writeFile(dir.file("unknown.yaml"), unknown);
  ProcessResult refused = runScoville({"kernels", dir.file("unknown.yaml"), "--out", dir.file("c")});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("'nope'"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("timing_fit"), std::string::npos) << refused.err;
  std::string most = kDataset;
  most.replace(most.find("kernels:"), 8, "timing_fit: {training: [gemv, gemm, read, write]}\nkernels:");
  writeFile(dir.file("most.yaml"), most);
  refused = runScoville({"kernels", dir.file("most.yaml"), "--out", dir.file("c")});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("at most half"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("c/kernels.json")));
}

TEST(KernelsCli, BadInputIsRefusedNamingTheFileOrKeyAndNothingIsWritten) {
  TempDir dir;
  std::string typo = kDataset;
  typo.replace(typo.find("head_dim: 128, time: 72"), 8, "headdim:");
  writeFile(dir.file("typo.yaml"), typo);
  ProcessResult r = runScoville({"kernels", dir.file("typo.yaml"), "--out", dir.file("o")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("headdim"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("typo.yaml"), std::string::npos) << r.err;
  r = runScoville({"kernels", dir.file("missing.yaml"), "--out", dir.file("o")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
  writeFile(dir.file("k.yaml"), kDataset);
  r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("o"), "--only", "gemv,nope"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no kernel 'nope'"), std::string::npos) << r.err;
  r = runScoville({"kernels", dir.file("k.yaml"), "--out", dir.file("o"), "--platform", "jalapen"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("jalapen"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("o/kernels.json")));
}

}  // namespace
}  // namespace scoville::test
