#include "workloads/Speculative.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "config/ConfigError.h"
#include "workloads/StepPlan.h"

namespace scoville::workload {

using namespace scoville::config;

const char* speculativeMethodName(SpeculativeMethod method) {
  switch (method) {
    case SpeculativeMethod::kMtp: return "mtp";
    case SpeculativeMethod::kEagle: return "eagle";
    case SpeculativeMethod::kDraftModel: return "draft_model";
  }
  return "?";
}

const Schema<AcceptanceConfig>& AcceptanceConfig::schema() {
  static const Schema<AcceptanceConfig> s =
      Schema<AcceptanceConfig>("acceptance",
                               "How many of a verification's draft tokens the target accepts, drawn per sequence "
                               "and step from a seeded stream of the replica's own.")
          .choice("impl", &AcceptanceConfig::impl,
                  {{"per_position", AcceptanceImpl::kPerPosition},
                   {"mean_length", AcceptanceImpl::kMeanLength},
                   {"trace", AcceptanceImpl::kTrace}},
                  required(),
                  "per_position: a rate per draft position; mean_length: one rate for every position, from the "
                  "mean acceptance length; trace: accepted counts replayed from a file")
          .numberList("rates", &AcceptanceConfig::rates, optional("[]"), between(0.0, 1.0),
                      "per_position: the probability that draft token i is accepted given that all before it "
                      "were, one per draft token (vLLM's acceptance rate per position)")
          .number("mean_length", &AcceptanceConfig::meanLength, optional("1"), between(1.0, 65.0),
                  "mean_length: accepted draft tokens + 1 per verification (TensorRT-LLM's and vLLM's "
                  "'acceptance length'), at most draft_tokens + 1")
          .text("file", &AcceptanceConfig::file, optional("~"),
                "trace: CSV with header `accepted`, one accepted count (0..draft_tokens) per verification, "
                "relative to the scenario file")
          .check("each key belongs to its impl: rates (per_position), mean_length (mean_length), file (trace)",
                 [](const AcceptanceConfig& a, const Node& n) {
                   const auto only = [&](bool allowed, const char* key, const char* why) {
                     if (!allowed) n.rejectIfGiven(key, why);
                   };
                   only(a.impl == AcceptanceImpl::kPerPosition, "rates", "is a per_position key");
                   only(a.impl == AcceptanceImpl::kMeanLength, "mean_length", "is a mean_length key");
                   only(a.impl == AcceptanceImpl::kTrace, "file", "is a trace key");
                   if (a.impl == AcceptanceImpl::kPerPosition && a.rates.empty()) {
                     n.fail(ErrorKind::kMissingKey, fmt::format("'{}.rates' is required for per_position", n.path()));
                   }
                   if (a.impl == AcceptanceImpl::kTrace && a.file.empty()) {
                     n.fail(ErrorKind::kMissingKey, fmt::format("'{}.file' is required for trace", n.path()));
                   }
                 });
  return s;
}

const Schema<DraftHeadConfig>& DraftHeadConfig::schema() {
  static const Schema<DraftHeadConfig> s =
      Schema<DraftHeadConfig>("head", "An EAGLE head's shape: one decoder layer of the target's width.")
          .integer("ffn_intermediate", &DraftHeadConfig::ffnIntermediate, optional("0"), between(0, 1 << 20),
                   "inner width of its FFN; 0: the target's ffn_intermediate")
          .integer("vocab", &DraftHeadConfig::vocab, optional("0"), between(0, 1 << 24),
                   "its own LM head's vocabulary (EAGLE-3's reduced draft vocabulary); 0: it runs the target's "
                   "LM head");
  return s;
}

const Schema<SpeculativeConfig>& SpeculativeConfig::schema() {
  static const Schema<SpeculativeConfig> s =
      Schema<SpeculativeConfig>(
          "speculative",
          "Speculative decoding (docs/serving.md#speculative-decoding): each decoding sequence verifies "
          "draft_tokens draft tokens per step and keeps the accepted ones plus one; the draft runs on the chips "
          "after the verification.")
          .choice("method", &SpeculativeConfig::method,
                  {{"mtp", SpeculativeMethod::kMtp},
                   {"eagle", SpeculativeMethod::kEagle},
                   {"draft_model", SpeculativeMethod::kDraftModel}},
                  required(),
                  "mtp: the model's multi-token-prediction module (mtp_layers), reused for each draft token "
                  "(TensorRT-LLM's MTP Eagle path); eagle: an EAGLE head (head); draft_model: a separate model "
                  "(draft_model)")
          .integer("draft_tokens", &SpeculativeConfig::draftTokens, required(), between(0, 16),
                   "draft tokens verified per step (TensorRT-LLM's num_nextn_predict_layers, vLLM's "
                   "num_speculative_tokens); 0: plain decoding")
          .child("acceptance", &SpeculativeConfig::acceptance, AcceptanceConfig::schema(), required(),
                 "how many drafts are accepted")
          .text("draft_model", &SpeculativeConfig::draftModel, optional("~"),
                "draft_model: a model name in workloads/models/ or a file; tensor-parallel like the target, its "
                "weights and KV beside the target's on each chip")
          .child("head", &SpeculativeConfig::head, DraftHeadConfig::schema(), optional("{}"), "eagle: the head")
          .check(
              "draft_model belongs to method draft_model (and is required there), head to eagle; per_position "
              "needs a rate for each draft token and mean_length at most draft_tokens + 1",
              [](const SpeculativeConfig& c, const Node& n) {
                if (c.method != SpeculativeMethod::kDraftModel) n.rejectIfGiven("draft_model", "is a draft_model key");
                if (c.method != SpeculativeMethod::kEagle) n.rejectIfGiven("head", "is an eagle key");
                if (c.method == SpeculativeMethod::kDraftModel && c.draftModel.empty()) {
                  n.fail(ErrorKind::kMissingKey,
                         fmt::format("'{}.draft_model' is required for method draft_model", n.path()));
                }
                const AcceptanceConfig& a = c.acceptance;
                if (a.impl == AcceptanceImpl::kPerPosition &&
                    a.rates.size() != static_cast<std::size_t>(c.draftTokens)) {
                  const Node at = n.at("acceptance").at("rates");
                  at.fail(ErrorKind::kInvalidConfig,
                          fmt::format("'{}' has {} rates but draft_tokens is {}: give one per draft position",
                                      at.path(), a.rates.size(), c.draftTokens));
                }
                if (a.impl == AcceptanceImpl::kMeanLength && a.meanLength > c.draftTokens + 1.0) {
                  const Node at = n.at("acceptance").at("mean_length");
                  at.fail(ErrorKind::kOutOfRange,
                          fmt::format("'{}' = {} is out of range: a verification of draft_tokens = {} accepts at "
                                      "most {} tokens",
                                      at.path(), a.meanLength, c.draftTokens, c.draftTokens + 1));
                }
              });
  return s;
}

double AcceptanceModel::rateForMeanLength(double length, int k) {
  if (k <= 0 || length <= 1.0) return 0.0;
  if (length >= k + 1.0) return 1.0;
  const auto lengthOf = [k](double p) {
    double sum = 1.0, term = 1.0;
    for (int i = 0; i < k; ++i) sum += (term *= p);
    return sum;
  };
  double lo = 0.0, hi = 1.0;
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    (lengthOf(mid) < length ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

AcceptanceModel::AcceptanceModel(const AcceptanceConfig& config, int draftTokens, uint64_t seed, std::vector<int> trace)
    : m_config(config), m_k(draftTokens), m_trace(std::move(trace)), m_rng(mixBits(seed ^ 0x5bec0de5ull)) {
  if (m_k < 0) throw std::invalid_argument("speculative decoding needs draft_tokens >= 0");
  switch (config.impl) {
    case AcceptanceImpl::kPerPosition:
      if (config.rates.size() < static_cast<std::size_t>(m_k) ||
          std::any_of(config.rates.begin(), config.rates.end(), [](double p) { return !(p >= 0.0 && p <= 1.0); })) {
        throw std::invalid_argument(
            fmt::format("acceptance per_position needs {} rates in [0, 1], got {}", m_k, config.rates.size()));
      }
      break;
    case AcceptanceImpl::kMeanLength:
      if (!(config.meanLength >= 1.0 && config.meanLength <= m_k + 1.0)) {
        throw std::invalid_argument(
            fmt::format("acceptance mean_length {} is outside [1, {}]", config.meanLength, m_k + 1));
      }
      m_rate = rateForMeanLength(config.meanLength, m_k);
      break;
    case AcceptanceImpl::kTrace:
      if (m_trace.empty()) throw std::invalid_argument("acceptance trace has no count");
      break;
  }
}

double AcceptanceModel::rate(int position) const {
  if (position < 1 || position > m_k) return 0.0;
  if (m_config.impl == AcceptanceImpl::kPerPosition) return m_config.rates[static_cast<std::size_t>(position - 1)];
  return m_rate;
}

double AcceptanceModel::meanLength() const {
  if (m_config.impl == AcceptanceImpl::kTrace) {
    double sum = 0.0;
    for (int a : m_trace) sum += std::min(a, m_k);
    return 1.0 + sum / static_cast<double>(m_trace.size());
  }
  double length = 1.0, reach = 1.0;
  for (int i = 1; i <= m_k; ++i) length += (reach *= rate(i));
  return length;
}

int AcceptanceModel::draw(int drafts) {
  drafts = std::clamp(drafts, 0, m_k);
  if (drafts == 0) return 0;
  if (m_config.impl == AcceptanceImpl::kTrace) {
    const int a = m_trace[m_next];
    m_next = (m_next + 1) % m_trace.size();
    return std::min(a, drafts);
  }
  int accepted = 0;
  // One draw per position until the first rejection: a rate of 1 or 0 draws nothing random.
  while (accepted < drafts) {
    const double p = rate(accepted + 1);
    if (p <= 0.0 || (p < 1.0 && m_rng.unit() >= p)) break;
    ++accepted;
  }
  return accepted;
}

std::vector<int> readAcceptanceTrace(const std::string& path, int draftTokens) {
  std::ifstream in(path);
  if (!in) throw ConfigError(ErrorKind::kFileNotFound, path, "cannot open the acceptance trace");
  std::vector<int> counts;
  std::string line;
  int lineNo = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    if (!header) {
      if (line != "accepted") {
        throw ConfigError(ErrorKind::kInvalidConfig, fmt::format("{}:{}", path, lineNo),
                          fmt::format("the acceptance trace's header is '{}', expected 'accepted'", line));
      }
      header = true;
      continue;
    }
    std::size_t used = 0;
    long value = -1;
    try {
      value = std::stol(line, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != line.size() || value < 0 || value > draftTokens) {
      throw ConfigError(
          ErrorKind::kInvalidConfig, fmt::format("{}:{}", path, lineNo),
          fmt::format("accepted count '{}' is not an integer in [0, draft_tokens = {}]", line, draftTokens));
    }
    counts.push_back(static_cast<int>(value));
  }
  if (!header) throw ConfigError(ErrorKind::kEmptyFile, path, "the acceptance trace has no header line");
  if (counts.empty()) throw ConfigError(ErrorKind::kEmptyFile, path, "the acceptance trace has no count");
  return counts;
}

DraftModel draftModelFor(const ModelConfig& target, const SpeculativeConfig& spec, const ModelConfig* separate) {
  const auto invalid = [](const std::string& message) { throw ConfigError(ErrorKind::kInvalidConfig, "", message); };
  DraftModel out;
  ModelConfig& d = out.model;
  switch (spec.method) {
    case SpeculativeMethod::kMtp:
      if (target.mtpLayers < 1) {
        invalid(
            fmt::format("'scenario.speculative.method' is mtp but model '{}' has no multi-token-prediction "
                        "module ('model.mtp_layers' is 0): use eagle or draft_model",
                        target.name));
      }
      // One MTP module: a decoder layer of the target's (a MoE layer for a MoE model), the
      // projection of [embedding; hidden] and the shared embedding and LM head (DeepSeek-V3 §2.2).
      d = target;
      d.name = target.name + "-mtp";
      d.layers = 1;
      d.denseFirstLayers = 0;
      d.slidingWindow = d.slidingWindowEvery = 0;
      out.layout.sharesEmbedding = out.layout.sharesLmHead = true;
      out.layout.inputProjection = 2 * static_cast<uint64_t>(target.hidden);
      break;
    case SpeculativeMethod::kEagle: {
      const int ffn = spec.head.ffnIntermediate > 0 ? spec.head.ffnIntermediate : target.ffnIntermediate;
      if (ffn <= 0) {
        invalid(
            fmt::format("'scenario.speculative.head.ffn_intermediate' is needed: model '{}' has no dense FFN "
                        "width (ffn_intermediate 0) for its EAGLE head to take",
                        target.name));
      }
      d = target;
      d.name = target.name + "-eagle";
      d.family = ModelFamily::kDense;
      d.layers = 1;
      d.ffnIntermediate = ffn;
      d.routedExperts = d.sharedExperts = d.expertsPerToken = d.moeIntermediate = d.denseFirstLayers = 0;
      d.expertWeights.reset();
      d.slidingWindow = d.slidingWindowEvery = 0;
      d.attentionSinks = false;
      d.tiedEmbeddings = false;
      out.layout.sharesEmbedding = true;
      out.layout.sharesLmHead = spec.head.vocab == 0;
      if (spec.head.vocab > 0) d.vocab = spec.head.vocab;
      out.layout.inputProjection = 2 * static_cast<uint64_t>(target.hidden);
      break;
    }
    case SpeculativeMethod::kDraftModel:
      if (separate == nullptr) {
        throw std::invalid_argument("speculative method draft_model needs the draft model's configuration");
      }
      d = *separate;
      if (d.vocab != target.vocab) {
        invalid(
            fmt::format("draft model '{}' has vocab {} but target '{}' has {}: a draft proposes tokens of the "
                        "target's vocabulary ('scenario.speculative.draft_model')",
                        d.name, d.vocab, target.name, target.vocab));
      }
      break;
  }
  if (d.kvBytesPerTokenPerLayer() > target.kvBytesPerTokenPerLayer()) {
    invalid(
        fmt::format("draft '{}' holds {} KV bytes per token and layer, more than target '{}' ({}): its KV "
                    "shares the target's cache blocks, one target layer's room per draft layer",
                    d.name, d.kvBytesPerTokenPerLayer(), target.name, target.kvBytesPerTokenPerLayer()));
  }
  return out;
}

std::vector<StepBatch> draftPasses(const StepBatch& step) {
  std::vector<StepBatch> passes;
  uint32_t deepest = 0;
  // A pass keeps the step's KV layout and block tables.
  const auto shell = [&step] {
    StepBatch b;
    b.kvLayerStride = step.kvLayerStride;
    b.kvLayerRegions = step.kvLayerRegions;
    b.kv = step.kv;
    return b;
  };
  StepBatch first = shell();
  for (const StepSequence& s : step.sequences) {
    // A prompt chunk builds the draft's KV of the chunk; a verification feeds what it accepted.
    const uint64_t feeds = !s.decodes() ? s.tokens : (s.propose > 0 ? 1 + s.accepted : 0);
    if (feeds == 0) continue;
    StepSequence q = s;
    q.tokens = feeds;
    q.verify = q.accepted = 0;
    q.samples = s.propose > 0;
    q.propose = 0;
    // A chunked prompt's draft KV is built along; only a prompt that samples proposes.
    first.sequences.push_back(q);
    deepest = std::max(deepest, s.propose);
  }
  if (first.sequences.empty()) return passes;
  passes.push_back(first);
  for (uint32_t pass = 1; pass < deepest; ++pass) {
    StepBatch next = shell();
    for (const StepSequence& s : step.sequences) {
      if (s.propose <= pass) continue;
      const uint64_t fed = !s.decodes() ? s.tokens : 1 + s.accepted;
      StepSequence q = s;
      q.context = s.context + fed + (pass - 1);
      q.tokens = 1;
      q.verify = q.accepted = q.propose = 0;
      q.samples = true;
      next.sequences.push_back(q);
    }
    passes.push_back(std::move(next));
  }
  return passes;
}

}  // namespace scoville::workload
