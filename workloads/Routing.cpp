#include "workloads/Routing.h"

#include "config/Text.h"
#include "workloads/Random.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace scoville::workload {

using namespace scoville::config;

namespace {

// ---------------------------------------------------------------------------------------------
// Random streams (workloads/Random.h: specified to the bit on every platform).

/// (a * b) >> shift for 0 < shift < 64, when the result fits in 64 bits.
uint64_t multiplyShift(uint64_t a, uint64_t b, int shift) {
  uint64_t low = 0;
  const uint64_t high = multiplyWide(a, b, low);
  return (high << (64 - shift)) | (low >> shift);
}

/// What a random stream is used for; streams of different purposes or layers are independent.
enum Purpose : uint64_t { kTokenStream = 1, kLayerRanks = 2, kSharedRanks = 3 };

uint64_t streamKey(uint64_t seed, Purpose purpose, uint32_t layer) {
  return mixBits(mixBits(mixBits(seed) ^ purpose) ^ layer);
}

/// A seeded permutation of 0..n-1 (Fisher-Yates).
std::vector<uint32_t> permutation(int n, uint64_t key) {
  std::vector<uint32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0u);
  Rng rng(key);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

// ---------------------------------------------------------------------------------------------
// Zipf weights in integer fixed point (no libm: std::pow may differ in the last bit between
// platforms, which would change the routing).

constexpr int kLogFractionBits = 40;
constexpr uint64_t kLn2Q62 = 3196577161300663915ull;  ///< round(ln 2 * 2^62)

int floorLog2(uint64_t n) {
  int bits = 0;
  while (n >>= 1) ++bits;
  return bits;
}

int ceilLog2(uint64_t n) {
  return n <= 1 ? 0 : floorLog2(n - 1) + 1;
}

/// log2(n) in Q40 for 1 <= n < 2^31: the integer part, then the fraction bit by bit by squaring.
uint64_t log2Fixed(uint64_t n) {
  const int whole = floorLog2(n);
  uint64_t y = n << (62 - whole);  // n / 2^whole in [1, 2), Q62
  uint64_t fraction = 0;
  for (int i = 0; i < kLogFractionBits; ++i) {
    y = multiplyShift(y, y, 62);
    fraction <<= 1;
    if (y >= (uint64_t{1} << 63)) {
      y >>= 1;
      fraction |= 1;
    }
  }
  return (static_cast<uint64_t>(whole) << kLogFractionBits) | fraction;
}

/// e^-x in Q62 for x in [0, 1) given in Q62, by its Taylor series.
uint64_t expNegFixed(uint64_t x) {
  uint64_t term = uint64_t{1} << 62;
  uint64_t positive = term;
  uint64_t negative = 0;
  for (uint64_t n = 1; term != 0; ++n) {
    term = multiplyShift(term, x, 62) / n;
    (n % 2 == 1 ? negative : positive) += term;
  }
  return positive - negative;
}

/// Integer weights round(2^u / rank^s) (at least 1) for ranks 1..experts, with u chosen so that
/// they sum to at most 2^48 (so Lemire's rejection step is rarely needed: p < 2^-16 per draw).
std::vector<uint64_t> zipfWeights(int experts, double exponent) {
  const auto exponentQ32 = static_cast<uint64_t>(std::llround(exponent * 4294967296.0));
  const int unitBits = 48 - ceilLog2(static_cast<uint64_t>(experts));
  std::vector<uint64_t> weights(static_cast<std::size_t>(experts));
  for (std::size_t rank = 0; rank < weights.size(); ++rank) {
    // rank^-s = 2^-(whole + f) with whole + f = s * log2(rank), and 2^-f = e^-(f ln 2).
    const uint64_t power = multiplyShift(exponentQ32, log2Fixed(rank + 1), 32);  // Q40
    const uint64_t whole = power >> kLogFractionBits;
    const uint64_t fraction = power & ((uint64_t{1} << kLogFractionBits) - 1);
    const uint64_t value = expNegFixed(multiplyShift(fraction, kLn2Q62, kLogFractionBits));  // Q62, (0.5, 1]
    const uint64_t shift = static_cast<uint64_t>(62 - unitBits) + whole;
    const uint64_t weight = shift >= 64 ? 0 : (value + (uint64_t{1} << (shift - 1))) >> shift;
    weights[rank] = std::max<uint64_t>(weight, 1);
  }
  return weights;
}

// ---------------------------------------------------------------------------------------------
// Implementations.

class RoutingBase : public RoutingModel {
 public:
  RoutingBase(int experts, int topK) : m_experts(experts), m_topK(topK) {}
  int experts() const final { return m_experts; }
  int topK() const final { return m_topK; }

 protected:
  void checkCounts(const std::vector<uint64_t>& counts) const {
    if (counts.size() != static_cast<std::size_t>(m_experts)) {
      throw std::invalid_argument(fmt::format("RoutingModel::route: counts has {} entries, the model has {} experts",
                                              counts.size(), m_experts));
    }
  }

  int m_experts;
  int m_topK;
};

/// Each token: a partial Fisher-Yates shuffle of the expert pool picks topK distinct experts.
class UniformRouting final : public RoutingBase {
 public:
  UniformRouting(int experts, int topK, uint64_t seed)
      : RoutingBase(experts, topK), m_seed(seed), m_pool(static_cast<std::size_t>(experts)) {}

  void route(uint32_t layer, uint64_t tokens, std::vector<uint64_t>& counts) override {
    checkCounts(counts);
    Rng& stream = m_streams.try_emplace(layer, streamKey(m_seed, kTokenStream, layer)).first->second;
    // The pool starts from the identity on every call, so a call depends only on its layer's stream.
    std::iota(m_pool.begin(), m_pool.end(), 0u);
    const uint64_t experts = m_pool.size();
    const auto topK = static_cast<uint64_t>(m_topK);
    // A local copy of the stream stays in registers (the counts' stores could alias it); prefill
    // steps route hundreds of thousands of tokens.
    Rng rng = stream;
    uint32_t* pool = m_pool.data();
    uint64_t* count = counts.data();
    for (uint64_t token = 0; token < tokens; ++token) {
      for (uint64_t k = 0; k < topK; ++k) {
        std::swap(pool[k], pool[k + rng.below(experts - k)]);
        ++count[pool[k]];
      }
    }
    stream = rng;
  }

 private:
  uint64_t m_seed;
  std::vector<uint32_t> m_pool;
  std::unordered_map<uint32_t, Rng> m_streams;
};

/// Zipf popularity over ranks; a per-layer (or shared) permutation maps ranks to experts. A token's
/// experts are drawn one by one from the weights of the ranks not yet chosen: a draw in the
/// compacted range [0, total - chosen weight) is mapped onto the full cumulative range by skipping
/// the chosen ranks' intervals (kept in ascending order), and its rank is found from a guide table.
/// Exact and without rejection, so it stays fast at any skew: O(topK^2) per token, with about one
/// rank scanned per draw.
class SkewedRouting final : public RoutingBase {
 public:
  SkewedRouting(const RoutingConfig& config, int experts, int topK, uint64_t seed)
      : RoutingBase(experts, topK),
        m_seed(seed),
        m_perLayerRanks(config.perLayerRanks),
        m_weight(zipfWeights(experts, config.zipfExponent)),
        m_start(m_weight.size()),
        m_end(m_weight.size()),
        m_chosen(static_cast<std::size_t>(topK)) {
    uint64_t total = 0;
    for (std::size_t rank = 0; rank < m_weight.size(); ++rank) {
      m_start[rank] = total;
      total += m_weight[rank];
      m_end[rank] = total;
    }
    m_total = total;
    // Guide table (Chen and Asau's indexed search): about 8 buckets per expert of equal width
    // 2^m_bucketShift; m_guide[b] is the rank whose interval holds the bucket's first point.
    const uint64_t targetBuckets = 8 * static_cast<uint64_t>(experts);
    while ((total >> m_bucketShift) >= targetBuckets) ++m_bucketShift;
    m_guide.resize(static_cast<std::size_t>(total >> m_bucketShift) + 1);
    uint32_t rank = 0;
    for (std::size_t bucket = 0; bucket < m_guide.size(); ++bucket) {
      const uint64_t first = static_cast<uint64_t>(bucket) << m_bucketShift;
      while (rank + 1 < m_end.size() && m_end[rank] <= first) ++rank;
      m_guide[bucket] = rank;
    }
    if (!m_perLayerRanks) m_sharedRanks = permutation(experts, streamKey(seed, kSharedRanks, 0));
  }

  void route(uint32_t layer, uint64_t tokens, std::vector<uint64_t>& counts) override {
    checkCounts(counts);
    Layer& state = layerState(layer);
    const std::vector<uint32_t>& expertOfRank = state.expertOfRank;
    for (uint64_t token = 0; token < tokens; ++token) {
      uint64_t chosenWeight = 0;
      for (int k = 0; k < m_topK; ++k) {
        uint64_t x = state.rng.below(m_total - chosenWeight);
        int slot = 0;
        for (; slot < k; ++slot) {
          const uint32_t chosen = m_chosen[slot];
          if (x < m_start[chosen]) break;
          x += m_weight[chosen];
        }
        // x now lies in an unchosen rank's interval, between chosen ranks slot-1 and slot.
        uint32_t rank = m_guide[x >> m_bucketShift];
        while (m_end[rank] <= x) ++rank;
        for (int j = k; j > slot; --j) m_chosen[j] = m_chosen[j - 1];
        m_chosen[slot] = rank;
        chosenWeight += m_weight[rank];
        ++counts[expertOfRank[rank]];
      }
    }
  }

 private:
  struct Layer {
    Rng rng;
    std::vector<uint32_t> expertOfRank;
  };

  Layer& layerState(uint32_t layer) {
    auto found = m_layers.find(layer);
    if (found != m_layers.end()) return found->second;
    std::vector<uint32_t> ranks =
        m_perLayerRanks ? permutation(m_experts, streamKey(m_seed, kLayerRanks, layer)) : m_sharedRanks;
    return m_layers.emplace(layer, Layer{Rng(streamKey(m_seed, kTokenStream, layer)), std::move(ranks)}).first->second;
  }

  uint64_t m_seed;
  bool m_perLayerRanks;
  std::vector<uint64_t> m_weight;  ///< by rank
  std::vector<uint64_t> m_start;   ///< cumulative weight before each rank
  std::vector<uint64_t> m_end;     ///< cumulative weight up to and including each rank
  uint64_t m_total = 0;
  int m_bucketShift = 0;
  std::vector<uint32_t> m_guide;        ///< first rank of each bucket of the cumulative range
  std::vector<uint32_t> m_sharedRanks;  ///< expert of each rank, when all layers share one
  std::vector<uint32_t> m_chosen;       ///< ranks the current token has chosen, ascending
  std::unordered_map<uint32_t, Layer> m_layers;
};

template <class I>
bool parseInteger(std::string_view text, I& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

/// Replays a routing trace file (format in Routing.h).
class TraceRouting final : public RoutingBase {
 public:
  TraceRouting(const RoutingConfig& config, int experts, int topK, const std::vector<uint32_t>& moeLayers)
      : RoutingBase(experts, topK), m_file(config.file) {
    load(moeLayers);
  }

  void route(uint32_t layer, uint64_t tokens, std::vector<uint64_t>& counts) override {
    checkCounts(counts);
    const auto found = m_layers.find(layer);
    if (found == m_layers.end()) {
      std::vector<uint32_t> layers;
      for (const auto& entry : m_layers) layers.push_back(entry.first);
      throw std::runtime_error(fmt::format("routing trace '{}' has no rows for layer {} (it has layers {})", m_file,
                                           layer, fmt::join(layers, ", ")));
    }
    LayerTrace& trace = found->second;
    const uint64_t rows = trace.ids.size() / static_cast<std::size_t>(m_topK);
    if (const uint64_t cycles = tokens / rows; cycles > 0) {
      for (std::size_t e = 0; e < counts.size(); ++e) counts[e] += cycles * trace.cycleCounts[e];
    }
    const auto topK = static_cast<std::size_t>(m_topK);
    for (uint64_t token = 0; token < tokens % rows; ++token) {
      const uint32_t* row = trace.ids.data() + trace.next * topK;
      for (std::size_t k = 0; k < topK; ++k) ++counts[row[k]];
      if (++trace.next == rows) trace.next = 0;
    }
  }

 private:
  struct LayerTrace {
    std::vector<uint32_t> ids;          ///< topK expert ids per row, rows in file order
    std::vector<uint64_t> cycleCounts;  ///< per expert: tokens of one pass over all rows
    uint64_t next = 0;                  ///< row the next token replays
  };

  [[noreturn]] void fail(int line, const std::string& message) const {
    throw ConfigError(ErrorKind::kInvalidConfig, fmt::format("{}:{}", m_file, line),
                      fmt::format("routing trace: {}", message));
  }

  void load(const std::vector<uint32_t>& moeLayers) {
    std::error_code ec;
    if (std::filesystem::exists(m_file, ec) && !std::filesystem::is_regular_file(m_file, ec)) {
      throw ConfigError(ErrorKind::kFileNotFound, m_file, "the routing trace file is not a regular file");
    }
    std::ifstream in(m_file, std::ios::binary);
    if (!in) throw ConfigError(ErrorKind::kFileNotFound, m_file, "cannot open routing trace file");

    std::vector<bool> seen(static_cast<std::size_t>(m_experts), false);
    std::vector<uint32_t> row;
    row.reserve(static_cast<std::size_t>(m_topK));
    bool haveHeader = false;
    int lineNumber = 0;
    std::string text;
    while (std::getline(in, text)) {
      ++lineNumber;
      const std::string_view line = config::trimBlanks(text);
      if (line.empty() || line.front() == '#') continue;
      if (!haveHeader) {
        if (line != "layer,experts")
          fail(lineNumber, fmt::format("expected the header 'layer,experts', got '{}'", line));
        haveHeader = true;
        continue;
      }
      const std::size_t comma = line.find(',');
      if (comma == std::string_view::npos) {
        fail(lineNumber, fmt::format("expected 'LAYER,EXPERT EXPERT ...', got '{}'", line));
      }
      uint32_t layer = 0;
      const std::string_view layerText = config::trimBlanks(line.substr(0, comma));
      if (!parseInteger(layerText, layer)) {
        fail(lineNumber, fmt::format("layer '{}' is not a non-negative integer", layerText));
      }
      row.clear();
      std::string_view rest = line.substr(comma + 1);
      while (true) {
        const std::size_t first = rest.find_first_not_of(" \t");
        if (first == std::string_view::npos) break;
        rest = rest.substr(first);
        const std::string_view idText = rest.substr(0, rest.find_first_of(" \t"));
        rest = rest.substr(idText.size());
        long long id = 0;
        if (!parseInteger(idText, id)) fail(lineNumber, fmt::format("expert id '{}' is not an integer", idText));
        if (id < 0 || id >= m_experts) {
          fail(lineNumber, fmt::format("expert id {} is out of range [0, {}]", id, m_experts - 1));
        }
        if (seen[static_cast<std::size_t>(id)]) fail(lineNumber, fmt::format("expert id {} appears twice", id));
        seen[static_cast<std::size_t>(id)] = true;
        row.push_back(static_cast<uint32_t>(id));
      }
      for (const uint32_t id : row) seen[id] = false;
      if (row.size() != static_cast<std::size_t>(m_topK)) {
        fail(lineNumber, fmt::format("a row has topK = {} expert ids, this one has {}", m_topK, row.size()));
      }
      if (!moeLayers.empty() && !std::binary_search(moeLayers.begin(), moeLayers.end(), layer)) {
        fail(lineNumber, fmt::format("layer {} is not a MoE layer of the model (its MoE layers are {}..{})", layer,
                                     moeLayers.front(), moeLayers.back()));
      }
      LayerTrace& trace = m_layers[layer];
      trace.ids.insert(trace.ids.end(), row.begin(), row.end());
    }
    if (!haveHeader) {
      throw ConfigError(ErrorKind::kEmptyFile, m_file, "routing trace has no header line 'layer,experts'");
    }
    if (m_layers.empty()) throw ConfigError(ErrorKind::kInvalidConfig, m_file, "routing trace has no rows");
    for (const uint32_t layer : moeLayers) {
      if (m_layers.count(layer) == 0) {
        throw ConfigError(ErrorKind::kInvalidConfig, m_file,
                          fmt::format("routing trace has no row for MoE layer {} of the model: every MoE layer "
                                      "({}..{}) needs its rows",
                                      layer, moeLayers.front(), moeLayers.back()));
      }
    }
    for (auto& [layer, trace] : m_layers) {
      trace.cycleCounts.assign(static_cast<std::size_t>(m_experts), 0);
      for (const uint32_t id : trace.ids) ++trace.cycleCounts[id];
    }
  }

  std::string m_file;
  std::map<uint32_t, LayerTrace> m_layers;
};

// ---------------------------------------------------------------------------------------------
// Registration: one entry per implementation, read by the schema (names) and the factory.

using Factory = std::unique_ptr<RoutingModel> (*)(const RoutingConfig&, int experts, int topK, uint64_t seed,
                                                  const std::vector<uint32_t>& moeLayers);

struct Implementation {
  const char* name;
  RoutingImpl impl;
  Factory make;
};

constexpr std::array<Implementation, 3> kImplementations = {{
    {"uniform", RoutingImpl::kUniform,
     [](const RoutingConfig&, int experts, int topK, uint64_t seed, const std::vector<uint32_t>&)
         -> std::unique_ptr<RoutingModel> { return std::make_unique<UniformRouting>(experts, topK, seed); }},
    {"skewed", RoutingImpl::kSkewed,
     [](const RoutingConfig& config, int experts, int topK, uint64_t seed, const std::vector<uint32_t>&)
         -> std::unique_ptr<RoutingModel> { return std::make_unique<SkewedRouting>(config, experts, topK, seed); }},
    {"trace", RoutingImpl::kTrace,
     [](const RoutingConfig& config, int experts, int topK, uint64_t, const std::vector<uint32_t>& moeLayers)
         -> std::unique_ptr<RoutingModel> { return std::make_unique<TraceRouting>(config, experts, topK, moeLayers); }},
}};

const Implementation& implementation(RoutingImpl impl) {
  for (const Implementation& entry : kImplementations) {
    if (entry.impl == impl) return entry;
  }
  throw std::invalid_argument("unregistered routing implementation");
}

/// Keys only one implementation reads; any other impl rejects them.
struct OwnedKey {
  const char* key;
  RoutingImpl owner;
};
constexpr std::array<OwnedKey, 3> kOwnedKeys = {{
    {"zipf_exponent", RoutingImpl::kSkewed},
    {"per_layer_ranks", RoutingImpl::kSkewed},
    {"file", RoutingImpl::kTrace},
}};

void checkRouting(const RoutingConfig& config, const Node& node) {
  for (const OwnedKey& owned : kOwnedKeys) {
    if (config.impl != owned.owner) {
      node.rejectIfGiven(owned.key, fmt::format("is read by impl {} only, not by impl {}", routingImplName(owned.owner),
                                                routingImplName(config.impl)));
    }
  }
  if (config.impl == RoutingImpl::kTrace) {
    if (!node.yaml()["file"]) {
      node.fail(ErrorKind::kMissingKey,
                fmt::format("missing key '{}.file': impl trace needs the routing trace file to replay", node.path()));
    }
    if (config.file.empty()) {
      const Node at = node.at("file");
      at.fail(ErrorKind::kInvalidConfig, fmt::format("'{}' must name a routing trace file", at.path()));
    }
  }
}

}  // namespace

std::string_view routingImplName(RoutingImpl impl) {
  return implementation(impl).name;
}

const Schema<RoutingConfig>& RoutingConfig::schema() {
  static const Schema<RoutingConfig> s =
      Schema<RoutingConfig>("routing",
                            "MoE routing model: which experts each token of a mixture-of-experts layer is sent to. "
                            "Seeded and deterministic; each layer has its own random stream.")
          .choice(
              "impl", &RoutingConfig::impl,
              [] {
                std::vector<std::pair<std::string, RoutingImpl>> names;
                names.reserve(kImplementations.size());
                for (const Implementation& entry : kImplementations) names.emplace_back(entry.name, entry.impl);
                return names;
              }(),
              required(),
              "uniform: topK distinct experts uniformly at random; skewed: Zipf popularity (rank i has weight "
              "1/i^s), drawn without replacement; trace: replay a routing trace file")
          .number("zipf_exponent", &RoutingConfig::zipfExponent, optional("1.0"), Range{0.0, true, 10.0},
                  "skewed: Zipf exponent s (larger: a few experts take more of the tokens)")
          .flag("per_layer_ranks", &RoutingConfig::perLayerRanks, optional("true"),
                "skewed: each layer has its own seeded choice of hot experts (false: one choice for all layers)")
          .text("file", &RoutingConfig::file, optional("~"),
                "trace: CSV routing trace (header 'layer,experts', rows 'LAYER,ID ID ...'), relative to the "
                "scenario file")
          .check(
              "zipf_exponent and per_layer_ranks are read by impl skewed only, file by impl trace only; impl "
              "trace needs file",
              checkRouting);
  return s;
}

std::unique_ptr<RoutingModel> makeRoutingModel(const RoutingConfig& config, int experts, int topK, uint64_t seed,
                                               const std::vector<uint32_t>& moeLayers) {
  if (experts < 1) throw std::invalid_argument(fmt::format("routing: experts = {} (at least 1)", experts));
  if (topK < 1 || topK > experts) {
    throw std::invalid_argument(fmt::format("routing: topK = {} is not in [1, experts = {}]", topK, experts));
  }
  return implementation(config.impl).make(config, experts, topK, seed, moeLayers);
}

}  // namespace scoville::workload
