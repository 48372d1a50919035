// The step planner's weight layout: where each tensor of a chip's shard lives in its HBM (the
// StepPlanner constructor), and whether two planners lay out the same (plansLike). The per-step
// planning is StepPlan.cpp.
#include <fmt/format.h>
#include <algorithm>
#include <tuple>

#include "config/ConfigError.h"
#include "config/Units.h"
#include "workloads/StepPlan.h"
#include "workloads/StepPlanSizes.h"

namespace scoville::workload {

using config::ConfigError;
using config::ErrorKind;

namespace {

using planning::aligned;
using planning::bytesOf;
using planning::kNoExpert;
using planning::kTileColumnAlign;
using planning::u;

}  // namespace

uint64_t StepPlanner::take(uint64_t bytes) {
  const uint64_t address = m_next;
  m_next += aligned(bytes);
  m_weightBytes += bytes;
  return address;
}

StepPlanner::StepPlanner(const ModelConfig& model, const hw::ChipConfig& chip, ModelShard shard)
    : m_model(model), m_chip(chip), m_shard(std::move(shard)) {
  layOut(nullptr);
}

StepPlanner::StepPlanner(const ModelConfig& model, const hw::ChipConfig& chip, ModelShard shard,
                         const DraftLayout& draft)
    : m_model(model), m_chip(chip), m_shard(std::move(shard)), m_draftLayout(draft) {
  if (m_shard.pp != 1) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("speculative decoding with pipeline parallelism (pp = {}) is not modelled: the "
                                  "draft runs on the chips of a single stage",
                                  m_shard.pp));
  }
  layOut(&draft);
}

void StepPlanner::setMoeKernel(const MoeKernelConfig* kernel) {
  const bool padded = m_moeKernel && m_moeKernel->pads();
  m_moeKernel = kernel != nullptr ? std::optional<MoeKernelConfig>(*kernel) : std::nullopt;
  // The stored expert widths follow the kernel's alignment: lay the weights out again.
  if (padded || (m_moeKernel && m_moeKernel->pads())) layOut(m_draftLayout ? &*m_draftLayout : nullptr);
}

void StepPlanner::setKvBase(uint64_t address) {
  if (address < m_weightEnd) {
    throw std::invalid_argument(
        fmt::format("KV base {} of model '{}' is below its weights' end {}", address, m_model.name, m_weightEnd));
  }
  m_kvBase = aligned(address);
}

void StepPlanner::layOut(const DraftLayout* draft) {
  // From nothing: a planner lays out again when its MoE kernel pads the experts.
  m_firstLayer = 0;
  m_windowLayers = 0;
  m_layers.clear();
  m_next = 0;
  m_weightBytes = 0;
  m_kvRegionOffset = 0;
  m_inputProjection = 0;
  m_inputProjectionK = 0;
  const ModelConfig& m = m_model;
  const hw::ChipConfig& chip = m_chip;
  const int tp = m_shard.tp;
  const bool mla = m.attention == AttentionKind::kMla;
  const bool moe = m.family == ModelFamily::kMoe;
  const bool acrossReplicas = m_shard.expertsAcrossReplicas && tp == 1 && m_shard.ep > 1;
  const auto invalid = [](const std::string& message) { throw ConfigError(ErrorKind::kInvalidConfig, "", message); };
  if (m_shard.ep != 1 && m_shard.ep != tp && !acrossReplicas) {
    invalid(
        fmt::format("expert parallelism ep = {} with tp = {} is not modelled here: experts are sliced over the "
                    "tensor-parallel group (ep 1), spread over it whole (ep = tp), or, in serving, spread over "
                    "data-parallel replicas of tp 1 (ep = dp)",
                    m_shard.ep, tp));
  }
  const bool wholeExperts = moe && m_shard.ep > 1;
  if (wholeExperts && m_shard.expertOwner.size() != u(m.routedExperts)) {
    throw std::invalid_argument(fmt::format("expert parallelism needs the owner of each of the {} experts, got {}",
                                            m.routedExperts, m_shard.expertOwner.size()));
  }
  if (m.vocab < tp || (m.ffnIntermediate > 0 && m.ffnIntermediate < tp) ||
      (moe && !wholeExperts && m.moeIntermediate < tp)) {
    invalid(
        fmt::format("tensor parallelism tp = {} leaves ranks without work in model '{}': vocab {}, "
                    "ffn_intermediate {}{} must be at least tp",
                    tp, m.name, m.vocab, m.ffnIntermediate,
                    moe && !wholeExperts ? fmt::format(" and moe_intermediate {}", m.moeIntermediate) : ""));
  }
  if (m_shard.pp > m.layers) {
    invalid(fmt::format("pipeline parallelism pp = {} leaves stages without layers: model '{}' has {}", m_shard.pp,
                        m.name, m.layers));
  }
  if (m.qHeads % tp != 0 || (!mla && m.kvHeads % tp != 0 && tp % m.kvHeads != 0)) {
    invalid(fmt::format("tensor parallelism tp = {} does not split model '{}': q_heads {} must be a multiple of tp{}",
                        tp, m.name, m.qHeads,
                        mla ? "" : fmt::format(", and kv_heads {} a multiple or a divisor of it", m.kvHeads)));
  }
  if (chip.tensorCore.macsPerCell.of(m.computePrecision) <= 0) {
    const std::string p = tlm::precisionName(m.computePrecision);
    invalid(
        fmt::format("model '{}' computes in {} but chip '{}' has no {} rate (tensor_core.macs_per_cell_per_cycle.{} "
                    "= 0)",
                    m.name, p, chip.name, p, p));
  }

  const uint64_t hidden = u(m.hidden);
  const double wBits = m.mainFormat().bitsPerElement();
  const double eBits = m.expertFormat().bitsPerElement();
  const int rank = m_shard.rank;
  m_qHeads = u(m.qHeads / tp);
  m_kvHeads = mla ? 0 : (m.kvHeads >= tp ? u(m.kvHeads / tp) : 1);
  m_ffnInter = m.ffnIntermediate > 0 ? shardOf(u(m.ffnIntermediate), tp, rank) : 0;
  m_expertInter = !moe ? 0 : wholeExperts ? u(m.moeIntermediate) : shardOf(u(m.moeIntermediate), tp, rank);
  m_expertHidden = moe ? hidden : 0;
  if (moe && m_moeKernel) {  // stored padded to the kernel's tiles (MoeKernel.h)
    m_expertInter = planning::roundUp(m_expertInter, u(m_moeKernel->innerAlign));
    m_expertHidden = planning::roundUp(hidden, u(m_moeKernel->hiddenAlign));
  }
  m_sharedInter = moe ? shardOf(u(m.sharedExperts) * u(m.moeIntermediate), tp, rank) : 0;
  m_vocab = shardOf(u(m.vocab), tp, rank);
  m_kvPerTokenLayer = mla ? bytesOf(u(m.kvLoraRank) + u(m.qkRopeHeadDim), m.kvPrecision)
                          : bytesOf(2 * m_kvHeads * u(m.headDim), m.kvPrecision);
  const uint64_t upWidth = m.gatedFfn ? 2 : 1;
  m_expertUpBytes = bytesOf(m_expertHidden * upWidth * m_expertInter, eBits);
  const uint64_t expertDownBytes = bytesOf(m_expertInter * m_expertHidden, eBits);
  m_expertBytes = aligned(m_expertUpBytes) + expertDownBytes;

  m_firstStage = m_shard.stage == 0;
  m_lastStage = m_shard.stage == m_shard.pp - 1;
  for (int s = 0; s < m_shard.stage; ++s) m_firstLayer += static_cast<uint32_t>(shardOf(u(m.layers), m_shard.pp, s));
  m_stageLayers = static_cast<uint32_t>(shardOf(u(m.layers), m_shard.pp, m_shard.stage));
  for (uint32_t l = m_firstLayer; l < m_firstLayer + m_stageLayers; ++l)
    m_windowLayers += m.isSlidingLayer(static_cast<int>(l));

  // Weights: embedding, then layer by layer, then the LM head and the norm weights. A draft's
  // start above its target's and may share the target's embedding and LM head.
  if (draft != nullptr) {
    m_next = aligned(draft->weightBase);
    m_kvRegionOffset = draft->kvRegionOffset;
  }
  m_embedding = !m_firstStage                                ? 0
                : draft != nullptr && draft->sharesEmbedding ? draft->embedding
                                                             : take(bytesOf(m_vocab * hidden, wBits));
  if (draft != nullptr && draft->inputProjection > 0) {
    m_inputProjectionK = draft->inputProjection;
    m_inputProjection = take(bytesOf(m_inputProjectionK * hidden, wBits));
  }
  const uint64_t headDim = u(m.headDim);
  const uint64_t qkHead = u(m.qkNopeHeadDim) + u(m.qkRopeHeadDim);
  for (uint32_t local = 0; local < m_stageLayers; ++local) {
    const int l = static_cast<int>(m_firstLayer + local);
    LayerWeights w;
    if (mla) {
      const uint64_t qIn = m.qLoraRank > 0 ? u(m.qLoraRank) : hidden;
      if (m.qLoraRank > 0) w.qDown = take(bytesOf(hidden * u(m.qLoraRank) + u(m.qLoraRank), wBits));
      w.kvDown = take(bytesOf(hidden * (u(m.kvLoraRank) + u(m.qkRopeHeadDim)) + u(m.kvLoraRank), wBits));
      w.qkv = take(bytesOf(qIn * m_qHeads * qkHead, wBits));
      w.kvUp = take(bytesOf(u(m.kvLoraRank) * m_qHeads * (u(m.qkNopeHeadDim) + u(m.vHeadDim)), wBits));
      w.o = take(bytesOf(m_qHeads * u(m.vHeadDim) * hidden + (m.attentionSinks ? m_qHeads : 0), wBits));
    } else {
      const uint64_t qkvWidth = (m_qHeads + 2 * m_kvHeads) * headDim;
      w.qkv = take(bytesOf(hidden * qkvWidth + (m.attentionBias ? qkvWidth : 0), wBits));
      w.o = take(bytesOf(
          m_qHeads * headDim * hidden + (m.attentionBias ? hidden : 0) + (m.attentionSinks ? m_qHeads : 0), wBits));
    }
    if (m.isMoeLayer(l)) {
      w.router = take(bytesOf(hidden * u(m.routedExperts), wBits));
      w.experts.assign(u(m.routedExperts), kNoExpert);
      for (int e = 0; e < m.routedExperts; ++e) {
        const int mine = acrossReplicas ? m_shard.epRank : rank;
        if (wholeExperts && m_shard.expertOwner[static_cast<std::size_t>(e)] != mine) continue;
        w.experts[static_cast<std::size_t>(e)] = m_next;
        m_next += m_expertBytes;  // gate/up and down of one expert, back to back (down aligned)
        m_weightBytes += m_expertUpBytes + expertDownBytes;
      }
      m_next = aligned(m_next);
      if (m_sharedInter > 0) {
        w.up = take(bytesOf(hidden * upWidth * m_sharedInter, eBits));
        w.down = take(bytesOf(m_sharedInter * hidden, eBits));
      }
    } else {
      w.up = take(bytesOf(hidden * upWidth * m_ffnInter, wBits));
      w.down = take(bytesOf(m_ffnInter * hidden, wBits));
    }
    m_layers.push_back(std::move(w));
  }
  // A tied LM head shares the embedding only when both live on this stage.
  m_lmHead = !m_lastStage                              ? 0
             : draft != nullptr && draft->sharesLmHead ? draft->lmHead
             : m.tiedEmbeddings && m_firstStage        ? m_embedding
                                                       : take(bytesOf(m_vocab * hidden, wBits));
  // Norm weights (two per layer and the final one) are replicated on every rank; no op reads
  // them separately (they ride along with the activations), but they take memory.
  take(bytesOf((2 * u(static_cast<int>(m_stageLayers)) + (m_lastStage ? 1 : 0)) * hidden, wBits));
  m_kvBase = aligned(m_next);
  m_weightEnd = m_kvBase;

  // The smallest weight tile (kTileColumnAlign columns of the widest K) must fit one buffer.
  const uint64_t widestK = std::max({hidden, m_expertHidden, m_qHeads * std::max(headDim, u(m.vHeadDim)), m_ffnInter,
                                     m_expertInter, m_sharedInter, u(m.qLoraRank), u(m.kvLoraRank)});
  const double smallestTile = static_cast<double>(widestK * kTileColumnAlign) * std::max(wBits, eBits) / 8.0;
  if (smallestTile > chip.sram.bufferBytes()) {
    throw ConfigError(
        ErrorKind::kDoesNotFit, "",
        fmt::format("chip '{}' SRAM staging buffer ({} = sram.capacity {} / sram.staging_buffers {}) "
                    "is smaller than one weight tile of model '{}' ({} columns x {} rows = {})",
                    chip.name, config::formatQuantity(chip.sram.bufferBytes(), config::dim::kBytes),
                    config::formatQuantity(chip.sram.capacityBytes, config::dim::kBytes), chip.sram.stagingBuffers,
                    m.name, kTileColumnAlign, widestK, config::formatQuantity(smallestTile, config::dim::kBytes)));
  }
}

uint64_t StepPlanner::kvBytesFor(uint64_t tokens) const {
  // A model whose every layer has a window keeps every token (ReplicaBuilder::kvShape).
  const uint64_t window = m_windowLayers < m_stageLayers ? m_windowLayers : 0;
  const uint64_t windowTokens = std::min<uint64_t>(tokens, static_cast<uint64_t>(std::max(0, m_model.slidingWindow)));
  return m_kvPerTokenLayer * ((m_stageLayers - window) * tokens + window * windowTokens);
}

bool StepPlanner::plansLike(const StepPlanner& o) const {
  const auto layout = [](const LayerWeights& w) {
    return std::make_tuple(w.qkv, w.qDown, w.kvDown, w.kvUp, w.o, w.up, w.down, w.router, w.experts);
  };
  if (m_layers.size() != o.m_layers.size()) return false;
  for (std::size_t i = 0; i < m_layers.size(); ++i) {
    if (layout(m_layers[i]) != layout(o.m_layers[i])) return false;
  }
  return m_model.name == o.m_model.name && m_chip.name == o.m_chip.name && m_shard.tp == o.m_shard.tp &&
         m_shard.pp == o.m_shard.pp && m_shard.stage == o.m_shard.stage && m_shard.ep == o.m_shard.ep &&
         m_firstLayer == o.m_firstLayer && m_stageLayers == o.m_stageLayers && m_qHeads == o.m_qHeads &&
         m_kvHeads == o.m_kvHeads && m_ffnInter == o.m_ffnInter && m_expertInter == o.m_expertInter &&
         m_expertHidden == o.m_expertHidden && m_sharedInter == o.m_sharedInter && m_vocab == o.m_vocab &&
         m_kvPerTokenLayer == o.m_kvPerTokenLayer && m_expertBytes == o.m_expertBytes &&
         m_expertUpBytes == o.m_expertUpBytes && m_embedding == o.m_embedding && m_lmHead == o.m_lmHead &&
         m_weightBytes == o.m_weightBytes && m_kvBase == o.m_kvBase &&
         m_draftLayout.has_value() == o.m_draftLayout.has_value() && m_kvRegionOffset == o.m_kvRegionOffset &&
         m_inputProjection == o.m_inputProjection && m_inputProjectionK == o.m_inputProjectionK &&
         m_attentionKernel == o.m_attentionKernel && m_moeKernel == o.m_moeKernel;
}

}  // namespace scoville::workload
