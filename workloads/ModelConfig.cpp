#include "workloads/ModelConfig.h"

#include <fmt/format.h>

namespace scoville::workload {

using namespace scoville::config;

namespace {

uint64_t u(int v) {
  return static_cast<uint64_t>(v);
}

}  // namespace

double WeightFormat::bitsPerElement() const {
  const double scales = scaleBlock > 0 ? static_cast<double>(scaleBits) / scaleBlock : 0.0;
  // fp4 and int4 carry a block scale of their own (tlm::bitsPerElement); scales given replace it.
  const bool ownScale = precision == tlm::Precision::kFp4 || precision == tlm::Precision::kInt4;
  if (ownScale && scaleBlock > 0) return 4.0 + scales;
  return tlm::bitsPerElement(precision) + scales;
}

const Schema<WeightFormat>& WeightFormat::schema() {
  static const Schema<WeightFormat> s =
      Schema<WeightFormat>("weight_format", "Storage of a class of weights: element format and block scales.")
          .choice("precision", &WeightFormat::precision, tlm::precisionNames(), required(), "element format")
          .integer("scale_block", &WeightFormat::scaleBlock, optional("0"), between(0, 1 << 20),
                   "elements sharing one extra scale (FP8 in 128x128 blocks: 16384); 0 = none. fp4 and int4 "
                   "include a block scale of their own (fp4: 8 bits per 32 elements, int4: 16 bits per 32), which "
                   "one given here replaces (GPTQ int4 with a BF16 scale per 128: 128 and 16)")
          .integer("scale_bits", &WeightFormat::scaleBits, optional("0"), between(0, 64), "bits of one scale")
          .rule("scale_bits", "scale_block and scale_bits are both zero or both positive",
                [](const WeightFormat& f) { return (f.scaleBlock > 0) == (f.scaleBits > 0); });
  return s;
}

uint64_t ModelConfig::attentionParams() const {
  const uint64_t h = u(hidden);
  if (attention == AttentionKind::kMla) {
    const uint64_t qkHead = u(qkNopeHeadDim) + u(qkRopeHeadDim);
    // Queries: down-projection, its norm and up-projection (or one direct projection).
    const uint64_t q =
        qLoraRank > 0 ? h * u(qLoraRank) + u(qLoraRank) + u(qLoraRank) * u(qHeads) * qkHead : h * u(qHeads) * qkHead;
    // KV: down-projection to the latent and the shared RoPE key, its norm, up-projection to
    // per-head keys (no-RoPE part) and values.
    const uint64_t kv = h * (u(kvLoraRank) + u(qkRopeHeadDim)) + u(kvLoraRank) +
                        u(kvLoraRank) * u(qHeads) * (u(qkNopeHeadDim) + u(vHeadDim));
    const uint64_t o = u(qHeads) * u(vHeadDim) * h;
    return q + kv + o + (attentionSinks ? u(qHeads) : 0);
  }
  const uint64_t qDim = u(qHeads) * u(headDim);
  const uint64_t kvDim = u(kvHeads) * u(headDim);
  const uint64_t bias = attentionBias ? qDim + 2 * kvDim + h : 0;
  return h * qDim + 2 * h * kvDim + qDim * h + bias + (attentionSinks ? u(qHeads) : 0);
}

uint64_t ModelConfig::ffnParams() const {
  return u(gatedFfn ? 3 : 2) * u(hidden) * u(ffnIntermediate);
}

uint64_t ModelConfig::expertParams() const {
  return u(gatedFfn ? 3 : 2) * u(hidden) * u(moeIntermediate);
}

uint64_t ModelConfig::layerFfnParams(int layer) const {
  if (!isMoeLayer(layer)) return ffnParams();
  const uint64_t router = u(hidden) * u(routedExperts);
  return (u(routedExperts) + u(sharedExperts)) * expertParams() + router;
}

uint64_t ModelConfig::activeLayerFfnParams(int layer) const {
  if (!isMoeLayer(layer)) return ffnParams();
  const uint64_t router = u(hidden) * u(routedExperts);
  return (u(expertsPerToken) + u(sharedExperts)) * expertParams() + router;
}

uint64_t ModelConfig::embeddingParams() const {
  return u(tiedEmbeddings ? 1 : 2) * u(vocab) * u(hidden);
}

uint64_t ModelConfig::totalParams() const {
  const uint64_t norms = 2 * u(hidden);            // two RMSNorm weight vectors per layer
  uint64_t total = embeddingParams() + u(hidden);  // final norm
  for (int l = 0; l < layers; ++l) total += attentionParams() + layerFfnParams(l) + norms;
  return total;
}

uint64_t ModelConfig::activeParams() const {
  const uint64_t norms = 2 * u(hidden);
  // The embedding lookup reads one row per token; the LM head reads its whole matrix.
  uint64_t active = u(vocab) * u(hidden) + (tiedEmbeddings ? 0 : u(hidden)) + u(hidden);
  for (int l = 0; l < layers; ++l) active += attentionParams() + activeLayerFfnParams(l) + norms;
  return active;
}

double ModelConfig::weightBytes() const {
  uint64_t experts = 0;
  for (int l = 0; l < layers; ++l) {
    if (isMoeLayer(l)) experts += (u(routedExperts) + u(sharedExperts)) * expertParams();
  }
  const uint64_t rest = totalParams() - experts;
  return (static_cast<double>(rest) * mainFormat().bitsPerElement() +
          static_cast<double>(experts) * expertFormat().bitsPerElement()) /
         8.0;
}

uint64_t ModelConfig::kvElementsPerTokenPerLayer() const {
  if (attention == AttentionKind::kMla) return u(kvLoraRank) + u(qkRopeHeadDim);
  return 2 * u(kvHeads) * u(headDim);
}

double ModelConfig::kvBytesPerTokenPerLayer() const {
  return static_cast<double>(kvElementsPerTokenPerLayer()) * tlm::bitsPerElement(kvPrecision) / 8.0;
}

namespace {

/// Cross-key checks naming the key at fault.
void checkModel(const ModelConfig& m, const Node& node) {
  const auto reject = [&](const char* key, const std::string& message) {
    const Node at = node.at(key);
    at.fail(ErrorKind::kInvalidConfig, fmt::format("'{}': {}", at.path(), message));
  };
  if (m.attention == AttentionKind::kGqa) {
    if (m.kvHeads <= 0 || m.headDim <= 0) reject("attention", "gqa attention needs kv_heads and head_dim");
    if (m.qHeads % m.kvHeads != 0) reject("kv_heads", "q_heads must be a multiple of kv_heads");
  } else {
    if (m.kvLoraRank <= 0 || m.qkNopeHeadDim <= 0 || m.qkRopeHeadDim <= 0 || m.vHeadDim <= 0) {
      reject("attention", "mla attention needs kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
    }
    if (m.attentionBias) reject("attention_bias", "is a gqa option");
  }
  if ((m.slidingWindow > 0) != (m.slidingWindowEvery > 0)) {
    reject("sliding_window", "sliding_window and sliding_window_every are both zero or both positive");
  }
  if (m.family == ModelFamily::kMoe) {
    if (m.routedExperts <= 0 || m.expertsPerToken <= 0 || m.moeIntermediate <= 0) {
      reject("family", "a moe model needs routed_experts, experts_per_token and moe_intermediate");
    }
    if (m.expertsPerToken > m.routedExperts) reject("experts_per_token", "exceeds routed_experts");
    if (m.denseFirstLayers >= m.layers) reject("dense_first_layers", "leaves no expert layer");
    if (m.denseFirstLayers > 0 && m.ffnIntermediate <= 0) {
      reject("ffn_intermediate", "dense layers (dense_first_layers) need ffn_intermediate");
    }
  } else {
    if (m.ffnIntermediate <= 0) reject("ffn_intermediate", "a dense model needs ffn_intermediate");
    if (m.routedExperts > 0 || m.sharedExperts > 0 || m.expertsPerToken > 0 || m.moeIntermediate > 0 ||
        m.denseFirstLayers > 0 || m.expertWeights) {
      reject("family", "expert keys are only read for family moe");
    }
  }
}

}  // namespace

const Schema<ModelConfig>& ModelConfig::schema() {
  static const Schema<ModelConfig> s =
      Schema<ModelConfig>("model",
                          "Root of a model file (workloads/models/*.yaml): a decoder-only transformer, dense or "
                          "mixture-of-experts, with GQA or MLA attention.")
          .text("name", &ModelConfig::name, required(), "model name, used in reports")
          .choice("family", &ModelConfig::family, {{"dense", ModelFamily::kDense}, {"moe", ModelFamily::kMoe}},
                  required(), "dense: every layer has a dense FFN; moe: experts after dense_first_layers")
          .integer("layers", &ModelConfig::layers, required(), between(1, 4096), "transformer layers")
          .integer("mtp_layers", &ModelConfig::mtpLayers, optional("0"), between(0, 16),
                   "multi-token-prediction modules shipped with the weights (DeepSeek-V3/R1: 1), used only by "
                   "speculative decoding (scenario.speculative.method mtp); not counted in layers or the weights")
          .integer("hidden", &ModelConfig::hidden, required(), between(1, 1 << 20), "model (residual) width")
          .integer("vocab", &ModelConfig::vocab, required(), between(1, 1 << 24), "vocabulary size")
          .choice("attention", &ModelConfig::attention, {{"gqa", AttentionKind::kGqa}, {"mla", AttentionKind::kMla}},
                  optional("gqa"), "gqa (grouped-query) or mla (multi-head latent attention)")
          .integer("q_heads", &ModelConfig::qHeads, required(), between(1, 4096), "query heads")
          .integer("kv_heads", &ModelConfig::kvHeads, optional("0"), between(0, 4096),
                   "gqa: key/value heads (GQA groups)")
          .integer("head_dim", &ModelConfig::headDim, optional("0"), between(0, 4096), "gqa: elements per head")
          .integer("q_lora_rank", &ModelConfig::qLoraRank, optional("0"), between(0, 1 << 20),
                   "mla: query down-projection rank (0: direct query projection)")
          .integer("kv_lora_rank", &ModelConfig::kvLoraRank, optional("0"), between(0, 1 << 20),
                   "mla: compressed KV latent width")
          .integer("qk_nope_head_dim", &ModelConfig::qkNopeHeadDim, optional("0"), between(0, 4096),
                   "mla: per-head query/key width without RoPE")
          .integer("qk_rope_head_dim", &ModelConfig::qkRopeHeadDim, optional("0"), between(0, 4096),
                   "mla: per-head query/key width with RoPE (the key part is shared by all heads)")
          .integer("v_head_dim", &ModelConfig::vHeadDim, optional("0"), between(0, 4096), "mla: per-head value width")
          .flag("attention_bias", &ModelConfig::attentionBias, optional("false"), "gqa: biases on Q, K, V and O")
          .flag("attention_sinks", &ModelConfig::attentionSinks, optional("false"),
                "a learned sink logit per query head (gpt-oss)")
          .integer("sliding_window", &ModelConfig::slidingWindow, optional("0"), between(0, 1 << 24),
                   "tokens a sliding-window layer attends to (0: all layers attend to the full context)")
          .integer("sliding_window_every", &ModelConfig::slidingWindowEvery, optional("0"), between(0, 4096),
                   "layers whose index is a multiple of this use the window (2: even layers, as gpt-oss)")
          .integer("ffn_intermediate", &ModelConfig::ffnIntermediate, optional("0"), between(0, 1 << 22),
                   "inner width of the dense FFN layers")
          .flag("gated_ffn", &ModelConfig::gatedFfn, optional("true"), "gate + up projections (SwiGLU)")
          .flag("tied_embeddings", &ModelConfig::tiedEmbeddings, optional("false"),
                "LM head reuses the embedding matrix")
          .integer("routed_experts", &ModelConfig::routedExperts, optional("0"), between(0, 1 << 16),
                   "moe: routed experts per layer")
          .integer("shared_experts", &ModelConfig::sharedExperts, optional("0"), between(0, 64),
                   "moe: experts every token uses")
          .integer("experts_per_token", &ModelConfig::expertsPerToken, optional("0"), between(0, 1024),
                   "moe: routed experts each token is sent to (top-k)")
          .integer("moe_intermediate", &ModelConfig::moeIntermediate, optional("0"), between(0, 1 << 22),
                   "moe: inner width of one expert")
          .integer("dense_first_layers", &ModelConfig::denseFirstLayers, optional("0"), between(0, 4096),
                   "moe: leading layers with a dense FFN (ffn_intermediate wide)")
          .choice("weight_precision", &ModelConfig::weightPrecision, tlm::precisionNames(), required(),
                  "storage format of the weights outside expert_weights")
          .integer("weight_scale_block", &ModelConfig::weightScaleBlock, optional("0"), between(0, 1 << 20),
                   "elements sharing one scale in those weights (0: no scales)")
          .integer("weight_scale_bits", &ModelConfig::weightScaleBits, optional("0"), between(0, 64),
                   "bits of one such scale")
          .optionalChild("expert_weights", &ModelConfig::expertWeights, WeightFormat::schema(),
                         "moe: storage of the expert weights (absent: as the other weights)")
          .choice("compute_precision", &ModelConfig::computePrecision, tlm::precisionNames(), required(),
                  "format the tensor cores compute in")
          .choice("kv_precision", &ModelConfig::kvPrecision, tlm::precisionNames(), required(),
                  "storage format of the KV cache")
          .rule("weight_scale_bits", "weight_scale_block and weight_scale_bits are both zero or both positive",
                [](const ModelConfig& m) { return (m.weightScaleBlock > 0) == (m.weightScaleBits > 0); })
          .check(
              "gqa needs kv_heads and head_dim dividing q_heads, mla its ranks and head widths; moe needs its "
              "expert keys and dense models none",
              checkModel);
  return s;
}

}  // namespace scoville::workload
