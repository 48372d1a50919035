// Kernel microbenchmark datasets (workloads/KernelBench.h): the format's checks, the work each
// kernel's plan carries (bytes, FLOPs, tiles), that plans are the serving planner's, and the
// per-class summary with its overhead + efficiency line. The shipped H200 dataset loads and plans.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Shipped.h"
#include "workloads/KernelBench.h"
#include "workloads/Roofline.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {
namespace {

KernelDataset parse(const std::string& yaml) {
  return KernelDataset::schema().parse(config::loadConfigText("kernels", yaml, "k.yaml"));
}

const std::string kHead =
    "name: t\ndescription: d\nhardware: H200\nplatform: h200-hgx8\ndate: '2026-12-04'\nsource: s\nmethod: m\n"
    "kernels:\n";

MeasuredKernel kernel(const std::string& yaml) {
  return parse(kHead + yaml).kernels.at(0);
}

const hw::ChipConfig& h200() {
  static const platform::PlatformConfig p = test::shippedPlatform("h200-hgx8");
  return p.chipConfig(0);
}

TEST(KernelDataset, ParsesEachKindWithUnits) {
  const KernelDataset d = parse(kHead +
                                "- {id: r, kind: hbm_read, bytes: 1 GiB, time: 250 us, time_min: 249 us}\n"
                                "- {id: g, kind: gemm, precision: fp8, m: 64, k: 8192, n: 28672, time: 63.4 us}\n"
                                "- {id: a, kind: attention_decode, batch: 8, context: 8192, heads: 64, kv_heads: 8,"
                                " head_dim: 128, time: 72.6 us}\n"
                                "power:\n- {id: idle, power: 124.8 W, sm_clock: 1980 MHz}\n"
                                "- {id: load, kernel: r, power: 0.7 kW}\n");
  ASSERT_EQ(d.kernels.size(), 3u);
  EXPECT_EQ(d.kernels[0].kind, KernelKind::kHbmRead);
  EXPECT_DOUBLE_EQ(d.kernels[0].bytes, 1073741824.0);
  EXPECT_DOUBLE_EQ(d.kernels[0].seconds, 250e-6);
  EXPECT_DOUBLE_EQ(d.kernels[0].secondsMin, 249e-6);
  EXPECT_EQ(d.kernels[1].precision, tlm::Precision::kFp8);
  EXPECT_EQ(d.kernels[1].n, 28672);
  EXPECT_EQ(d.kernels[2].kvHeads, 8);
  ASSERT_EQ(d.power.size(), 2u);
  EXPECT_TRUE(d.power[0].kernel.empty());
  EXPECT_DOUBLE_EQ(d.power[0].smClockHz, 1.98e9);
  EXPECT_DOUBLE_EQ(d.power[1].watts, 700.0);
}

TEST(KernelDataset, RejectsMissingShapesWrongUnitsUnknownLoadsDuplicatesAndTypos) {
  const auto expect = [](const std::string& yaml, config::ErrorKind kind, const std::string& words) {
    SCOPED_TRACE(yaml);
    const std::optional<config::ConfigError> e = test::configErrorOf([&] { parse(yaml); }, yaml);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), kind) << e->what();
    EXPECT_TRUE(test::mentions(e, {words}));
  };
  expect(kHead + "- {id: g, kind: gemm, m: 1, k: 8, time: 1 us}\n", config::ErrorKind::kMissingKey, "'n'");
  expect(kHead + "- {id: r, kind: hbm_read, time: 1 us}\n", config::ErrorKind::kMissingKey, "'bytes'");
  expect(kHead + "- {id: a, kind: attention_decode, context: 8, heads: 4, time: 1 us}\n",
         config::ErrorKind::kMissingKey, "'head_dim'");
  expect(kHead + "- {id: a, kind: attention_decode, context: 8, heads: 6, kv_heads: 4, head_dim: 8, time: 1 us}\n",
         config::ErrorKind::kInvalidConfig, "does not divide");
  expect(kHead + "- {id: a, kind: attention_prefill, batch: 2, context: 8, heads: 4, head_dim: 8, time: 1 us}\n",
         config::ErrorKind::kInvalidConfig, "batch 1");
  expect(kHead + "- {id: r, kind: hbm_read, bytes: 1 GiB, time: 250 W}\n", config::ErrorKind::kBadUnit, "time");
  expect(kHead + "- {id: r, kind: hbm_read, bytes: 1 GiB, time: 250}\n", config::ErrorKind::kBadUnit, "time");
  expect(kHead + "- {id: r, kind: hbm_reed, bytes: 1 GiB, time: 1 us}\n", config::ErrorKind::kOutOfRange, "hbm_reed");
  expect(kHead + "- {id: r, kind: hbm_read, byte: 1 GiB, time: 1 us}\n", config::ErrorKind::kUnknownKey, "byte");
  expect(kHead +
             "- {id: r, kind: hbm_read, bytes: 1 GiB, time: 1 us}\n- {id: r, kind: hbm_write, bytes: 1 GiB, "
             "time: 1 us}\n",
         config::ErrorKind::kInvalidConfig, "used twice");
  expect(kHead + "- {id: r, kind: hbm_read, bytes: 1 GiB, time: 1 us}\npower:\n- {id: p, kernel: x, power: 1 W}\n",
         config::ErrorKind::kUnknownName, "kernel 'x'");
  expect("name: t\ndescription: d\nkernels: []\n", config::ErrorKind::kMissingKey, "hardware");
  for (const char* duty : {"0", "1.5", "-0.5"}) {
    expect(kHead + "- {id: r, kind: hbm_read, bytes: 1 GiB, time: 1 us}\npower:\n- {id: p, kernel: r, duty: " + duty +
               ", power: 1 W}\n",
           config::ErrorKind::kOutOfRange, "duty");
  }
}

TEST(KernelPlan, AGemmStreamsItsWeightsOnceInPlannerTilesAndComputesTwoMNK) {
  const MeasuredKernel k = kernel("- {id: g, kind: gemm, m: 64, k: 8192, n: 28672, time: 1 ms}\n");
  const StepPlan plan = planKernel(k, h200());
  EXPECT_DOUBLE_EQ(plan.bytesMoved, 8192.0 * 28672 * 2);
  EXPECT_DOUBLE_EQ(plan.flops, 2.0 * 64 * 8192 * 28672);
  // The serving planner's tiling, op for op.
  std::vector<PlannedOp> expected;
  appendWeightGemm(expected, "kernel", 0, tlm::LlmPhase::kPrefill, 0, 8192, 28672, 64, 0.0, 16.0, 1,
                   h200().sram.bufferBytes());
  ASSERT_EQ(plan.ops.size(), expected.size());
  ASSERT_GT(plan.ops.size(), 1u) << "7 staging buffers' worth of weights stream in several tiles";
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    ASSERT_EQ(plan.ops[i].accesses.size(), 1u);
    EXPECT_EQ(plan.ops[i].accesses[0].address, expected[i].accesses[0].address);
    EXPECT_EQ(plan.ops[i].accesses[0].bytes, expected[i].accesses[0].bytes);
    EXPECT_LE(static_cast<double>(plan.ops[i].accesses[0].bytes), h200().sram.bufferBytes());
    EXPECT_EQ(plan.ops[i].gemms[0].n, expected[i].gemms[0].n);
  }
  // Roofline: the weights' bytes bind at M = 64 on this chip, the FLOPs at M = 16384.
  EXPECT_DOUBLE_EQ(rooflineBoundS(plan, h200()), plan.bytesMoved / h200().hbm.bandwidthBytesPerS);
  EXPECT_EQ(kernelClass(k, plan, h200()), "gemm_bf16_memory");
  const MeasuredKernel big = kernel("- {id: g, kind: gemm, precision: fp8, m: 16384, k: 8192, n: 8192, time: 1 ms}\n");
  const StepPlan bigPlan = planKernel(big, h200());
  EXPECT_EQ(bigPlan.computePrecision, tlm::Precision::kFp8);
  EXPECT_DOUBLE_EQ(bigPlan.bytesMoved, 8192.0 * 8192);
  EXPECT_DOUBLE_EQ(rooflineBoundS(bigPlan, h200()), bigPlan.flops / h200().tensorCore.peakFlops(tlm::Precision::kFp8));
  EXPECT_EQ(kernelClass(big, bigPlan, h200()), "gemm_fp8_compute");
}

TEST(KernelPlan, HbmStreamsMoveTheirBytesInStagingBufferTiles) {
  for (const char* kind : {"hbm_read", "hbm_write", "hbm_copy"}) {
    SCOPED_TRACE(kind);
    const StepPlan plan =
        planKernel(kernel(std::string("- {id: s, kind: ") + kind + ", bytes: 1 GiB, time: 1 ms}\n"), h200());
    EXPECT_DOUBLE_EQ(plan.bytesMoved, 1073741824.0);
    EXPECT_DOUBLE_EQ(plan.flops, 0.0);
    double read = 0, written = 0;
    for (const PlannedOp& op : plan.ops) {
      double opBytes = 0;
      for (const MemoryAccess& a : op.accesses) {
        (a.kind == tlm::OpKind::kRead ? read : written) += static_cast<double>(a.bytes);
        opBytes += static_cast<double>(a.bytes);
      }
      EXPECT_LE(opBytes, h200().sram.bufferBytes());
    }
    const std::string k = kind;
    EXPECT_DOUBLE_EQ(read, k == "hbm_read" ? 1073741824.0 : k == "hbm_copy" ? 536870912.0 : 0.0);
    EXPECT_DOUBLE_EQ(written, 1073741824.0 - read);
  }
}

TEST(KernelPlan, AttentionIsTheServingPlannersAttentionOverTheKernelsHeads) {
  // Decode: every sequence's whole cache is read once (K and V of 8 heads of 128 bf16 elements per
  // token), plus the one new token's appended; scores and values are 2 x 2 x B x H x (L + 1) x D
  // FLOPs (the new token attends to itself too).
  const MeasuredKernel d = kernel(
      "- {id: a, kind: attention_decode, batch: 8, context: 8192, heads: 64, kv_heads: 8, head_dim: 128, "
      "time: 72 us}\n");
  const StepPlan decode = planKernel(d, h200());
  const double perToken = 2.0 * 8 * 128 * 2;
  EXPECT_DOUBLE_EQ(decode.bytesMoved, perToken * 8 * (8192 + 1));
  EXPECT_DOUBLE_EQ(decode.flops, 2.0 * 2.0 * 8 * 64 * (8192 + 1) * 128);
  for (const PlannedOp& op : decode.ops) EXPECT_EQ(op.name, "attention");
  EXPECT_EQ(kernelClass(d, decode, h200()), "attention_decode");
  // Prefill: causal, query j sees j tokens: 2 x 2 x H x D x (L (L + 1) / 2) rounded up per query.
  const MeasuredKernel p =
      kernel("- {id: p, kind: attention_prefill, context: 4096, heads: 32, head_dim: 128, time: 0.5 ms}\n");
  const StepPlan prefill = planKernel(p, h200());
  EXPECT_NEAR(prefill.flops / (2.0 * 2.0 * 32 * 128 * 4096 * 4097 / 2), 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(prefill.bytesMoved, 2.0 * 32 * 128 * 2 * 4096) << "the prompt's K and V appended";
}

// A Marlin-style kernel: tiles of 8 to 64 rows, warp-level MMAs, int4 weights converted at 2.75
// lane operations a weight per tile of rows, its own efficiency.
MoeKernelConfig marlin() {
  MoeKernelConfig k;
  k.name = "marlin";
  k.expertPrecisions = {"int4"};
  k.tileRowChoices = {8, 16, 32, 48, 64};
  k.tileFill = 0.9;
  k.convertOps = 2.75;
  k.efficiency = 0.461;
  k.mma = MmaKind::kWarp;
  return k;
}

TEST(KernelPlan, AMixtureOfExpertsKernelRunsItsExpertsAsTheStacksKernelPadsThem) {
  // Two experts, each token routed to both: 100 tokens each, which Marlin's rule computes in tiles
  // of 64 rows (no tile fills to under 0.9 of its rows), so 128 rows an expert.
  const MeasuredKernel k = kernel(
      "- {id: e, kind: moe, precision: int4, scale_block: 128, scale_bits: 16, m: 100, k: 4096, n: 1024,"
      " experts: 2, top_k: 2, time: 1 ms}\n");
  const double perExpert = 4096.0 * 2 * 1024 + 1024.0 * 4096;  // gate and up, then down
  const MoeKernelConfig kernelConfig = marlin();
  const StepPlan tiled = planKernel(k, h200(), std::nullopt, &kernelConfig);
  EXPECT_DOUBLE_EQ(tiled.flops, 2 * 2.0 * 128 * perExpert);
  EXPECT_DOUBLE_EQ(tiled.expertTokens, 200.0);
  // Both experts' weights stream once: 4 bits and a 16-bit scale per 128 elements.
  EXPECT_DOUBLE_EQ(tiled.bytesMoved, 2 * perExpert * (4.0 + 16.0 / 128) / 8);
  // Each tile of rows converts the weights it multiplies: two tiles an expert.
  EXPECT_DOUBLE_EQ(tiled.convertOps, 2.75 * 2 * 2 * perExpert);
  EXPECT_DOUBLE_EQ(tiled.expertEfficiency, 0.461);
  bool experts = false;
  for (const PlannedOp& op : tiled.ops) {
    EXPECT_TRUE(op.name == "experts" || op.name == "moe_combine") << op.name;
    if (op.name == "experts") {
      experts = true;
      EXPECT_TRUE(op.warpMma);
      EXPECT_TRUE(op.mixedInput);
    }
  }
  EXPECT_TRUE(experts);
  // Without a kernel the experts are exact 100-row GEMMs, computed as they are stored.
  const StepPlan exact = planKernel(k, h200());
  EXPECT_DOUBLE_EQ(exact.flops, 2 * 2.0 * 100 * perExpert);
  EXPECT_DOUBLE_EQ(exact.convertOps, 0.0);
  EXPECT_DOUBLE_EQ(exact.expertEfficiency, 0.0);
  EXPECT_DOUBLE_EQ(exact.bytesMoved, tiled.bytesMoved);
  // A kernel for other precisions does not run them.
  MoeKernelConfig fp4 = marlin();
  fp4.expertPrecisions = {"fp4"};
  EXPECT_DOUBLE_EQ(planKernel(k, h200(), std::nullopt, &fp4).flops, exact.flops);
}

TEST(KernelPlan, AMixtureOfExpertsKernelRoutesItsTokensAtRandomAndIsClassedByItsBound) {
  const auto moe = [](int m) {
    return kernel("- {id: e, kind: moe, precision: int4, scale_block: 128, scale_bits: 16, m: " + std::to_string(m) +
                  ", k: 4096, n: 14336, experts: 8, top_k: 2, time: 1 ms}\n");
  };
  const MoeKernelConfig kernelConfig = marlin();
  const double expertBytes = (4096.0 * 2 * 14336 + 14336.0 * 4096) * (4.0 + 16.0 / 128) / 8;
  // One token: two distinct experts, one token each, in one 8-row tile.
  const MeasuredKernel one = moe(1);
  const StepPlan single = planKernel(one, h200(), std::nullopt, &kernelConfig);
  EXPECT_DOUBLE_EQ(single.expertTokens, 2.0);
  EXPECT_DOUBLE_EQ(single.bytesMoved, 2 * expertBytes);
  EXPECT_EQ(kernelClass(one, single, h200()), "moe_int4_memory");
  // Four tokens: eight gates, each token's two experts distinct; as random scores route them, some
  // experts get none (an even spread would stream all eight), the same ones every time.
  const StepPlan four = planKernel(moe(4), h200(), std::nullopt, &kernelConfig);
  EXPECT_DOUBLE_EQ(four.expertTokens, 8.0);
  const double experts = four.bytesMoved / expertBytes;
  EXPECT_DOUBLE_EQ(experts, std::round(experts));
  EXPECT_GE(experts, 2.0);
  EXPECT_LT(experts, 8.0);
  EXPECT_DOUBLE_EQ(planKernel(moe(4), h200(), std::nullopt, &kernelConfig).bytesMoved, four.bytesMoved);
  // Prefill-sized: every expert's weights stream once and the FLOPs bind.
  const MeasuredKernel big = moe(32768);
  const StepPlan prefill = planKernel(big, h200(), std::nullopt, &kernelConfig);
  EXPECT_DOUBLE_EQ(prefill.expertTokens, 65536.0);
  EXPECT_DOUBLE_EQ(prefill.bytesMoved, 8 * expertBytes);
  EXPECT_EQ(kernelClass(big, prefill, h200()), "moe_int4_compute");
}

TEST(KernelDataset, RejectsAMixtureOfExpertsKernelWithoutItsExpertsOrWithMoreChoicesThanExperts) {
  const auto expect = [](const std::string& body, config::ErrorKind kind, const std::string& words) {
    SCOPED_TRACE(body);
    const std::optional<config::ConfigError> e = test::configErrorOf([&] { parse(kHead + body); }, body);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), kind) << e->what();
    EXPECT_TRUE(test::mentions(e, {words}));
  };
  expect("- {id: e, kind: moe, m: 4, k: 64, n: 64, top_k: 2, time: 1 us}\n", config::ErrorKind::kMissingKey,
         "'experts'");
  expect("- {id: e, kind: moe, m: 4, k: 64, n: 64, experts: 8, time: 1 us}\n", config::ErrorKind::kMissingKey,
         "'top_k'");
  expect("- {id: e, kind: moe, m: 4, k: 64, experts: 8, top_k: 2, time: 1 us}\n", config::ErrorKind::kMissingKey,
         "'n'");
  expect("- {id: e, kind: moe, m: 4, k: 64, n: 64, experts: 2, top_k: 4, time: 1 us}\n",
         config::ErrorKind::kInvalidConfig, "exceeds its 2 experts");
  expect("- {id: e, kind: moe, m: 4, k: 64, n: 64, experts: 8, top_k: 2, scale_block: 32, time: 1 us}\n",
         config::ErrorKind::kInvalidConfig, "scale_bits");
  expect("- {id: e, kind: moe, m: 4, k: 64, n: 64, experts: 8, top_k: 2, compute_precision: fp6, time: 1 us}\n",
         config::ErrorKind::kOutOfRange, "fp6");
  // The chip must compute in the kernel's compute precision.
  const MeasuredKernel fp4 = kernel(
      "- {id: e, kind: moe, precision: fp4, compute_precision: fp4, m: 4, k: 64, n: 64, experts: 8, top_k: 2,"
      " time: 1 us}\n");
  EXPECT_TRUE(test::mentions(test::configErrorOf([&] { planKernel(fp4, h200()); }, "fp4 compute on an H200"),
                             {"computes in fp4"}));
}

TEST(KernelDataset, TheShippedMarlinDatasetLoadsAndEveryKernelPlansOnItsPlatform) {
  const KernelDataset d =
      loadKernelDataset(config::resolveConfigFile("DATASET", "workloads/validation", "marlin-moe-h100"));
  EXPECT_EQ(d.platform, "h100-hgx8");
  EXPECT_EQ(d.kernels.size(), 13u);
  static const platform::PlatformConfig h100 = test::shippedPlatform("h100-hgx8");
  for (const MeasuredKernel& k : d.kernels) {
    SCOPED_TRACE(k.id);
    EXPECT_EQ(k.kind, KernelKind::kMoe);
    const StepPlan plan = planKernel(k, h100.chipConfig(0));
    EXPECT_GT(plan.bytesMoved, 0.0);
    EXPECT_DOUBLE_EQ(plan.expertTokens, 2.0 * static_cast<double>(k.m));
  }
}

TEST(KernelSummary, RecoversAnOverheadAndEfficiencyLineAndTheMape) {
  // measured = 5 us + simulated / 0.8 exactly.
  std::vector<KernelComparison> cs;
  for (double sim : {10e-6, 40e-6, 160e-6, 1e-3}) {
    const double meas = 5e-6 + sim / 0.8;
    cs.push_back({"g" + std::to_string(cs.size()), "gemm_bf16_compute", meas, sim, sim, (sim - meas) / meas * 100});
  }
  cs.push_back({"h", "hbm", 100e-6, 90e-6, 80e-6, -10.0});
  const auto s = summarizeKernels(cs);
  const KernelClassSummary& g = s.at("gemm_bf16_compute");
  EXPECT_EQ(g.error.points, 4u);
  EXPECT_NEAR(g.fitEfficiency, 0.8, 1e-9);
  EXPECT_NEAR(g.fitOverheadS, 5e-6, 1e-12);
  double mape = 0;
  for (int i = 0; i < 4; ++i) mape += std::abs(cs[static_cast<std::size_t>(i)].errorPercent) / 4;
  EXPECT_NEAR(g.error.mape, mape, 1e-9);
  EXPECT_EQ(g.error.worstPoint, "g0") << "the smallest kernel, where the fixed cost weighs most";
  EXPECT_EQ(s.at("hbm").error.points, 1u);
  EXPECT_EQ(s.at("hbm").fitEfficiency, 0.0) << "one point fits no line";
  EXPECT_DOUBLE_EQ(s.at("hbm").error.mape, 10.0);
}

// The launch gap's closed form: the shift d minimising sum(((s + d - m) / m)^2) is
// sum((m - s) / m^2) / sum(1 / m^2); the fitted kernel_launch is the gap the runs had plus d, less
// the launch's hops; clamped at 0.
TEST(KernelTimingFit, TheLaunchGapIsTheRelativeLeastSquaresShift) {
  // Two kernels 3 us and 5 us short at 10 and 20 us: d = (3e-6 / 1e-10 + 5e-6 / 4e-10) / (1 / 1e-10
  // + 1 / 4e-10) = (3e4 + 1.25e4) / (1.25e10) = 3.4 us.
  EXPECT_NEAR(fitKernelLaunchS({10e-6, 20e-6}, {7e-6, 15e-6}, 0.0, 0.0), 3.4e-6, 1e-15);
  // Run with a gap of 2 us (1.9 us of it kernel_launch, 0.1 us of hops): the same shift on top.
  EXPECT_NEAR(fitKernelLaunchS({10e-6, 20e-6}, {7e-6, 15e-6}, 2e-6, 0.1e-6), 5.3e-6, 1e-15);
  // Kernels already too slow: no negative gap.
  EXPECT_DOUBLE_EQ(fitKernelLaunchS({10e-6}, {12e-6}, 0.0, 0.1e-6), 0.0);
  // No training kernel: the gap the runs had, less the hops.
  EXPECT_NEAR(fitKernelLaunchS({}, {}, 3e-6, 0.1e-6), 2.9e-6, 1e-15);
}

TEST(KernelDataset, TheShippedH200DatasetLoadsAndEveryKernelPlans) {
  const KernelDataset d =
      loadKernelDataset(config::resolveConfigFile("DATASET", "workloads/validation", "h200-kernels"));
  EXPECT_EQ(d.platform, "h200-hgx8");
  EXPECT_GE(d.kernels.size(), 200u);
  EXPECT_GE(d.power.size(), 8u);
  for (const MeasuredKernel& k : d.kernels) {
    SCOPED_TRACE(k.id);
    const StepPlan plan = planKernel(k, h200());
    EXPECT_GT(plan.bytesMoved, 0.0);
    EXPECT_GT(rooflineBoundS(plan, h200()), 0.0);
  }
}

}  // namespace
}  // namespace scoville::workload
