#include "workloads/ModelConfig.h"

namespace scoville::workload {

using namespace scoville::config;

uint64_t ModelConfig::attentionParams() const {
  const auto h = static_cast<uint64_t>(hidden);
  const auto qDim = static_cast<uint64_t>(qHeads) * static_cast<uint64_t>(headDim);
  const auto kvDim = static_cast<uint64_t>(kvHeads) * static_cast<uint64_t>(headDim);
  return h * qDim + 2 * h * kvDim + qDim * h;
}

uint64_t ModelConfig::ffnParams() const {
  return static_cast<uint64_t>(gatedFfn ? 3 : 2) * static_cast<uint64_t>(hidden) *
         static_cast<uint64_t>(ffnIntermediate);
}

uint64_t ModelConfig::embeddingParams() const {
  return static_cast<uint64_t>(tiedEmbeddings ? 1 : 2) * static_cast<uint64_t>(vocab) * static_cast<uint64_t>(hidden);
}

uint64_t ModelConfig::totalParams() const {
  const uint64_t norms = 2 * static_cast<uint64_t>(hidden);  // two RMSNorm weight vectors per layer
  return static_cast<uint64_t>(layers) * (attentionParams() + ffnParams() + norms) + embeddingParams() +
         static_cast<uint64_t>(hidden);  // final norm
}

double ModelConfig::weightBytes() const {
  return static_cast<double>(totalParams()) * tlm::bitsPerElement(weightPrecision) / 8.0;
}

double ModelConfig::kvBytesPerTokenPerLayer() const {
  return 2.0 * kvHeads * headDim * tlm::bitsPerElement(kvPrecision) / 8.0;
}

const Schema<ModelConfig>& ModelConfig::schema() {
  static const Schema<ModelConfig> s =
      Schema<ModelConfig>("model", "Root of a model file (workloads/models/*.yaml): a decoder-only transformer.")
          .text("name", &ModelConfig::name, required(), "model name, used in reports")
          .choice("family", &ModelConfig::family, {{"dense", ModelFamily::kDense}}, required(), "architecture family")
          .integer("layers", &ModelConfig::layers, required(), between(1, 4096), "transformer layers")
          .integer("hidden", &ModelConfig::hidden, required(), between(1, 1 << 20), "model (residual) width")
          .integer("q_heads", &ModelConfig::qHeads, required(), between(1, 4096), "query heads")
          .integer("kv_heads", &ModelConfig::kvHeads, required(), between(1, 4096), "key/value heads (GQA groups)")
          .integer("head_dim", &ModelConfig::headDim, required(), between(1, 4096), "elements per attention head")
          .integer("ffn_intermediate", &ModelConfig::ffnIntermediate, required(), between(1, 1 << 22),
                   "FFN inner width")
          .integer("vocab", &ModelConfig::vocab, required(), between(1, 1 << 24), "vocabulary size")
          .flag("gated_ffn", &ModelConfig::gatedFfn, optional("true"), "gate + up projections (SwiGLU)")
          .flag("tied_embeddings", &ModelConfig::tiedEmbeddings, optional("false"),
                "LM head reuses the embedding matrix")
          .choice("weight_precision", &ModelConfig::weightPrecision, tlm::precisionNames(), required(),
                  "storage format of the weights")
          .choice("compute_precision", &ModelConfig::computePrecision, tlm::precisionNames(), required(),
                  "format the tensor cores compute in")
          .choice("kv_precision", &ModelConfig::kvPrecision, tlm::precisionNames(), required(),
                  "storage format of the KV cache")
          .rule("kv_heads", "q_heads must be a multiple of kv_heads",
                [](const ModelConfig& m) { return m.qHeads % m.kvHeads == 0; });
  return s;
}

}  // namespace scoville::workload
