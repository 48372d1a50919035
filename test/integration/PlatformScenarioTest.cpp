// Whole platforms: every reference platform elaborates and runs a decode step; its printed
// totals equal the datasheets; a model that does not fit is refused chip by chip; and a
// tensor-parallel step never beats its roofline.
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "platforms/Platform.h"
#include "platforms/PlatformSummary.h"
#include "test/support/Elaboration.h"
#include "test/support/Shipped.h"
#include "tlm/ActivityBus.h"
#include "tlm/config/ConfigError.h"
#include "workloads/PlatformDecode.h"

namespace scoville::test {
namespace {

// Datasheet figures per chip, from ../shared/reference/hardware.yaml (dense TFLOPS, HBM GB and
// TB/s, TDP W) and NVLink per direction: NVLink4 18 x 25 GB/s, NVLink5 18 x 50 GB/s.
struct Datasheet {
  const char* platform;
  int chips;
  double bf16, fp8, fp4;  // TFLOP/s dense; fp4 0 where the datasheet has none
  double hbmGb, hbmTbps, tdpW, nvlinkGbps;
};
const Datasheet kDatasheets[] = {
    {"h100-hgx8", 8, 989, 1979, 0, 80, 3.35, 700, 450},
    {"h200-hgx8", 8, 989, 1979, 0, 141, 4.8, 700, 450},
    {"b200-hgx8", 8, 2250, 4500, 9000, 180, 8, 1000, 900},
    {"gb200-nvl72", 72, 2500, 5000, 10000, 186, 8, 1200, 900},
    {"gb300-nvl72", 72, 2500, 5000, 15000, 288, 8, 1400, 900},
};

TEST(PlatformTotals, EqualTheDatasheets) {
  for (const Datasheet& d : kDatasheets) {
    SCOPED_TRACE(d.platform);
    const platform::PlatformConfig config = shippedPlatform(d.platform);
    const auto totals = platform::summarize(config)["totals"];
    EXPECT_EQ(config.chipCount(), d.chips);
    // Peak rates come out of array geometry and clock: within 0.5% of the datasheet's rounding.
    EXPECT_NEAR(totals["peak_flops_per_s"]["bf16"].get<double>(), d.chips * d.bf16 * 1e12, d.chips * d.bf16 * 5e9);
    EXPECT_NEAR(totals["peak_flops_per_s"]["fp8"].get<double>(), d.chips * d.fp8 * 1e12, d.chips * d.fp8 * 5e9);
    if (d.fp4 > 0) {
      EXPECT_NEAR(totals["peak_flops_per_s"]["fp4"].get<double>(), d.chips * d.fp4 * 1e12, d.chips * d.fp4 * 5e9);
    } else {
      EXPECT_FALSE(totals["peak_flops_per_s"].contains("fp4"));
    }
    EXPECT_DOUBLE_EQ(totals["hbm_capacity_bytes"].get<double>(), d.chips * d.hbmGb * 1e9);
    EXPECT_DOUBLE_EQ(totals["hbm_bandwidth_bytes_per_s"].get<double>(), d.chips * d.hbmTbps * 1e12);
    EXPECT_DOUBLE_EQ(totals["rated_power_w"].get<double>(), d.chips * d.tdpW);
    EXPECT_DOUBLE_EQ(totals["fabric_injection_bytes_per_s"].get<double>(), d.chips * d.nvlinkGbps * 1e9);
    // Non-blocking NVSwitch domain: half the GPUs' injection bandwidth crosses any balanced cut.
    EXPECT_DOUBLE_EQ(totals["bisection_bandwidth_bytes_per_s"].get<double>(), d.chips / 2 * d.nvlinkGbps * 1e9);
  }
}

TEST(PlatformTotals, ReferenceChipFamilyScalesWithChipCount) {
  const auto one = platform::summarize(shippedPlatform("jalapeno"))["totals"];
  for (const auto& [name, chips] : std::map<std::string, int>{{"jalapeno-8", 8}, {"jalapeno-64", 64}}) {
    SCOPED_TRACE(name);
    const auto totals = platform::summarize(shippedPlatform(name))["totals"];
    EXPECT_DOUBLE_EQ(totals["rated_power_w"].get<double>(), chips * 700.0);
    EXPECT_DOUBLE_EQ(totals["peak_flops_per_s"]["fp4"].get<double>(),
                     chips * one["peak_flops_per_s"]["fp4"].get<double>());
    EXPECT_DOUBLE_EQ(totals["hbm_bandwidth_bytes_per_s"].get<double>(),
                     chips * one["hbm_bandwidth_bytes_per_s"].get<double>());
    EXPECT_DOUBLE_EQ(totals["bisection_bandwidth_bytes_per_s"].get<double>(), chips / 2 * 800e9);
  }
  EXPECT_DOUBLE_EQ(one["bisection_bandwidth_bytes_per_s"].get<double>(), 0.0);
}

TEST(PlatformFit, ModelThatDoesNotFitIsRefusedWithPerChipNumbers) {
  // llama-3.1-70b unsharded (tp 1 x dp 8) needs 141 GB of weights per 80 GB H100.
  platform::PlatformConfig config = shippedPlatform("h100-hgx8");
  config.placement.tp = 1;
  config.placement.dp = 8;
  try {
    workload::planPlatformDecodeStep(config, shippedModel("llama-3.1-70b"), decodeStep(8, 1024));
    ADD_FAILURE() << "a 141 GB model accepted on 80 GB chips";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.kind(), config::ErrorKind::kDoesNotFit);
    const std::string m = e.message();
    EXPECT_NE(m.find("tp 1 x dp 8"), std::string::npos) << m;
    EXPECT_NE(m.find("on 8 of its chips"), std::string::npos) << m;
    for (int chip = 0; chip < 8; ++chip) {
      EXPECT_NE(m.find("chip" + std::to_string(chip) + " (h100-sxm): weights"), std::string::npos) << m;
    }
    EXPECT_NE(m.find("weights 141.1 GB"), std::string::npos) << m;
    EXPECT_NE(m.find("+ activations 4.295 GB"), std::string::npos) << m;
    EXPECT_NE(m.find("> HBM capacity 80 GB"), std::string::npos) << m;
  }
  // Tensor-parallel 8 ways it fits: each chip holds about an eighth.
  config.placement.tp = 8;
  config.placement.dp = 1;
  const workload::PlatformDecodePlan plan =
      workload::planPlatformDecodeStep(config, shippedModel("llama-3.1-70b"), decodeStep(8, 1024));
  ASSERT_EQ(plan.plans.size(), 8u);
  EXPECT_LT(plan.plans[0].weightBytes, 141.1e9 / 8 * 1.01);
}

TEST(PlatformFit, ShardsPartitionTheModel) {
  const workload::ModelConfig model = shippedModel("llama-3.1-70b");
  const hw::ChipConfig chip = shippedPlatform("jalapeno").chipConfig(0);
  const workload::DecodePlan whole = workload::planDecodeStep(model, decodeStep(4, 512), chip);
  EXPECT_DOUBLE_EQ(whole.weightBytes, model.weightBytes());
  double weights = 0, flops = 0, kv = 0;
  const int tp = 8;
  for (int r = 0; r < tp; ++r) {
    const workload::DecodePlan part = workload::planDecodeStep(model, decodeStep(4, 512), chip, {tp, r});
    weights += part.weightBytes;
    flops += part.flops;
    kv += part.kvBytes;
    EXPECT_GT(part.collectiveBytes, 0.0);
  }
  // Everything is split except the norm weights, which every rank keeps.
  const double norms = (2.0 * model.layers + 1) * model.hidden * 2;
  EXPECT_DOUBLE_EQ(weights, model.weightBytes() + (tp - 1) * norms);
  EXPECT_DOUBLE_EQ(kv, whole.kvBytes);  // 8 KV heads over 8 ranks: one each
  EXPECT_NEAR(flops / whole.flops, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(whole.collectiveBytes, 0.0);
}

// One decode step of the tiny model on a whole platform: every driver finishes, every chip of
// the placement worked, and the step is no faster than its slowest chip's roofline.
class ReferencePlatform : public ::testing::TestWithParam<const char*> {};

TEST_P(ReferencePlatform, ElaboratesAndRunsATinyWorkload) {
  claimElaboration();
  const platform::PlatformConfig config = shippedPlatform(GetParam());
  workload::PlatformDecodePlan plan =
      workload::planPlatformDecodeStep(config, shippedModel("tiny-dense"), decodeStep(2 * config.placement.dp, 512));
  std::vector<double> bounds;
  for (std::size_t i = 0; i < plan.plans.size(); ++i) {
    const hw::ChipConfig& chip = config.chipConfig(plan.members[i].chip);
    bounds.push_back(std::max(plan.plans[i].memoryBoundS(chip), plan.plans[i].computeBoundS(chip)));
  }
  struct LinkBytes : tlm::ActivityListener {
    double wire = 0.0;
    void onActivity(const tlm::ActivityEvent& e) override {
      if (e.activity == tlm::Activity::kLinkBytes) wire += e.amount;
    }
  } links;
  platform::Platform platform("platform", config);
  platform.networkActivity().subscribe(links);
  workload::PlatformDecodeRunner runner("workload", platform, std::move(plan), tlm::TimingMode::kLooselyTimed);
  sc_core::sc_start();
  ASSERT_EQ(runner.error(), "");
  ASSERT_TRUE(runner.finished());
  EXPECT_EQ(static_cast<int>(runner.drivers()), config.chipCount());
  for (std::size_t i = 0; i < runner.drivers(); ++i) {
    EXPECT_GE(runner.driver(i).stepTime().to_seconds(), bounds[i] * (1 - 1e-12)) << "chip " << i;
  }
  if (config.placement.tp > 1) {
    ASSERT_EQ(runner.groups().size(), static_cast<std::size_t>(config.placement.dp));
    // Per layer: an all-reduce after attention and after the FFN; plus the embedding's and the
    // LM head's: 2 x 4 + 2 collectives per group.
    EXPECT_DOUBLE_EQ(runner.groups()[0]->stats().value("collectives"), 10.0);
    EXPECT_GT(links.wire, runner.groups()[0]->stats().value("bytes")) << "each byte crosses two links";
  } else {
    EXPECT_TRUE(runner.groups().empty());
    EXPECT_DOUBLE_EQ(links.wire, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, ReferencePlatform,
                         ::testing::Values("jalapeno", "jalapeno-8", "jalapeno-64", "h100-hgx8", "h200-hgx8",
                                           "b200-hgx8", "gb200-nvl72", "gb300-nvl72"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Tensor parallelism over the switch: the collectives take at least their bytes over the links,
// and the step costs more than the memory roofline by about that time.
TEST(PlatformScenario, TensorParallelStepPaysForItsCollectives) {
  claimElaboration();
  const platform::PlatformConfig config = shippedPlatform("jalapeno-8");
  workload::PlatformDecodePlan plan =
      workload::planPlatformDecodeStep(config, shippedModel("llama-3.1-70b"), decodeStep(16, 2048));
  const hw::ChipConfig& chip = config.chipConfig(0);
  double worstBound = 0.0;
  for (const workload::DecodePlan& p : plan.plans) {
    worstBound = std::max({worstBound, p.memoryBoundS(chip), p.computeBoundS(chip)});
  }
  platform::Platform platform("platform", config);
  workload::PlatformDecodeRunner runner("workload", platform, std::move(plan), tlm::TimingMode::kLooselyTimed);
  sc_core::sc_start();
  ASSERT_TRUE(runner.finished()) << runner.error();
  const double step = runner.stepTime().to_seconds();
  const double collectiveTime = runner.groups()[0]->stats().value("time");
  const double sentPerChip = runner.groups()[0]->stats().value("bytes") / 8;
  EXPECT_GE(step, worstBound);
  // Each chip pushes its collective bytes through its 800 GB/s of ports at best.
  EXPECT_GE(collectiveTime, sentPerChip / chip.fabricPorts.bandwidthBytesPerS());
  EXPECT_GE(step, worstBound + 0.5 * collectiveTime) << "collectives sit on the compute stream's path";
  EXPECT_LT(step, 2.0 * worstBound) << "and do not dominate a 70B decode step";
}

}  // namespace
}  // namespace scoville::test
