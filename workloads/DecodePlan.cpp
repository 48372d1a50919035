#include "workloads/DecodePlan.h"

#include <cmath>
#include <fmt/format.h>

#include "tlm/config/ConfigError.h"
#include "tlm/config/Units.h"

namespace scoville::workload {

namespace {

constexpr uint64_t kAlignment = 4096;  // weight tensors start on 4 KiB boundaries

uint64_t bytesOf(uint64_t elements, tlm::Precision p) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(elements) * tlm::bitsPerElement(p) / 8.0));
}

// Hands out consecutive, aligned HBM address ranges.
class AddressAllocator {
 public:
  uint64_t take(uint64_t bytes) {
    const uint64_t address = m_next;
    m_next += (bytes + kAlignment - 1) / kAlignment * kAlignment;
    return address;
  }
  uint64_t used() const { return m_next; }

 private:
  uint64_t m_next = 0;
};

}  // namespace

DecodePlan planDecodeStep(const ModelConfig& model, const ScenarioConfig& scenario, const hw::ChipConfig& chip) {
  using config::ConfigError;
  using config::ErrorKind;
  if (chip.tensorCore.macsPerCell.of(model.computePrecision) <= 0) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("model '{}' computes in {} but chip '{}' has no {} rate "
                                  "(tensor_core.macs_per_cell_per_cycle.{} = 0)",
                                  model.name, tlm::precisionName(model.computePrecision), chip.name,
                                  tlm::precisionName(model.computePrecision),
                                  tlm::precisionName(model.computePrecision)));
  }

  const auto batch = static_cast<uint64_t>(scenario.batch);
  const auto context = static_cast<uint64_t>(scenario.contextLength);
  const auto hidden = static_cast<uint64_t>(model.hidden);
  const auto headDim = static_cast<uint64_t>(model.headDim);
  const auto qDim = static_cast<uint64_t>(model.qHeads) * headDim;
  const auto kvDim = static_cast<uint64_t>(model.kvHeads) * headDim;
  const auto group = static_cast<uint64_t>(model.qHeads / model.kvHeads);
  const auto inter = static_cast<uint64_t>(model.ffnIntermediate);
  const auto upWidth = (model.gatedFfn ? 2 : 1) * inter;
  const tlm::Precision w = model.weightPrecision;
  const tlm::Precision a = model.computePrecision;

  DecodePlan plan;
  plan.computePrecision = a;
  plan.batch = batch;
  AddressAllocator hbm;

  // Weights first (resident), then the KV cache of every request.
  const uint64_t embedding = hbm.take(bytesOf(static_cast<uint64_t>(model.vocab) * hidden, w));
  struct LayerWeights {
    uint64_t qkv, o, up, down;
  };
  std::vector<LayerWeights> layers;
  for (int l = 0; l < model.layers; ++l) {
    LayerWeights lw{};
    lw.qkv = hbm.take(bytesOf(hidden * (qDim + 2 * kvDim), w));
    lw.o = hbm.take(bytesOf(qDim * hidden, w));
    lw.up = hbm.take(bytesOf(hidden * upWidth, w));
    lw.down = hbm.take(bytesOf(inter * hidden, w));
    layers.push_back(lw);
  }
  const uint64_t lmHead =
      model.tiedEmbeddings ? embedding : hbm.take(bytesOf(static_cast<uint64_t>(model.vocab) * hidden, w));
  const uint64_t kvPerTokenLayer = bytesOf(2 * kvDim, model.kvPrecision);
  const uint64_t kvRegion = kvPerTokenLayer * (context + 1);  // one request, one layer, after the step
  std::vector<uint64_t> kvBase;  // [layer * batch + request]
  for (uint64_t i = 0; i < static_cast<uint64_t>(model.layers) * batch; ++i) kvBase.push_back(hbm.take(kvRegion));

  plan.weightBytes = model.weightBytes();
  plan.kvBytes = static_cast<double>(kvRegion) * static_cast<double>(model.layers) * static_cast<double>(batch);
  const double needed = static_cast<double>(hbm.used());
  if (needed > chip.hbm.capacityBytes) {
    throw ConfigError(ErrorKind::kDoesNotFit, "",
                      fmt::format("model '{}' does not fit on chip '{}': weights {} + KV cache {} (batch {} x {} "
                                  "tokens) = {} > HBM capacity {}",
                                  model.name, chip.name, config::formatQuantity(plan.weightBytes, config::dim::kBytes),
                                  config::formatQuantity(plan.kvBytes, config::dim::kBytes), batch, context + 1,
                                  config::formatQuantity(needed, config::dim::kBytes),
                                  config::formatQuantity(chip.hbm.capacityBytes, config::dim::kBytes)));
  }

  const auto read = [](uint64_t address, uint64_t bytes) { return MemoryAccess{tlm::OpKind::kRead, address, bytes}; };
  const auto lastLayer = static_cast<uint32_t>(model.layers);

  // Embedding lookup: one row per request.
  plan.ops.push_back(PlannedOp{"embedding", lastLayer, {read(embedding, bytesOf(batch * hidden, w))}, std::nullopt});

  for (uint32_t l = 0; l < lastLayer; ++l) {
    const LayerWeights& lw = layers[l];
    plan.ops.push_back(PlannedOp{"qkv_proj", l, {read(lw.qkv, bytesOf(hidden * (qDim + 2 * kvDim), w))},
                                 tlm::GemmShape{batch, qDim + 2 * kvDim, hidden, 1}});
    // Attention: read every request's cached keys and values, append the new token's.
    PlannedOp score{"attn_score", l, {}, tlm::GemmShape{group, context + 1, headDim, batch * model.kvHeads}};
    for (uint64_t r = 0; r < batch; ++r) {
      const uint64_t base = kvBase[l * batch + r];
      score.accesses.push_back(MemoryAccess{tlm::OpKind::kKvRead, base, kvPerTokenLayer * context});
      score.accesses.push_back(MemoryAccess{tlm::OpKind::kKvAppend, base + kvPerTokenLayer * context, kvPerTokenLayer});
    }
    plan.ops.push_back(std::move(score));
    plan.ops.push_back(
        PlannedOp{"attn_value", l, {}, tlm::GemmShape{group, headDim, context + 1, batch * model.kvHeads}});
    plan.ops.push_back(PlannedOp{"o_proj", l, {read(lw.o, bytesOf(qDim * hidden, w))},
                                 tlm::GemmShape{batch, hidden, qDim, 1}});
    plan.ops.push_back(PlannedOp{"ffn_up", l, {read(lw.up, bytesOf(hidden * upWidth, w))},
                                 tlm::GemmShape{batch, upWidth, hidden, 1}});
    plan.ops.push_back(PlannedOp{"ffn_down", l, {read(lw.down, bytesOf(inter * hidden, w))},
                                 tlm::GemmShape{batch, hidden, inter, 1}});
  }
  plan.ops.push_back(PlannedOp{"lm_head", lastLayer,
                               {read(lmHead, bytesOf(static_cast<uint64_t>(model.vocab) * hidden, w))},
                               tlm::GemmShape{batch, static_cast<uint64_t>(model.vocab), hidden, 1}});

  for (const PlannedOp& op : plan.ops) {
    for (const MemoryAccess& access : op.accesses) plan.bytesMoved += static_cast<double>(access.bytes);
    if (op.gemm) plan.flops += op.gemm->flops();
  }
  return plan;
}

}  // namespace scoville::workload
