#pragma once

#include <cstdint>
#include <string>

#include "tlm/Precision.h"
#include "tlm/config/Schema.h"

namespace scoville::workload {

enum class ModelFamily { kDense };

/// A transformer as read from workloads/models/*.yaml. Dense decoder-only with grouped-query
/// attention today; MoE and MLA arrive with the model library.
struct ModelConfig {
  std::string name;
  ModelFamily family = ModelFamily::kDense;
  int layers = 0;
  int hidden = 0;
  int qHeads = 0;
  int kvHeads = 0;
  int headDim = 0;
  int ffnIntermediate = 0;
  int vocab = 0;
  bool gatedFfn = true;         ///< SwiGLU-style gate + up projections
  bool tiedEmbeddings = false;  ///< LM head shares the embedding matrix
  tlm::Precision weightPrecision = tlm::Precision::kBf16;
  tlm::Precision computePrecision = tlm::Precision::kBf16;
  tlm::Precision kvPrecision = tlm::Precision::kBf16;

  /// Weight elements of one layer's attention (Q, K, V, O projections).
  uint64_t attentionParams() const;
  /// Weight elements of one layer's FFN.
  uint64_t ffnParams() const;
  /// Embedding plus (untied) LM head elements.
  uint64_t embeddingParams() const;
  /// All weight elements (norm weights included).
  uint64_t totalParams() const;
  /// Bytes of all weights at weightPrecision.
  double weightBytes() const;
  /// KV-cache bytes one token adds in one layer (K and V for every KV head).
  double kvBytesPerTokenPerLayer() const;

  static const config::Schema<ModelConfig>& schema();
};

}  // namespace scoville::workload
