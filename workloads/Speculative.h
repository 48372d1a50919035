#pragma once
// Speculative decoding (pure C++, no simulated time): the scenario's `speculative` block, the
// acceptance model that decides how many of a sequence's draft tokens its verification accepts,
// the draft's model (a DeepSeek MTP module, an EAGLE head or a separate draft model) and the
// draft passes a step runs after its verification.
//
// A decoding sequence feeds its last sampled token plus k draft tokens (a verification of k + 1
// positions, causal over them); the target samples every position and accepts the longest run
// of drafts that match, a of them, plus its own token after them: a + 1 tokens per step (the
// chain verification of TensorRT-LLM's MTP and EAGLE paths and of vLLM). The KV of the k - a
// rejected positions is rolled back. Then the draft proposes the next step's k tokens: its first
// pass feeds the a + 1 tokens just accepted (a prompt chunk feeds the whole chunk, so that the
// draft's own KV covers the prompt), each further pass one token, each ending in a draft LM head
// over the sequences that will verify again. Every pass runs on the chips as the target's layers
// do (StepPlanner with a DraftLayout), after the verification in the same step.
//
// Acceptance is drawn when the step is composed, from a stream of its own per replica: each
// draft position i (1-based) is accepted with probability p_i given all before it were
// (`per_position`); a `mean_length` L stands for one rate p for every position with
// 1 + p + ... + p^k = L; a `trace` replays accepted counts in order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/Schema.h"
#include "workloads/ModelConfig.h"
#include "workloads/Random.h"

namespace scoville::workload {

struct StepBatch;

enum class SpeculativeMethod {
  kMtp,         ///< the model's multi-token-prediction module (DeepSeek-V3/R1: mtp_layers 1), reused per token
  kEagle,       ///< an EAGLE head: one decoder layer of the target's width
  kDraftModel,  ///< a separate, smaller model placed on the same chips
};
const char* speculativeMethodName(SpeculativeMethod method);

enum class AcceptanceImpl { kPerPosition, kMeanLength, kTrace };

/// `speculative.acceptance`: how many draft tokens a verification accepts.
struct AcceptanceConfig {
  AcceptanceImpl impl = AcceptanceImpl::kMeanLength;
  std::vector<double> rates;  ///< per_position: P(draft i accepted | drafts 1..i-1 accepted), one per draft token
  double meanLength = 1.0;    ///< mean_length: accepted drafts + 1 per verification, in [1, draft_tokens + 1]
  /// trace: a CSV with header `accepted` and one accepted count (0..draft_tokens) per verification,
  /// replayed in order and from the start again (resolved relative to the scenario file).
  std::string file;

  static const config::Schema<AcceptanceConfig>& schema();
};

/// `speculative.head`: an EAGLE head's shape (absent keys: the target's).
struct DraftHeadConfig {
  int ffnIntermediate = 0;  ///< its FFN's inner width (0: the target's ffn_intermediate)
  int vocab = 0;            ///< its own LM head's vocabulary (EAGLE-3's reduced one); 0: shares the target's

  static const config::Schema<DraftHeadConfig>& schema();
};

/// The scenario's `speculative` block.
struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::kMtp;
  int draftTokens = 0;  ///< k: draft tokens verified per step (0: plain decoding)
  AcceptanceConfig acceptance;
  std::string draftModel;  ///< draft_model: a model name in workloads/models/ or a file
  DraftHeadConfig head;    ///< eagle

  static const config::Schema<SpeculativeConfig>& schema();
};

/// Draws accepted counts (deterministic for a seed; see the top of this file).
class AcceptanceModel {
 public:
  /// `trace`: the accepted counts a trace impl replays (read by the loader); ignored otherwise.
  /// Throws std::invalid_argument for a config the schema would refuse (rates outside [0, 1],
  /// fewer rates than draft tokens, a mean length outside [1, k + 1], an empty trace).
  AcceptanceModel(const AcceptanceConfig& config, int draftTokens, uint64_t seed, std::vector<int> trace = {});

  /// Accepted drafts of a verification of `drafts` tokens (at most the configured k): 0..drafts.
  int draw(int drafts);
  /// P(draft i accepted | drafts before it accepted), i 1-based, for a mean_length or per_position model.
  double rate(int position) const;
  /// Mean acceptance length (accepted + 1) of a verification of the configured k drafts (a trace:
  /// over one pass of it).
  double meanLength() const;

  /// The constant per-position rate p with 1 + p + ... + p^k = length (bisection to 1e-12).
  static double rateForMeanLength(double length, int k);

 private:
  AcceptanceConfig m_config;
  int m_k = 0;
  double m_rate = 0.0;  // mean_length
  std::vector<int> m_trace;
  std::size_t m_next = 0;
  Rng m_rng;
};

/// Reads an acceptance trace (header `accepted`, one count per row, each 0..draftTokens).
/// Throws config::ConfigError naming the file and row.
std::vector<int> readAcceptanceTrace(const std::string& path, int draftTokens);

/// Where the draft sits beside the target on a chip (StepPlanner's draft constructor).
struct DraftLayout {
  uint64_t weightBase = 0;       ///< first HBM address of its weights: the target's kvBase()
  uint32_t kvRegionOffset = 0;   ///< its layer i's KV is in the KV space's region kvRegionOffset + i
  bool sharesEmbedding = false;  ///< reads the target's embedding rows instead of holding its own
  bool sharesLmHead = false;     ///< runs the target's LM head instead of holding its own
  uint64_t embedding = 0;        ///< the target's embedding address (sharesEmbedding)
  uint64_t lmHead = 0;           ///< the target's LM head address (sharesLmHead)
  uint64_t inputProjection = 0;  ///< K of the projection [embedding; hidden] (2 x hidden) -> hidden; 0: none
};

/// The draft's model: MTP and EAGLE derive a one-layer model from the target, a draft model is
/// `separate` (required then). `inputProjection` and the sharing flags say how it sits (the
/// addresses are the builder's). Throws config::ConfigError kInvalidConfig naming the key when the
/// target has no MTP module, an EAGLE head would have no FFN, or the draft model's vocabulary or
/// KV does not fit the target's cache layout.
struct DraftModel {
  ModelConfig model;
  DraftLayout layout;  ///< sharing flags and inputProjection (addresses left 0)
};
DraftModel draftModelFor(const ModelConfig& target, const SpeculativeConfig& spec, const ModelConfig* separate);

/// The draft passes that follow a step's verification (see the top of this file): pass 1 feeds
/// each sequence's accepted tokens (a prompt chunk: the chunk) and samples where it proposes;
/// passes 2.. feed one token of the sequences still proposing. Each pass keeps the step's KV
/// layout and block tables. Empty when nothing proposes and no prompt is prefilled.
std::vector<StepBatch> draftPasses(const StepBatch& step);

}  // namespace scoville::workload
