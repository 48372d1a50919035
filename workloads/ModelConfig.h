#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/Schema.h"
#include "tlm/Precision.h"

namespace scoville::workload {

enum class ModelFamily { kDense, kMoe };
enum class AttentionKind {
  kGqa,  ///< grouped-query attention: q_heads query heads share kv_heads K/V heads of head_dim
  kMla,  ///< multi-head latent attention (DeepSeek-V3): a compressed KV latent plus a RoPE key
};

/// Storage of one class of weights: an element format plus any block scales it does not already
/// carry. fp4 (MXFP4) and int4 (group-32) include their scales (tlm::bitsPerElement); FP8 is
/// unscaled, so block-scaled FP8 (a 32-bit scale per 128 x 128 block) says scale_block 16384,
/// scale_bits 32.
struct WeightFormat {
  tlm::Precision precision = tlm::Precision::kBf16;
  int scaleBlock = 0;  ///< elements sharing one scale; 0 = no scales
  int scaleBits = 0;   ///< bits of one scale

  /// Storage bits per element, scales included.
  double bitsPerElement() const;
  static const config::Schema<WeightFormat>& schema();
};

/// A decoder-only transformer as read from workloads/models/*.yaml: dense or mixture-of-experts,
/// with GQA or MLA attention, optional sliding-window layers, and per-class weight formats.
struct ModelConfig {
  std::string name;
  ModelFamily family = ModelFamily::kDense;
  int layers = 0;
  int mtpLayers = 0;  ///< multi-token-prediction modules (speculative decoding only; not in layers)
  int hidden = 0;
  int vocab = 0;
  AttentionKind attention = AttentionKind::kGqa;
  int qHeads = 0;
  int kvHeads = 0;              ///< GQA: K/V heads (MLA models leave it 0: each head has its own K and V)
  int headDim = 0;              ///< GQA: elements per head
  int qLoraRank = 0;            ///< MLA: query down-projection rank (0: queries projected directly)
  int kvLoraRank = 0;           ///< MLA: compressed KV latent width (what the cache holds, with the RoPE key)
  int qkNopeHeadDim = 0;        ///< MLA: per-head query/key width without position encoding
  int qkRopeHeadDim = 0;        ///< MLA: per-head query/key width with RoPE (the key part is shared)
  int vHeadDim = 0;             ///< MLA: per-head value width
  bool attentionBias = false;   ///< biases on the Q, K, V and O projections (GQA)
  bool attentionSinks = false;  ///< one learned sink logit per query head per layer
  int slidingWindow = 0;        ///< tokens a sliding-window layer attends to (0: none)
  int slidingWindowEvery = 0;   ///< layers with index % this == 0 use the window (0: none)
  int ffnIntermediate = 0;      ///< inner width of dense FFN layers (all layers of a dense model)
  bool gatedFfn = true;         ///< SwiGLU-style gate + up projections
  bool tiedEmbeddings = false;  ///< LM head shares the embedding matrix
  // Mixture of experts (family moe).
  int routedExperts = 0;
  int sharedExperts = 0;
  int expertsPerToken = 0;
  int moeIntermediate = 0;                                 ///< inner width of one expert
  int denseFirstLayers = 0;                                ///< leading layers with a dense FFN instead of experts
  tlm::Precision weightPrecision = tlm::Precision::kBf16;  ///< every weight not in expertWeights
  int weightScaleBlock = 0;
  int weightScaleBits = 0;
  std::optional<WeightFormat> expertWeights;  ///< routed and shared experts; absent: as the rest
  tlm::Precision computePrecision = tlm::Precision::kBf16;
  tlm::Precision kvPrecision = tlm::Precision::kBf16;

  /// Format of the weights outside the experts.
  WeightFormat mainFormat() const { return WeightFormat{weightPrecision, weightScaleBlock, weightScaleBits}; }
  /// Format of the expert weights.
  WeightFormat expertFormat() const { return expertWeights ? *expertWeights : mainFormat(); }

  bool isMoeLayer(int layer) const { return family == ModelFamily::kMoe && layer >= denseFirstLayers; }
  /// The indices of the MoE layers, ascending (none for a dense model).
  std::vector<uint32_t> moeLayers() const {
    std::vector<uint32_t> out;
    for (int l = 0; l < layers; ++l) {
      if (isMoeLayer(l)) out.push_back(static_cast<uint32_t>(l));
    }
    return out;
  }
  bool isSlidingLayer(int layer) const {
    return slidingWindow > 0 && slidingWindowEvery > 0 && layer % slidingWindowEvery == 0;
  }
  /// Weight elements of one layer's attention (projections, biases, sinks, MLA norms).
  uint64_t attentionParams() const;
  /// Weight elements of one dense FFN.
  uint64_t ffnParams() const;
  /// Weight elements of one expert (gate, up, down).
  uint64_t expertParams() const;
  /// Weight elements of layer `layer`'s FFN: dense, or all experts plus the router.
  uint64_t layerFfnParams(int layer) const;
  /// Of those, the elements one token uses: dense, or its top-k and the shared experts plus the router.
  uint64_t activeLayerFfnParams(int layer) const;
  /// Embedding plus (untied) LM head elements.
  uint64_t embeddingParams() const;
  /// All weight elements (norm weights included).
  uint64_t totalParams() const;
  /// Weight elements one token uses: its embedding row, every layer's attention, its top-k and
  /// shared experts (or dense FFN) and router, the norms and the whole LM head.
  uint64_t activeParams() const;
  /// Bytes of all weights in their formats, scales included.
  double weightBytes() const;
  /// KV-cache elements one token adds in one layer: GQA K and V of every KV head; MLA the latent
  /// plus the shared RoPE key.
  uint64_t kvElementsPerTokenPerLayer() const;
  /// KV-cache bytes one token adds in one layer.
  double kvBytesPerTokenPerLayer() const;

  static const config::Schema<ModelConfig>& schema();
};

}  // namespace scoville::workload
