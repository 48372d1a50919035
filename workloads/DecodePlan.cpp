#include "workloads/DecodePlan.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "tlm/config/ConfigError.h"
#include "tlm/config/Units.h"

namespace scoville::workload {

namespace {

constexpr uint64_t kAlignment = 4096;       // weight tensors start on 4 KiB boundaries
constexpr uint64_t kTileColumnAlign = 128;  // weight tiles hold whole multiples of 128 columns

// Element operations per element of the vector work (first-order operation counts).
constexpr double kNormOps = 5.0;        // residual add, square, reduce, scale, multiply (RMSNorm)
constexpr double kSoftmaxOps = 5.0;     // max, subtract, exp, sum, divide
constexpr double kActivationOps = 4.0;  // SiLU (about 3) and the gate multiply
constexpr double kSamplingOps = 1.0;    // compare per logit (greedy argmax)

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

uint64_t PlannedOp::bytes() const {
  uint64_t total = 0;
  for (const MemoryAccess& access : accesses) total += access.bytes;
  return total;
}

double PlannedOp::flops() const {
  double total = 0.0;
  for (const tlm::GemmShape& gemm : gemms) total += gemm.flops();
  return total;
}

uint64_t shardOf(uint64_t total, int parts, int rank) {
  const auto p = static_cast<uint64_t>(parts);
  return total / p + (static_cast<uint64_t>(rank) < total % p ? 1 : 0);
}

DecodePlan planDecodeStep(const ModelConfig& model, const ScenarioConfig& scenario, const hw::ChipConfig& chip,
                          ModelShard shard, int batchOverride, double reservedBytes) {
  using config::ConfigError;
  using config::ErrorKind;
  if (model.family != ModelFamily::kDense || model.attention != AttentionKind::kGqa || model.slidingWindow > 0 ||
      model.attentionSinks || model.weightScaleBlock > 0) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("model '{}' has {}, which the decode-step planner does not model yet: it plans "
                                  "dense GQA models with full attention and unscaled weights",
                                  model.name,
                                  model.family != ModelFamily::kDense      ? "mixture-of-experts layers"
                                  : model.attention != AttentionKind::kGqa ? "MLA attention"
                                  : model.slidingWindow > 0                ? "sliding-window layers"
                                  : model.attentionSinks                   ? "attention sinks"
                                                                           : "block-scaled weights"));
  }
  if (model.ffnIntermediate < shard.tp || model.vocab < shard.tp) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("tensor parallelism tp = {} leaves ranks without work in model '{}': "
                                  "ffn_intermediate {} and vocab {} must be at least tp",
                                  shard.tp, model.name, model.ffnIntermediate, model.vocab));
  }
  if (shard.pp > model.layers) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("pipeline parallelism pp = {} leaves stages without layers: model '{}' has {}",
                                  shard.pp, model.name, model.layers));
  }
  if (model.qHeads % shard.tp != 0 || (model.kvHeads % shard.tp != 0 && shard.tp % model.kvHeads != 0)) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("tensor parallelism tp = {} does not split model '{}': q_heads {} must be a "
                                  "multiple of tp, and kv_heads {} a multiple or a divisor of it",
                                  shard.tp, model.name, model.qHeads, model.kvHeads));
  }
  if (chip.tensorCore.macsPerCell.of(model.computePrecision) <= 0) {
    throw ConfigError(
        ErrorKind::kInvalidConfig, "",
        fmt::format("model '{}' computes in {} but chip '{}' has no {} rate "
                    "(tensor_core.macs_per_cell_per_cycle.{} = 0)",
                    model.name, tlm::precisionName(model.computePrecision), chip.name,
                    tlm::precisionName(model.computePrecision), tlm::precisionName(model.computePrecision)));
  }

  const auto batch = static_cast<uint64_t>(batchOverride >= 0 ? batchOverride : scenario.batch);
  const auto context = static_cast<uint64_t>(scenario.contextLength);
  const auto hidden = static_cast<uint64_t>(model.hidden);
  const auto headDim = static_cast<uint64_t>(model.headDim);
  const int tp = shard.tp;
  // This rank's heads: query heads split tp ways; KV heads split too, or each rank keeps the one
  // KV head its query heads share when there are fewer KV heads than ranks.
  const uint64_t localQHeads = static_cast<uint64_t>(model.qHeads / tp);
  const uint64_t localKvHeads = model.kvHeads >= tp ? static_cast<uint64_t>(model.kvHeads / tp) : 1;
  const auto qDim = localQHeads * headDim;
  const auto kvDim = localKvHeads * headDim;
  const auto group = localQHeads / localKvHeads;
  const uint64_t inter = shardOf(static_cast<uint64_t>(model.ffnIntermediate), tp, shard.rank);
  const auto upWidth = (model.gatedFfn ? 2 : 1) * inter;
  const uint64_t localVocab = shardOf(static_cast<uint64_t>(model.vocab), tp, shard.rank);
  const tlm::Precision w = model.weightPrecision;
  const tlm::Precision a = model.computePrecision;
  const uint64_t activationBytes = bytesOf(batch * hidden, a);

  DecodePlan plan;
  plan.shard = shard;
  plan.computePrecision = a;
  plan.batch = batch;
  AddressAllocator hbm;

  // Weights first (resident), then the KV cache of every request.
  const auto takeWeights = [&](uint64_t bytes) {
    plan.weightBytes += static_cast<double>(bytes);
    return hbm.take(bytes);
  };
  // This stage's layers: [firstLayer, firstLayer + stageLayers).
  const bool firstStage = shard.stage == 0;
  const bool lastStage = shard.stage == shard.pp - 1;
  uint32_t firstLayer = 0;
  for (int s = 0; s < shard.stage; ++s) {
    firstLayer += static_cast<uint32_t>(shardOf(static_cast<uint64_t>(model.layers), shard.pp, s));
  }
  const auto stageLayers = static_cast<uint32_t>(shardOf(static_cast<uint64_t>(model.layers), shard.pp, shard.stage));
  const uint64_t embedding = firstStage ? takeWeights(bytesOf(localVocab * hidden, w)) : 0;
  struct LayerWeights {
    uint64_t qkv, o, up, down;
  };
  std::vector<LayerWeights> layers;
  for (uint32_t l = 0; l < stageLayers; ++l) {
    LayerWeights lw{};
    lw.qkv = takeWeights(bytesOf(hidden * (qDim + 2 * kvDim), w));
    lw.o = takeWeights(bytesOf(qDim * hidden, w));
    lw.up = takeWeights(bytesOf(hidden * upWidth, w));
    lw.down = takeWeights(bytesOf(inter * hidden, w));
    layers.push_back(lw);
  }
  // A tied LM head shares the embedding only when both live on this stage.
  const uint64_t lmHead = !lastStage                           ? 0
                          : model.tiedEmbeddings && firstStage ? embedding
                                                               : takeWeights(bytesOf(localVocab * hidden, w));
  // Norm weights (two per layer and the final one) are replicated on every rank; no op reads
  // them separately (they ride along with the activations), but they take memory.
  takeWeights(bytesOf((2 * static_cast<uint64_t>(stageLayers) + (lastStage ? 1 : 0)) * hidden, w));
  const uint64_t kvPerTokenLayer = bytesOf(2 * kvDim, model.kvPrecision);
  const uint64_t kvRegion = kvPerTokenLayer * (context + 1);  // one request, one layer, after the step
  std::vector<uint64_t> kvBase;                               // [layer * batch + request]
  for (uint64_t i = 0; i < static_cast<uint64_t>(stageLayers) * batch; ++i) kvBase.push_back(hbm.take(kvRegion));

  plan.kvBytes = static_cast<double>(kvRegion) * static_cast<double>(stageLayers) * static_cast<double>(batch);
  const double needed = static_cast<double>(hbm.used()) + reservedBytes;
  if (needed > chip.hbm.capacityBytes) {
    throw ConfigError(
        ErrorKind::kDoesNotFit, "",
        fmt::format(
            "model '{}' does not fit on chip '{}'{}: weights {} + KV cache {} (batch {} x {} tokens){} = {} "
            "> HBM capacity {}",
            model.name, chip.name, tp > 1 ? fmt::format(" (tensor-parallel rank {} of {})", shard.rank, tp) : "",
            config::formatQuantity(plan.weightBytes, config::dim::kBytes),
            config::formatQuantity(plan.kvBytes, config::dim::kBytes), batch, context + 1,
            reservedBytes > 0 ? " + activations " + config::formatQuantity(reservedBytes, config::dim::kBytes) : "",
            config::formatQuantity(needed, config::dim::kBytes),
            config::formatQuantity(chip.hbm.capacityBytes, config::dim::kBytes)));
  }

  const auto lastLayer = static_cast<uint32_t>(model.layers);
  const double tileBytes = chip.sram.bufferBytes();
  // The smallest weight tile (kTileColumnAlign columns of the widest K) must fit one buffer.
  const auto widestK = std::max({hidden, qDim, inter});
  const double smallestTile = static_cast<double>(widestK * kTileColumnAlign) * tlm::bitsPerElement(w) / 8.0;
  if (smallestTile > tileBytes) {
    throw ConfigError(
        ErrorKind::kDoesNotFit, "",
        fmt::format("chip '{}' SRAM staging buffer ({} = sram.capacity {} / sram.staging_buffers {}) "
                    "is smaller than one weight tile of model '{}' ({} columns x {} rows = {})",
                    chip.name, config::formatQuantity(tileBytes, config::dim::kBytes),
                    config::formatQuantity(chip.sram.capacityBytes, config::dim::kBytes), chip.sram.stagingBuffers,
                    model.name, kTileColumnAlign, widestK, config::formatQuantity(smallestTile, config::dim::kBytes)));
  }

  // y[batch x N] = x[batch x K] * W[K x N], streamed in tiles of whole output columns; each tile's
  // output elements then take `opsPerOutput` element operations on the vector unit.
  const auto weightGemm = [&](const char* name, uint32_t layer, uint64_t address, uint64_t k, uint64_t n,
                              double opsPerOutput) {
    const double columnBytes = static_cast<double>(k) * tlm::bitsPerElement(w) / 8.0;
    uint64_t columns = static_cast<uint64_t>(tileBytes / columnBytes) / kTileColumnAlign * kTileColumnAlign;
    columns = std::max<uint64_t>(columns, kTileColumnAlign);
    for (uint64_t first = 0; first < n; first += columns) {
      const uint64_t last = std::min(n, first + columns);
      const uint64_t begin = bytesOf(k * first, w);
      const uint64_t end = bytesOf(k * last, w);
      plan.ops.push_back(PlannedOp{name,
                                   layer,
                                   {MemoryAccess{tlm::OpKind::kRead, address + begin, end - begin}},
                                   {tlm::GemmShape{batch, last - first, k, 1}},
                                   opsPerOutput * static_cast<double>(batch * (last - first))});
    }
  };

  const auto allReduceAfterLast = [&] {
    if (tp > 1) plan.ops.back().after = PlannedCollective{PlannedCollective::Kind::kAllReduce, activationBytes};
  };

  // Embedding lookup: one row per request (vocab-parallel: each rank looks up the rows it holds,
  // about 1/tp of them, and the all-reduce assembles the embeddings).
  if (firstStage) {
    PlannedOp lookup{"embedding", lastLayer, {}, {}};
    if (const uint64_t rows = shardOf(batch, tp, shard.rank); rows > 0) {
      lookup.accesses.push_back(MemoryAccess{tlm::OpKind::kRead, embedding, bytesOf(rows * hidden, w)});
    }
    plan.ops.push_back(std::move(lookup));
    allReduceAfterLast();
  }
  plan.receivesFromPrevious = !firstStage;

  // Attention over each request's cache in tiles of tokens (flash-decoding: partial softmax per
  // tile, merged at the end): read the tile's keys and values, score it, weight the values.
  const uint64_t tokensPerTile = std::max<uint64_t>(1, static_cast<uint64_t>(tileBytes) / kvPerTokenLayer);
  const auto kvHeads = localKvHeads;
  for (uint32_t local = 0; local < stageLayers; ++local) {
    const uint32_t l = firstLayer + local;
    const LayerWeights& lw = layers[local];
    plan.ops.push_back(PlannedOp{"norm", l, {}, {}, kNormOps * static_cast<double>(batch * hidden)});
    weightGemm("qkv_proj", l, lw.qkv, hidden, qDim + 2 * kvDim, 0.0);
    for (uint64_t r = 0; r < batch; ++r) {
      const uint64_t base = kvBase[local * batch + r];
      for (uint64_t first = 0; first <= context; first += tokensPerTile) {
        const uint64_t last = std::min(context + 1, first + tokensPerTile);  // the new token included
        PlannedOp tile{"attention", l, {}, {}};
        const uint64_t cached = std::min(last, context) - std::min(first, context);
        if (cached > 0) {
          tile.accesses.push_back(
              MemoryAccess{tlm::OpKind::kKvRead, base + kvPerTokenLayer * first, kvPerTokenLayer * cached});
        }
        if (last == context + 1) {
          tile.accesses.push_back(
              MemoryAccess{tlm::OpKind::kKvAppend, base + kvPerTokenLayer * context, kvPerTokenLayer});
        }
        tile.gemms.push_back(tlm::GemmShape{group, last - first, headDim, kvHeads});  // scores = q K^T
        tile.gemms.push_back(tlm::GemmShape{group, headDim, last - first, kvHeads});  // out += p V
        tile.vectorOps = kSoftmaxOps * static_cast<double>(group * kvHeads * (last - first));
        plan.ops.push_back(std::move(tile));
      }
    }
    weightGemm("o_proj", l, lw.o, qDim, hidden, 0.0);
    allReduceAfterLast();
    plan.ops.push_back(PlannedOp{"norm", l, {}, {}, kNormOps * static_cast<double>(batch * hidden)});
    // Gated: the activation runs on the gate half of the outputs; plain: on all of them.
    weightGemm("ffn_up", l, lw.up, hidden, upWidth, model.gatedFfn ? kActivationOps / 2 : kActivationOps);
    weightGemm("ffn_down", l, lw.down, inter, hidden, 0.0);
    allReduceAfterLast();
  }
  if (!lastStage) {
    // The stage's output activations go to the same rank of the next stage.
    plan.ops.back().sendNext = activationBytes;
  } else {
    plan.ops.push_back(PlannedOp{"norm", lastLayer, {}, {}, kNormOps * static_cast<double>(batch * hidden)});
    weightGemm("lm_head", lastLayer, lmHead, hidden, localVocab, kSamplingOps);
    // Each rank's best token and its score (8 bytes per request) are gathered to pick the winner.
    if (tp > 1) {
      plan.ops.back().after =
          PlannedCollective{PlannedCollective::Kind::kAllGather, 8 * batch * static_cast<uint64_t>(tp)};
    }
  }

  for (const PlannedOp& op : plan.ops) {
    plan.collectiveBytes += static_cast<double>(op.after.bytes);
    plan.bytesMoved += static_cast<double>(op.bytes());
    plan.flops += op.flops();
    plan.vectorOps += op.vectorOps;
  }
  return plan;
}

}  // namespace scoville::workload
