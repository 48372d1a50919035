#include <gtest/gtest.h>

#include "hw/ChipConfig.h"
#include "test/support/Shipped.h"
#include "tlm/config/ConfigError.h"
#include "tlm/config/Loader.h"
#include "workloads/DecodePlan.h"
#include "workloads/ModelConfig.h"

namespace scoville::workload {
namespace {

using test::decodeStep;
using test::shippedModel;

hw::ChipConfig shippedChip(const std::string& platform) {
  return test::shippedPlatform(platform).chipConfig(0);
}

TEST(Model, Llama70bParameterCountMatchesThePublishedFigure) {
  const ModelConfig m = shippedModel("llama-3.1-70b");
  // Published: 70,553,706,496 parameters (../shared/reference/models.yaml).
  EXPECT_EQ(m.totalParams(), 70553706496ull);
  EXPECT_DOUBLE_EQ(m.kvBytesPerTokenPerLayer(), 2.0 * 8 * 128 * 2);
}

TEST(DecodePlan, MovesEveryWeightOnceAndTheWholeKvCache) {
  const ModelConfig m = shippedModel("llama-3.1-70b");
  const hw::ChipConfig chip = shippedChip("jalapeno");
  const DecodePlan plan = planDecodeStep(m, decodeStep(2, 1000), chip);
  const double kvRead = 2.0 * 1000 * m.kvBytesPerTokenPerLayer() * m.layers;
  const double kvWrite = 2.0 * m.kvBytesPerTokenPerLayer() * m.layers;
  const double embeddingRows = 2.0 * m.hidden * 2;
  const double weightsRead = m.weightBytes() - static_cast<double>(m.vocab) * m.hidden * 2 -
                             (2.0 * m.hidden * m.layers + m.hidden) * 2;  // embedding table and norms not streamed
  EXPECT_NEAR(plan.bytesMoved, weightsRead + kvRead + kvWrite + embeddingRows, 1.0);
  // FLOPs: 2 per weight per token for the projections, plus attention over the context.
  const double attention = 2.0 * 2 * 2 * m.qHeads * m.headDim * 1001.0 * m.layers;
  const double projections =
      2.0 * 2 * (static_cast<double>(m.layers) * (m.attentionParams() + m.ffnParams()) + double(m.vocab) * m.hidden);
  EXPECT_NEAR(plan.flops, attention + projections, 1e-9 * plan.flops);
}

TEST(DecodePlan, RejectsAModelThatDoesNotFitWithTheNumbers) {
  ModelConfig m = shippedModel("llama-3.1-70b");
  m.weightPrecision = tlm::Precision::kFp32;
  try {
    planDecodeStep(m, decodeStep(1, 8192), shippedChip("jalapeno"));
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.kind(), config::ErrorKind::kDoesNotFit);
    EXPECT_NE(e.message().find("282.2 GB"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("216 GB"), std::string::npos) << e.message();
  }
}

TEST(DecodePlan, RejectsAnSramTooSmallForOneWeightTile) {
  hw::ChipConfig chip = shippedChip("jalapeno");
  chip.sram.capacityBytes = 4 << 20;  // 2 MiB buffers; a 128-column tile of K = 28672 needs 7 MiB
  try {
    planDecodeStep(shippedModel("llama-3.1-70b"), decodeStep(1, 16), chip);
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.kind(), config::ErrorKind::kDoesNotFit);
    EXPECT_NE(e.message().find("staging buffer"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("7.34 MB"), std::string::npos) << e.message();
  }
}

TEST(DecodePlan, RejectsAPrecisionTheChipCannotCompute) {
  ModelConfig m = shippedModel("tiny-dense");
  m.computePrecision = tlm::Precision::kFp32;
  try {
    planDecodeStep(m, decodeStep(1, 16), shippedChip("jalapeno"));
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.kind(), config::ErrorKind::kInvalidConfig);
    EXPECT_NE(e.message().find("fp32"), std::string::npos);
  }
}

TEST(ModelConfig, HeadsMustDivide) {
  try {
    ModelConfig::schema().parse(config::loadConfigText(
        "model",
        "name: x\nfamily: dense\nlayers: 1\nhidden: 64\nq_heads: 6\nkv_heads: 4\nhead_dim: 16\n"
        "ffn_intermediate: 128\nvocab: 10\nweight_precision: bf16\ncompute_precision: bf16\nkv_precision: bf16\n",
        "m.yaml"));
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.kind(), config::ErrorKind::kInvalidConfig);
    EXPECT_EQ(e.location(), "m.yaml:6:11");
  }
}

}  // namespace
}  // namespace scoville::workload
