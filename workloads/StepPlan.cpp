#include "workloads/StepPlan.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "tlm/config/ConfigError.h"
#include "tlm/config/Units.h"

namespace scoville::workload {

using config::ConfigError;
using config::ErrorKind;

namespace {

constexpr uint64_t kAlignment = 4096;       // weight tensors start on 4 KiB boundaries
constexpr uint64_t kTileColumnAlign = 128;  // weight tiles hold whole multiples of 128 columns
constexpr uint64_t kNoExpert = ~uint64_t{0};

// Element operations per element of the vector work (first-order operation counts).
constexpr double kNormOps = 5.0;        // residual add, square, reduce, scale, multiply (RMSNorm)
constexpr double kSoftmaxOps = 5.0;     // max, subtract, exp, sum, divide
constexpr double kActivationOps = 4.0;  // SiLU (about 3) and the gate multiply
constexpr double kSamplingOps = 1.0;    // compare per logit (greedy argmax)
constexpr double kRouterOps = 2.0;      // per router logit: softmax share and top-k compare
constexpr double kCombineOps = 2.0;     // per token, expert and element: scale and accumulate

uint64_t u(int v) {
  return static_cast<uint64_t>(v);
}

uint64_t bytesOf(uint64_t elements, double bitsPerElement) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(elements) * bitsPerElement / 8.0));
}

uint64_t bytesOf(uint64_t elements, tlm::Precision p) {
  return bytesOf(elements, tlm::bitsPerElement(p));
}

uint64_t aligned(uint64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

uint64_t StepPlanner::take(uint64_t bytes) {
  const uint64_t address = m_next;
  m_next += aligned(bytes);
  m_weightBytes += bytes;
  return address;
}

StepPlanner::StepPlanner(const ModelConfig& model, const hw::ChipConfig& chip, ModelShard shard)
    : m_model(model), m_chip(chip), m_shard(std::move(shard)) {
  const ModelConfig& m = m_model;
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
  m_sharedInter = moe ? shardOf(u(m.sharedExperts) * u(m.moeIntermediate), tp, rank) : 0;
  m_vocab = shardOf(u(m.vocab), tp, rank);
  m_kvPerTokenLayer = mla ? bytesOf(u(m.kvLoraRank) + u(m.qkRopeHeadDim), m.kvPrecision)
                          : bytesOf(2 * m_kvHeads * u(m.headDim), m.kvPrecision);
  const uint64_t upWidth = m.gatedFfn ? 2 : 1;
  m_expertUpBytes = bytesOf(hidden * upWidth * m_expertInter, eBits);
  m_expertBytes = aligned(m_expertUpBytes) + bytesOf(m_expertInter * hidden, eBits);

  m_firstStage = m_shard.stage == 0;
  m_lastStage = m_shard.stage == m_shard.pp - 1;
  for (int s = 0; s < m_shard.stage; ++s) m_firstLayer += static_cast<uint32_t>(shardOf(u(m.layers), m_shard.pp, s));
  m_stageLayers = static_cast<uint32_t>(shardOf(u(m.layers), m_shard.pp, m_shard.stage));

  // Weights: embedding, then layer by layer, then the LM head and the norm weights.
  m_embedding = m_firstStage ? take(bytesOf(m_vocab * hidden, wBits)) : 0;
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
        m_weightBytes += m_expertUpBytes + bytesOf(m_expertInter * hidden, eBits);
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
  m_lmHead = !m_lastStage ? 0 : m.tiedEmbeddings && m_firstStage ? m_embedding : take(bytesOf(m_vocab * hidden, wBits));
  // Norm weights (two per layer and the final one) are replicated on every rank; no op reads
  // them separately (they ride along with the activations), but they take memory.
  take(bytesOf((2 * u(static_cast<int>(m_stageLayers)) + (m_lastStage ? 1 : 0)) * hidden, wBits));
  m_kvBase = aligned(m_next);

  // The smallest weight tile (kTileColumnAlign columns of the widest K) must fit one buffer.
  const uint64_t widestK = std::max({hidden, m_qHeads * std::max(headDim, u(m.vHeadDim)), m_ffnInter, m_expertInter,
                                     m_sharedInter, u(m.qLoraRank), u(m.kvLoraRank)});
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

/// Builds one step's plan: the ops of every layer in order.
class StepPlanner::Builder {
 public:
  Builder(const StepPlanner& planner, const StepBatch& batch)
      : p(planner), m(planner.m_model), b(batch), tile(planner.m_chip.sram.bufferBytes()) {
    for (const StepSequence& s : b.sequences) {
      tokens += s.tokens;
      if (s.tokens == 1) {
        ++decodes;
      } else {
        prefillTokens += s.tokens;
      }
      if (s.samples) ++sampling;
    }
    weightPhase = prefillTokens > decodes ? tlm::LlmPhase::kPrefill : tlm::LlmPhase::kDecode;
    activationBytes = bytesOf(tokens * u(m.hidden), m.computePrecision);
  }

  StepPlan build() {
    plan.shard = p.m_shard;
    plan.computePrecision = m.computePrecision;
    plan.batch = b.sequences.size();
    plan.tokens = tokens;
    plan.weightBytes = p.weightBytes();
    // With experts across replicas an idle chip still serves the others' tokens (and all-to-alls).
    if (tokens == 0 && b.dispatchBytes == nullptr) return finish();
    if (p.m_firstStage && tokens > 0) embedding();
    plan.receivesFromPrevious = !p.m_firstStage;
    for (uint32_t local = 0; local < p.m_stageLayers; ++local) layer(local);
    if (!p.m_lastStage) {
      plan.ops.back().sendNext = activationBytes;  // to the same rank of the next stage
    } else if (sampling > 0) {
      vector("norm", static_cast<uint32_t>(m.layers), kNormOps * static_cast<double>(sampling * u(m.hidden)));
      weightGemm("lm_head", static_cast<uint32_t>(m.layers), p.m_lmHead, u(m.hidden), p.m_vocab, sampling, kSamplingOps,
                 m.mainFormat().bitsPerElement());
      // Each rank's best token and its score (8 bytes per sequence) are gathered to pick the winner.
      if (p.m_shard.tp > 1) {
        plan.ops.back().after =
            PlannedCollective{PlannedCollective::Kind::kAllGather, 8 * sampling * u(p.m_shard.tp), {}};
      }
    }
    return finish();
  }

 private:
  StepPlan finish() {
    for (const StepSequence& s : b.sequences) {
      plan.kvBytes += static_cast<double>(p.m_kvPerTokenLayer * (s.context + s.tokens) * p.m_stageLayers);
    }
    for (const PlannedOp& op : plan.ops) {
      plan.collectiveBytes += static_cast<double>(op.after.bytes);
      plan.bytesMoved += static_cast<double>(op.bytes());
      plan.remoteKvBytes += static_cast<double>(op.bytesOn(hw::KvTier::kRemoteHbm));
      plan.hostKvBytes += static_cast<double>(op.bytesOn(hw::KvTier::kHost));
      plan.flops += op.flops();
      plan.vectorOps += op.vectorOps;
    }
    return std::move(plan);
  }

  PlannedOp& push(const char* name, uint32_t layer, tlm::LlmPhase phase) {
    plan.ops.emplace_back();
    PlannedOp& op = plan.ops.back();
    op.name = name;
    op.layer = layer;
    op.phase = phase;
    op.block = blockOf(op.name);
    return op;
  }

  void vector(const char* name, uint32_t layer, double ops) { push(name, layer, weightPhase).vectorOps = ops; }

  void allReduceAfterLast() {
    if (p.m_shard.tp > 1)
      plan.ops.back().after = PlannedCollective{PlannedCollective::Kind::kAllReduce, activationBytes, {}};
  }

  // y[rows x N] = x[rows x K] * W[K x N], W at `address` stored output-major, streamed in tiles of
  // whole output columns; each tile's outputs then take `opsPerOutput` vector operations.
  void weightGemm(const char* name, uint32_t layer, uint64_t address, uint64_t k, uint64_t n, uint64_t rows,
                  double opsPerOutput, double bits, uint64_t count = 1) {
    if (rows == 0) return;  // nothing to multiply: the weights stay in HBM
    const double columnBytes = static_cast<double>(k * count) * bits / 8.0;
    uint64_t columns = static_cast<uint64_t>(tile / columnBytes) / kTileColumnAlign * kTileColumnAlign;
    columns = std::max<uint64_t>(columns, kTileColumnAlign);
    for (uint64_t first = 0; first < n; first += columns) {
      const uint64_t last = std::min(n, first + columns);
      const uint64_t begin = bytesOf(k * count * first, bits);
      const uint64_t end = bytesOf(k * count * last, bits);
      PlannedOp& op = push(name, layer, weightPhase);
      op.accesses.push_back(MemoryAccess{tlm::OpKind::kRead, address + begin, end - begin});
      op.gemms.push_back(tlm::GemmShape{rows, last - first, k, count});
      op.vectorOps = opsPerOutput * static_cast<double>(rows * (last - first) * count);
    }
  }

  void embedding() {
    // Vocabulary-parallel lookup: each rank reads the rows of the tokens whose ids it holds,
    // 1/tp of them on average (counted as ceil(tokens / tp) on every rank: token ids are not
    // modelled, and the busiest rank sets the pace), and the all-reduce assembles the embeddings.
    PlannedOp& lookup = push("embedding", static_cast<uint32_t>(m.layers), weightPhase);
    const auto tp = static_cast<uint64_t>(p.m_shard.tp);
    if (const uint64_t rows = (tokens + tp - 1) / tp; rows > 0) {
      lookup.accesses.push_back(MemoryAccess{tlm::OpKind::kRead, p.m_embedding,
                                             bytesOf(rows * u(m.hidden), m.mainFormat().bitsPerElement())});
    }
    allReduceAfterLast();
  }

  void layer(uint32_t local) {
    const uint32_t l = p.m_firstLayer + local;
    const LayerWeights& w = p.m_layers[local];
    const uint64_t hidden = u(m.hidden);
    const double bits = m.mainFormat().bitsPerElement();
    // A chip without tokens of its own (experts across replicas) only serves its experts.
    if (tokens > 0) {
      vector("norm", l, kNormOps * static_cast<double>(tokens * hidden));
      if (m.attention == AttentionKind::kMla) {
        mlaAttention(l, local, w);
      } else {
        const uint64_t headDim = u(m.headDim);
        weightGemm("qkv_proj", l, w.qkv, hidden, (p.m_qHeads + 2 * p.m_kvHeads) * headDim, tokens, 0.0, bits);
        gqaAttention(l, local);
        weightGemm("o_proj", l, w.o, p.m_qHeads * headDim, hidden, tokens, 0.0, bits);
      }
      allReduceAfterLast();
      vector("norm", l, kNormOps * static_cast<double>(tokens * hidden));
    }
    if (m.isMoeLayer(static_cast<int>(l))) {
      moe(l, w);
    } else if (tokens > 0) {
      ffn("ffn_up", "ffn_down", l, w.up, w.down, p.m_ffnInter, bits);
    }
    if (tokens > 0) allReduceAfterLast();
  }

  /// An op without work of its own that carries an all-to-all of `bytes[l]` per member.
  void allToAll(const char* name, uint32_t l, const std::vector<std::vector<uint64_t>>* bytes) {
    if (bytes == nullptr || bytes->size() <= l) {
      throw std::invalid_argument(
          fmt::format("step of model '{}' with experts across replicas has no {} bytes "
                      "for layer {}",
                      m.name, name, l));
    }
    PlannedOp& op = push(name, l, weightPhase);
    op.after.kind = PlannedCollective::Kind::kAllToAll;
    op.after.sendBytes = (*bytes)[l];
    for (uint64_t v : op.after.sendBytes) op.after.bytes += v;
  }

  void ffn(const char* upName, const char* downName, uint32_t l, uint64_t up, uint64_t down, uint64_t inter,
           double bits) {
    // Gated: the activation runs on the gate half of the outputs; plain: on all of them.
    const uint64_t upWidth = (m.gatedFfn ? 2 : 1) * inter;
    weightGemm(upName, l, up, u(m.hidden), upWidth, tokens, m.gatedFfn ? kActivationOps / 2 : kActivationOps, bits);
    weightGemm(downName, l, down, inter, u(m.hidden), tokens, 0.0, bits);
  }

  uint64_t window(uint32_t l) const { return m.isSlidingLayer(static_cast<int>(l)) ? u(m.slidingWindow) : 0; }

  /// Tokens of cached KV layer l reads (each sequence's window, or all) and appends, per tier
  /// (all local HBM unless the batch carries block tables that place some elsewhere).
  struct KvTokens {
    std::array<uint64_t, hw::kKvTierCount> read{};
    std::array<uint64_t, hw::kKvTierCount> append{};
  };
  const KvTokens& kvTokens(uint32_t l) {
    const uint64_t w = window(l);
    const auto cached = kvTokensByWindow.find(w);
    if (cached != kvTokensByWindow.end()) return cached->second;
    KvTokens t;
    const std::size_t local = hw::kvTierIndex(hw::KvTier::kLocalHbm);
    for (const StepSequence& s : b.sequences) {
      const uint64_t read = w > 0 ? std::min(s.context, w - 1) : s.context;
      if (b.kv == nullptr) {
        t.read[local] += read;
        t.append[local] += s.tokens;
        continue;
      }
      b.kv->addTokensByTier(s.request, s.context - read, s.context, t.read);
      b.kv->addTokensByTier(s.request, s.context, s.context + s.tokens, t.append);
    }
    return kvTokensByWindow.emplace(w, t).first->second;
  }

  /// Reads the step's cached KV of layer l in buffer-sized tiles, appends the new tokens' KV, and
  /// runs `gemms` (the decode attention, split over the tiles in proportion to their bytes) and
  /// `tail` (per-prefill-sequence attention, after the last tile). The reads are one stream per
  /// tier, local HBM first, then remote HBM, then host; each tier's appends continue its stream.
  void attentionTiles(uint32_t l, uint32_t local, const std::vector<tlm::GemmShape>& decodeGemms, double decodeVector,
                      const std::vector<tlm::GemmShape>& tail, double tailVector) {
    const KvTokens& kv = kvTokens(l);
    // Local HBM: one stream from the first sequence's blocks; the controller spreads it over its
    // channels as the blocks. It stays inside the layer's region, wrapping at its end
    // (kvLayerStride). Off the chip: from the start of the layer's region of that tier's KV space.
    struct Stream {
      uint64_t base = 0;
      uint64_t stride = 0;  // 0: no wrap
      uint64_t cursor = 0;
    };
    std::array<Stream, hw::kKvTierCount> streams{};
    streams[hw::kvTierIndex(hw::KvTier::kLocalHbm)] =
        Stream{p.m_kvBase + local * b.kvLayerStride, b.kvLayerStride, b.sequences.front().kvAddress};
    if (b.kv != nullptr) {
      for (const hw::KvTier tier : {hw::KvTier::kRemoteHbm, hw::KvTier::kHost}) {
        const uint64_t stride = b.kv->capacityBlocks(tier) * b.kv->layerBlockBytes();
        streams[hw::kvTierIndex(tier)] = Stream{local * stride, stride, 0};
      }
    }
    const auto addKv = [&](PlannedOp& op, tlm::OpKind kind, hw::KvTier tier, uint64_t bytes) {
      Stream& s = streams[hw::kvTierIndex(tier)];
      while (bytes > 0) {
        const uint64_t at = s.stride > 0 ? s.cursor % s.stride : s.cursor;
        const uint64_t run = s.stride > 0 ? std::min(bytes, s.stride - at) : bytes;
        op.accesses.push_back(MemoryAccess{kind, s.base + at, run, tier});
        s.cursor += run;
        bytes -= run;
      }
    };
    std::array<uint64_t, hw::kKvTierCount> readLeft{};
    uint64_t readBytes = 0;
    for (std::size_t t = 0; t < hw::kKvTierCount; ++t) {
      readLeft[t] = kv.read[t] * p.m_kvPerTokenLayer;
      readBytes += readLeft[t];
    }
    const auto tiles = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(static_cast<double>(readBytes) / tile)));
    for (uint64_t t = 0; t < tiles; ++t) {
      const tlm::LlmPhase phase = decodes > 0 ? tlm::LlmPhase::kDecode : tlm::LlmPhase::kPrefill;
      PlannedOp& op = push("attention", l, t + 1 == tiles && decodes == 0 ? tlm::LlmPhase::kPrefill : phase);
      uint64_t bytes = shardOf(readBytes, static_cast<int>(tiles), static_cast<int>(t));
      for (const hw::KvTier tier : hw::kKvTiers) {
        const uint64_t part = std::min(bytes, readLeft[hw::kvTierIndex(tier)]);
        if (part == 0) continue;
        addKv(op, tlm::OpKind::kKvRead, tier, part);
        readLeft[hw::kvTierIndex(tier)] -= part;
        bytes -= part;
      }
      for (const tlm::GemmShape& g : decodeGemms) {
        tlm::GemmShape part = g;
        part.n = shardOf(g.n, static_cast<int>(tiles), static_cast<int>(t));
        if (part.n > 0) op.gemms.push_back(part);
      }
      op.vectorOps = decodeVector / static_cast<double>(tiles);
      if (t + 1 == tiles) {
        for (const hw::KvTier tier : hw::kKvTiers) {
          const uint64_t append = kv.append[hw::kvTierIndex(tier)] * p.m_kvPerTokenLayer;
          if (append > 0) addKv(op, tlm::OpKind::kKvAppend, tier, append);
        }
        op.gemms.insert(op.gemms.end(), tail.begin(), tail.end());
        op.vectorOps += tailVector;
      }
    }
  }

  void gqaAttention(uint32_t l, uint32_t local) {
    const uint64_t headDim = u(m.headDim);
    const uint64_t kvHeads = p.m_kvHeads;
    const uint64_t group = p.m_qHeads / kvHeads;
    const uint64_t w = window(l);
    const double sinks = m.attentionSinks ? 1.0 : 0.0;  // one more logit per query and head
    // Decode (flash-decoding): each token's `group` query heads score its context; the GEMMs of
    // all decoding sequences have the same M and are issued as one with their contexts summed.
    uint64_t decodeContext = 0;
    std::vector<tlm::GemmShape> tail;
    double tailVector = 0.0;
    for (const StepSequence& s : b.sequences) {
      const uint64_t seen = attendedTokens(s.context, s.tokens, w);
      if (s.tokens == 1) {
        decodeContext += seen;
        continue;
      }
      // Prefill (flash-attention): the chunk's queries as M, each seeing its causal span.
      const uint64_t span = (seen + s.tokens - 1) / s.tokens;
      tail.push_back(tlm::GemmShape{group * s.tokens, span, headDim, kvHeads});  // scores = q K^T
      tail.push_back(tlm::GemmShape{group * s.tokens, headDim, span, kvHeads});  // out = p V
      tailVector += kSoftmaxOps * static_cast<double>(group * kvHeads) * (static_cast<double>(seen) + sinks * s.tokens);
    }
    std::vector<tlm::GemmShape> decode;
    double decodeVector = 0.0;
    if (decodeContext > 0) {
      decode.push_back(tlm::GemmShape{group, decodeContext, headDim, kvHeads});
      decode.push_back(tlm::GemmShape{group, headDim, decodeContext, kvHeads});
      decodeVector = kSoftmaxOps * static_cast<double>(group * kvHeads) *
                     (static_cast<double>(decodeContext) + sinks * static_cast<double>(decodes));
    }
    attentionTiles(l, local, decode, decodeVector, tail, tailVector);
  }

  void mlaAttention(uint32_t l, uint32_t local, const LayerWeights& w) {
    const uint64_t hidden = u(m.hidden);
    const uint64_t heads = p.m_qHeads;
    const uint64_t nope = u(m.qkNopeHeadDim), rope = u(m.qkRopeHeadDim), v = u(m.vHeadDim);
    const uint64_t latent = u(m.kvLoraRank);
    const double bits = m.mainFormat().bitsPerElement();
    if (m.qLoraRank > 0) {
      weightGemm("q_down", l, w.qDown, hidden, u(m.qLoraRank), tokens, kNormOps, bits);
    }
    weightGemm("q_up", l, w.qkv, m.qLoraRank > 0 ? u(m.qLoraRank) : hidden, heads * (nope + rope), tokens, 0.0, bits);
    weightGemm("kv_down", l, w.kvDown, hidden, latent + rope, tokens, kNormOps, bits);
    // The per-head K (no RoPE) and V up-projection. Decode absorbs it: queries move into the
    // latent space (q_nope W_UK) and attention runs over the cached latent directly; prefill
    // decompresses its chunk's context into per-head K and V.
    uint64_t decodeContext = 0, prefillContext = 0;
    std::vector<tlm::GemmShape> tail;
    double tailVector = 0.0;
    for (const StepSequence& s : b.sequences) {
      const uint64_t seen = attendedTokens(s.context, s.tokens, window(l));
      if (s.tokens == 1) {
        decodeContext += seen;
        continue;
      }
      prefillContext += s.context + s.tokens;
      const uint64_t span = (seen + s.tokens - 1) / s.tokens;
      tail.push_back(tlm::GemmShape{s.tokens, span, nope + rope, heads});  // scores
      tail.push_back(tlm::GemmShape{s.tokens, v, span, heads});            // out
      tailVector += kSoftmaxOps * static_cast<double>(heads * seen);
    }
    PlannedOp& up = push("kv_up", l, weightPhase);
    up.accesses.push_back(MemoryAccess{tlm::OpKind::kRead, w.kvUp, bytesOf(latent * heads * (nope + v), bits)});
    if (decodes > 0) up.gemms.push_back(tlm::GemmShape{decodes, latent, nope, heads});  // q_nope W_UK
    if (prefillContext > 0) up.gemms.push_back(tlm::GemmShape{prefillContext, heads * (nope + v), latent, 1});
    std::vector<tlm::GemmShape> decode;
    double decodeVector = 0.0;
    if (decodeContext > 0) {
      // Multi-query attention over the latent: every head scores the shared latent + RoPE key.
      decode.push_back(tlm::GemmShape{heads, decodeContext, latent + rope, 1});
      decode.push_back(tlm::GemmShape{heads, latent, decodeContext, 1});
      decodeVector = kSoftmaxOps * static_cast<double>(heads * decodeContext);
    }
    attentionTiles(l, local, decode, decodeVector, tail, tailVector);
    if (decodes > 0) {
      // Absorbed value projection (latent -> per-head V), weights still in the staging buffer.
      push("v_absorb", l, tlm::LlmPhase::kDecode).gemms.push_back(tlm::GemmShape{decodes, v, latent, heads});
    }
    weightGemm("o_proj", l, w.o, heads * v, hidden, tokens, 0.0, bits);
  }

  void moe(uint32_t l, const LayerWeights& w) {
    if (b.expertTokens == nullptr || b.expertTokens->size() <= l || (*b.expertTokens)[l].size() != u(m.routedExperts)) {
      throw std::invalid_argument(
          fmt::format("step of model '{}' has no routing for mixture-of-experts layer {}", m.name, l));
    }
    const uint64_t hidden = u(m.hidden);
    const double bits = m.mainFormat().bitsPerElement();
    const double eBits = m.expertFormat().bitsPerElement();
    const bool across = p.m_shard.expertsAcrossReplicas;
    if (tokens > 0) weightGemm("router", l, w.router, hidden, u(m.routedExperts), tokens, kRouterOps, bits);
    // Experts across replicas: the tokens go to the chips holding their experts and come back.
    if (across) allToAll("dispatch", l, b.dispatchBytes);
    // Routed experts this chip holds that received tokens, packed in layout order into tiles of
    // at most one staging buffer; adjacent experts are one read. Each tile's experts run as
    // batched GEMMs, one per distinct token count.
    const std::vector<uint64_t>& routed = (*b.expertTokens)[l];
    const uint64_t inter = p.m_expertInter;
    const uint64_t upWidth = (m.gatedFfn ? 2 : 1) * inter;
    const double activation = m.gatedFfn ? kActivationOps / 2 : kActivationOps;
    std::map<uint64_t, uint64_t> byCount;  // tokens -> experts in the current tile
    uint64_t tileBytes = 0;
    uint64_t expertTokens = 0;
    PlannedOp* op = nullptr;
    const auto flush = [&] {
      if (op == nullptr) return;
      for (const auto& [n, count] : byCount) op->gemms.push_back(tlm::GemmShape{n, upWidth, hidden, count});
      for (const auto& [n, count] : byCount) op->gemms.push_back(tlm::GemmShape{n, hidden, inter, count});
      byCount.clear();
      op = nullptr;
      tileBytes = 0;
    };
    for (std::size_t e = 0; e < routed.size(); ++e) {
      const uint64_t n = routed[e];
      if (n == 0 || w.experts[e] == kNoExpert) continue;
      expertTokens += n;
      if (static_cast<double>(p.m_expertBytes) > tile) {
        // An expert larger than a buffer streams in column tiles of its own.
        flush();
        weightGemm("experts", l, w.experts[e], hidden, upWidth, n, activation, eBits);
        weightGemm("experts", l, w.experts[e] + aligned(p.m_expertUpBytes), inter, hidden, n, 0.0, eBits);
        continue;
      }
      if (op != nullptr && static_cast<double>(tileBytes + p.m_expertBytes) > tile) flush();
      if (op == nullptr) op = &push("experts", l, weightPhase);
      MemoryAccess* last = op->accesses.empty() ? nullptr : &op->accesses.back();
      if (last != nullptr && last->address + last->bytes == w.experts[e]) {
        last->bytes += p.m_expertBytes;
      } else {
        op->accesses.push_back(MemoryAccess{tlm::OpKind::kRead, w.experts[e], p.m_expertBytes});
      }
      tileBytes += p.m_expertBytes;
      ++byCount[n];
      op->vectorOps += activation * static_cast<double>(n * upWidth);
    }
    flush();
    plan.expertTokens += static_cast<double>(expertTokens);
    if (across) allToAll("combine", l, b.combineBytes);
    if (tokens == 0) return;
    if (p.m_sharedInter > 0) ffn("shared_up", "shared_down", l, w.up, w.down, p.m_sharedInter, eBits);
    // Weighted sum of each token's expert outputs (and the shared experts'): of the experts this
    // chip computed, or, across replicas, of the outputs its tokens got back.
    const uint64_t summed = across ? tokens * u(m.expertsPerToken) : expertTokens;
    vector("moe_combine", l,
           kCombineOps * static_cast<double>(summed * hidden + (p.m_sharedInter > 0 ? tokens * hidden : 0)));
  }

  const StepPlanner& p;
  const ModelConfig& m;
  const StepBatch& b;
  const double tile;
  StepPlan plan;
  uint64_t tokens = 0;
  uint64_t decodes = 0;
  uint64_t prefillTokens = 0;
  uint64_t sampling = 0;
  uint64_t activationBytes = 0;
  tlm::LlmPhase weightPhase = tlm::LlmPhase::kDecode;
  std::map<uint64_t, KvTokens> kvTokensByWindow;  ///< kvTokens() by attention window (0: none)
};

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
         m_sharedInter == o.m_sharedInter && m_vocab == o.m_vocab && m_kvPerTokenLayer == o.m_kvPerTokenLayer &&
         m_expertBytes == o.m_expertBytes && m_expertUpBytes == o.m_expertUpBytes && m_embedding == o.m_embedding &&
         m_lmHead == o.m_lmHead && m_weightBytes == o.m_weightBytes && m_kvBase == o.m_kvBase;
}

StepPlan StepPlanner::plan(const StepBatch& batch) const {
  return Builder(*this, batch).build();
}

}  // namespace scoville::workload
