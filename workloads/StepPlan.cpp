#include "workloads/StepPlan.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "config/ConfigError.h"
#include "config/Units.h"
#include "workloads/StepPlanAttention.h"
#include "workloads/StepPlanSizes.h"

namespace scoville::workload {

using config::ConfigError;
using config::ErrorKind;

namespace {

using planning::aligned;
using planning::bytesOf;
using planning::ceilDiv;
using planning::kNoExpert;
using planning::kTileColumnAlign;
using planning::roundUp;
using planning::u;

// Element operations per element of the vector work (first-order operation counts).
constexpr double kNormOps = 5.0;        // residual add, square, reduce, scale, multiply (RMSNorm)
constexpr double kSoftmaxOps = 5.0;     // max, subtract, exp, sum, divide
constexpr double kSoftmaxExps = 1.0;    // of them, transcendental: the exp (special-function lanes)
constexpr double kActivationOps = 4.0;  // SiLU (about 3) and the gate multiply
constexpr double kSamplingOps = 1.0;    // compare per logit (greedy argmax)
constexpr double kRouterOps = 2.0;      // per router logit: softmax share and top-k compare
constexpr double kCombineOps = 2.0;     // per token, expert and element: scale and accumulate

}  // namespace

/// Builds one step's plan: the ops of every layer in order.
class StepPlanner::Builder {
 public:
  Builder(const StepPlanner& planner, const StepBatch& batch)
      : p(planner), m(planner.m_model), b(batch), tile(planner.m_chip.sram.bufferBytes()) {
    for (const StepSequence& s : b.sequences) {
      tokens += s.tokens;
      if (s.decodes()) {
        ++decodes;
        decodeQueries += s.tokens;
      } else {
        prefillTokens += s.tokens;
      }
      sampling += s.sampled();
    }
    weightPhase = prefillTokens > decodeQueries ? tlm::LlmPhase::kPrefill : tlm::LlmPhase::kDecode;
    activationBytes = bytesOf(tokens * u(m.hidden), m.computePrecision);
  }

  StepPlan build() {
    plan.shard = p.m_shard;
    plan.computePrecision = m.computePrecision;
    if (p.m_moeKernel) plan.expertEfficiency = p.m_moeKernel->efficiency;
    plan.batch = b.sequences.size();
    plan.tokens = tokens;
    plan.weightBytes = p.weightBytes();
    // With experts across replicas an idle chip still serves the others' tokens (and all-to-alls).
    if (tokens == 0 && b.dispatchBytes == nullptr) return finish();
    if (p.m_firstStage && tokens > 0) embedding();
    // A draft head first projects each token's [embedding; target hidden state] to its width.
    if (p.m_inputProjectionK > 0 && tokens > 0) {
      weightGemm("input_proj", 0, p.m_inputProjection, p.m_inputProjectionK, u(m.hidden), tokens, kNormOps,
                 m.mainFormat().bitsPerElement());
    }
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
      plan.kvBytes += static_cast<double>(p.kvBytesFor(s.context + s.tokens));
    }
    for (const PlannedOp& op : plan.ops) {
      plan.collectiveBytes += static_cast<double>(op.after.bytes);
      plan.bytesMoved += static_cast<double>(op.bytes());
      plan.remoteKvBytes += static_cast<double>(op.bytesOn(hw::KvTier::kRemoteHbm));
      plan.hostKvBytes += static_cast<double>(op.bytesOn(hw::KvTier::kHost));
      plan.flops += op.flops();
      plan.vectorOps += op.vectorOps;
      plan.convertOps += op.convertOps;
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

  void weightGemm(const char* name, uint32_t layer, uint64_t address, uint64_t k, uint64_t n, uint64_t rows,
                  double opsPerOutput, double bits, uint64_t count = 1) {
    const std::size_t first = plan.ops.size();
    appendWeightGemm(plan.ops, name, layer, weightPhase, address, k, n, rows, opsPerOutput, bits, count, tile);
    if (mixedInput(bits)) {
      for (std::size_t i = first; i < plan.ops.size(); ++i) plan.ops[i].mixedInput = true;
    }
  }

  /// Weights of `bits` per element are converted to the compute precision in the GEMM's main loop.
  bool mixedInput(double bits) const { return bits < tlm::bitsPerElement(m.computePrecision); }

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

  /// A decode attention GEMM and which of its dimensions runs over the cached context: N for the
  /// scores (q K^T), K for the values (p V). Each KV tile computes that dimension's share.
  struct ContextGemm {
    tlm::GemmShape shape;
    bool contextInK = false;
  };

  /// Reads the step's cached KV of layer l in buffer-sized tiles, appends the new tokens' KV, and
  /// runs `decodeGemms` (the decode attention, its context dimension split over the tiles in
  /// proportion to their bytes: a tile scores and weighs the tokens it holds) and `tail`
  /// (per-prefill-sequence attention, after the last tile). The reads are one stream per
  /// tier, local HBM first, then remote HBM, then host; each tier's appends continue its stream.
  void attentionTiles(uint32_t l, uint32_t local, const std::vector<ContextGemm>& decodeGemms, double decodeVector,
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
    // A draft's layers have regions of their own after the target's (DraftLayout::kvRegionOffset).
    const uint64_t region = p.m_draftLayout        ? p.m_kvRegionOffset + local
                            : b.kvLayerRegions > 0 ? local % b.kvLayerRegions
                                                   : local;
    streams[hw::kvTierIndex(hw::KvTier::kLocalHbm)] =
        Stream{p.m_kvBase + region * b.kvLayerStride, b.kvLayerStride, b.sequences.front().kvAddress};
    if (b.kv != nullptr) {
      for (const hw::KvTier tier : {hw::KvTier::kRemoteHbm, hw::KvTier::kHost}) {
        const uint64_t stride = b.kv->capacityBlocks(tier) * b.kv->layerBlockBytes();
        streams[hw::kvTierIndex(tier)] = Stream{region * stride, stride, 0};
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
      for (const ContextGemm& g : decodeGemms) {
        tlm::GemmShape part = g.shape;
        uint64_t& context = g.contextInK ? part.k : part.n;
        context = shardOf(context, static_cast<int>(tiles), static_cast<int>(t));
        if (context > 0) op.gemms.push_back(part);
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
      // Every vector operation of attention is the softmax's.
      op.specialOps = op.vectorOps * (kSoftmaxExps / kSoftmaxOps);
    }
  }

  /// GQA attention as the attention kernel lays it out (layOutKernelAttention,
  /// StepPlanAttention.h): its padded GEMMs in the layer's attention tiles, every tile carrying the
  /// kernel's MMA kind and grid, and with flash-decoding the combine kernel after them.
  void gqaKernelAttention(uint32_t l, uint32_t local, const AttentionKernelConfig& k) {
    const uint64_t headDim = u(m.headDim);
    const uint64_t kvHeads = p.m_kvHeads;
    const KernelAttentionLayout layout =
        layOutKernelAttention(k, b.sequences, kvHeads, p.m_qHeads / kvHeads, headDim, window(l), m.attentionSinks,
                              p.m_chip.tensorCore.computeUnits());
    std::vector<ContextGemm> decode;
    for (const auto& [rows, span] : layout.decodeSpans) {
      if (span == 0) continue;
      decode.push_back({tlm::GemmShape{rows, span, headDim, kvHeads}, false});  // scores = q K^T
      decode.push_back({tlm::GemmShape{rows, headDim, span, kvHeads}, true});   // out = p V
    }
    const std::size_t first = plan.ops.size();
    attentionTiles(l, local, decode, kSoftmaxOps * layout.decodeScores, layout.prefillGemms,
                   kSoftmaxOps * layout.prefillScores);
    const std::shared_ptr<const tlm::WorkGrid> grid = layout.grid;
    for (std::size_t i = first; i < plan.ops.size(); ++i) {
      plan.ops[i].warpMma = k.mma == MmaKind::kWarp;
      plan.ops[i].grid = grid;
    }
    if (layout.splits > 1) {
      // The combine kernel: per query row and head, each split's partial output rescaled by the
      // exp of its log-sum-exp's difference and summed (the partials stay in L2).
      PlannedOp& combine = push("attention_combine", l, tlm::LlmPhase::kDecode);
      const double partials = layout.decodeRows * static_cast<double>(layout.splits);
      combine.vectorOps = partials * (2.0 * static_cast<double>(headDim) + kSoftmaxOps);
      combine.specialOps = partials;
    }
  }

  void gqaAttention(uint32_t l, uint32_t local) {
    if (p.m_attentionKernel) {
      gqaKernelAttention(l, local, *p.m_attentionKernel);
      return;
    }
    const uint64_t headDim = u(m.headDim);
    const uint64_t kvHeads = p.m_kvHeads;
    const uint64_t group = p.m_qHeads / kvHeads;
    const uint64_t w = window(l);
    const double sinks = m.attentionSinks ? 1.0 : 0.0;  // one more logit per query and head
    // Decode (flash-decoding): each token's `group` query heads score its context; the GEMMs of
    // all decoding sequences with the same queries (1, or 1 + drafts verified) have the same M
    // and are issued as one with their spans summed.
    DecodeSpans decodeSpans;
    uint64_t decodeContext = 0;
    std::vector<tlm::GemmShape> tail;
    double tailVector = 0.0;
    for (const StepSequence& s : b.sequences) {
      const uint64_t seen = attendedTokens(s.context, s.tokens, w);
      if (s.decodes()) {
        decodeSpans.add(s.tokens, (seen + s.tokens - 1) / s.tokens);
        decodeContext += seen;
        continue;
      }
      // Prefill (flash-attention): the chunk's queries as M, each seeing its causal span.
      const uint64_t span = (seen + s.tokens - 1) / s.tokens;
      tail.push_back(tlm::GemmShape{group * s.tokens, span, headDim, kvHeads});  // scores = q K^T
      tail.push_back(tlm::GemmShape{group * s.tokens, headDim, span, kvHeads});  // out = p V
      tailVector += kSoftmaxOps * static_cast<double>(group * kvHeads) * (static_cast<double>(seen) + sinks * s.tokens);
    }
    std::vector<ContextGemm> decode;
    double decodeVector = 0.0;
    for (const auto& [queries, span] : decodeSpans) {
      if (span == 0) continue;
      decode.push_back({tlm::GemmShape{group * queries, span, headDim, kvHeads}, false});  // scores = q K^T
      decode.push_back({tlm::GemmShape{group * queries, headDim, span, kvHeads}, true});   // out = p V
    }
    if (decodeContext > 0) {
      decodeVector = kSoftmaxOps * static_cast<double>(group * kvHeads) *
                     (static_cast<double>(decodeContext) + sinks * static_cast<double>(decodeQueries));
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
    DecodeSpans decodeSpans;
    std::vector<tlm::GemmShape> tail;
    double tailVector = 0.0;
    for (const StepSequence& s : b.sequences) {
      const uint64_t seen = attendedTokens(s.context, s.tokens, window(l));
      if (s.decodes()) {
        decodeSpans.add(s.tokens, (seen + s.tokens - 1) / s.tokens);
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
    if (decodes > 0) up.gemms.push_back(tlm::GemmShape{decodeQueries, latent, nope, heads});  // q_nope W_UK
    if (prefillContext > 0) up.gemms.push_back(tlm::GemmShape{prefillContext, heads * (nope + v), latent, 1});
    std::vector<ContextGemm> decode;
    double decodeVector = 0.0;
    for (const auto& [queries, span] : decodeSpans) {
      if (span == 0) continue;
      // Multi-query attention over the latent: every head scores the shared latent + RoPE key.
      decode.push_back({tlm::GemmShape{heads * queries, span, latent + rope, 1}, false});
      decode.push_back({tlm::GemmShape{heads * queries, latent, span, 1}, true});
    }
    if (decodeContext > 0) decodeVector = kSoftmaxOps * static_cast<double>(heads * decodeContext);
    attentionTiles(l, local, decode, decodeVector, tail, tailVector);
    if (decodes > 0) {
      // Absorbed value projection (latent -> per-head V), weights still in the staging buffer.
      push("v_absorb", l, tlm::LlmPhase::kDecode).gemms.push_back(tlm::GemmShape{decodeQueries, v, latent, heads});
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
    const uint64_t inter = p.m_expertInter;  // both as stored: padded to the kernel's tiles
    const uint64_t expertHidden = p.m_expertHidden;
    const uint64_t upWidth = (m.gatedFfn ? 2 : 1) * inter;
    const double activation = m.gatedFfn ? kActivationOps / 2 : kActivationOps;
    // With a grouped-GEMM kernel each expert's tokens are padded to its tiles' rows, the tile
    // chosen from the step's mean tokens per routed expert (MoeKernel.h).
    uint64_t tileRows = 1;
    if (p.m_moeKernel) {
      uint64_t gates = 0;
      for (const uint64_t n : routed) gates += n;
      tileRows = p.m_moeKernel->tileRows(gates, routed.size());
    }
    // Weights stored narrower than the compute are converted on the vector lanes by every tile of
    // rows that uses them (MoeKernel.h convert_ops).
    const double convert = p.m_moeKernel && mixedInput(eBits) ? p.m_moeKernel->convertOps : 0.0;
    const auto conversions = [&](PlannedOp& o) {
      for (const tlm::GemmShape& g : o.gemms) {
        const double ops = convert * static_cast<double>(g.k * g.n * g.count * ceilDiv(g.m, tileRows));
        o.vectorOps += ops;
        o.convertOps += ops;
      }
    };
    std::map<uint64_t, uint64_t> byCount;  // rows -> experts in the current tile
    uint64_t tileBytes = 0;
    uint64_t expertTokens = 0;
    PlannedOp* op = nullptr;
    const bool warpMma = p.m_moeKernel && p.m_moeKernel->mma == MmaKind::kWarp;
    const auto flush = [&] {
      if (op == nullptr) return;
      op->warpMma = warpMma;
      for (const auto& [n, count] : byCount) op->gemms.push_back(tlm::GemmShape{n, upWidth, expertHidden, count});
      for (const auto& [n, count] : byCount) op->gemms.push_back(tlm::GemmShape{n, expertHidden, inter, count});
      if (convert > 0.0) conversions(*op);
      byCount.clear();
      op = nullptr;
      tileBytes = 0;
    };
    for (std::size_t e = 0; e < routed.size(); ++e) {
      if (routed[e] == 0 || w.experts[e] == kNoExpert) continue;
      expertTokens += routed[e];
      const uint64_t n = roundUp(routed[e], tileRows);  // rows computed
      if (static_cast<double>(p.m_expertBytes) > tile) {
        // An expert larger than a buffer streams in column tiles of its own.
        flush();
        const std::size_t first = plan.ops.size();
        weightGemm("experts", l, w.experts[e], expertHidden, upWidth, n, activation, eBits);
        weightGemm("experts", l, w.experts[e] + aligned(p.m_expertUpBytes), inter, expertHidden, n, 0.0, eBits);
        for (std::size_t i = first; i < plan.ops.size(); ++i) {
          plan.ops[i].warpMma = warpMma;
          if (convert > 0.0) conversions(plan.ops[i]);
        }
        continue;
      }
      if (op != nullptr && static_cast<double>(tileBytes + p.m_expertBytes) > tile) flush();
      if (op == nullptr) {
        op = &push("experts", l, weightPhase);
        op->mixedInput = mixedInput(eBits);
      }
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
  uint64_t decodes = 0;        ///< decoding sequences
  uint64_t decodeQueries = 0;  ///< their tokens: one each, or 1 + drafts verified
  uint64_t prefillTokens = 0;
  uint64_t sampling = 0;
  uint64_t activationBytes = 0;
  tlm::LlmPhase weightPhase = tlm::LlmPhase::kDecode;
  std::map<uint64_t, KvTokens> kvTokensByWindow;  ///< kvTokens() by attention window (0: none)
};

void appendWeightGemm(std::vector<PlannedOp>& ops, const char* name, uint32_t layer, tlm::LlmPhase phase,
                      uint64_t address, uint64_t k, uint64_t n, uint64_t rows, double opsPerOutput, double bits,
                      uint64_t count, double tileBytes) {
  if (rows == 0) return;  // nothing to multiply: the weights stay in HBM
  const double columnBytes = static_cast<double>(k * count) * bits / 8.0;
  uint64_t columns = static_cast<uint64_t>(tileBytes / columnBytes) / kTileColumnAlign * kTileColumnAlign;
  columns = std::max<uint64_t>(columns, kTileColumnAlign);
  for (uint64_t first = 0; first < n; first += columns) {
    const uint64_t last = std::min(n, first + columns);
    const uint64_t begin = bytesOf(k * count * first, bits);
    const uint64_t end = bytesOf(k * count * last, bits);
    PlannedOp& op = ops.emplace_back();
    op.name = name;
    op.layer = layer;
    op.phase = phase;
    op.block = blockOf(op.name);
    op.accesses.push_back(MemoryAccess{tlm::OpKind::kRead, address + begin, end - begin});
    op.gemms.push_back(tlm::GemmShape{rows, last - first, k, count});
    op.vectorOps = opsPerOutput * static_cast<double>(rows * (last - first) * count);
  }
}

StepPlan StepPlanner::plan(const StepBatch& batch) const {
  return Builder(*this, batch).build();
}

}  // namespace scoville::workload
