#pragma once
// Mixture-of-experts routing models: which of a layer's experts each token is sent to. A policy
// interface (RoutingModel) with implementations chosen by the `impl:` key of a `routing` map:
//
//   uniform  every token picks topK distinct experts uniformly at random.
//   skewed   Zipf popularity: the expert of popularity rank i (1-based) has weight 1 / i^s; a
//            token's topK distinct experts are drawn one after another without replacement, each in
//            proportion to the weights of the experts not yet chosen. Which expert holds which rank
//            is a seeded permutation, per layer (per_layer_ranks: true) or shared by all layers.
//   trace    replays a routing trace file (format below).
//
// Determinism: results are a function of the seed, the layer, and the earlier route() calls for
// that same layer only (each layer has its own random stream, derived from the seed and the layer
// index), so the order in which layers are routed does not matter. The random numbers come from
// xoshiro256** seeded by splitmix64, mapped to ranges with Lemire's multiply-shift (with its exact
// rejection step), and the Zipf weights are computed in integer fixed point: no standard-library
// distribution and no libm call is involved, so a seed gives byte-identical counts on every
// platform and standard library.
//
// Trace file format (CSV, UTF-8/ASCII):
//   # comment lines start with '#'; blank lines are ignored
//   layer,experts            <- the header, exactly this, before the first row
//   3,17 4 99 120            <- one row per token: the layer index, a comma, then that token's
//   3,0 5 17 2                  expert ids separated by spaces: exactly topK distinct ids, each in
//   4,7 1 2 3                   [0, experts)
// Rows of different layers may interleave. For each layer, route() replays that layer's rows in file
// order, one row per token, continuing where the previous call for that layer stopped and wrapping
// around to the layer's first row after its last. The whole file is checked when the model is
// built, against the model's MoE layers when they are given: a row for a layer that is not one
// of them, or a MoE layer without rows, is a load-time error (routing a layer that has no row
// would otherwise throw std::runtime_error mid-run: there is no fallback).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/Schema.h"

namespace scoville::workload {

enum class RoutingImpl { kUniform, kSkewed, kTrace };

/// The `routing` map of a configuration. Keys that belong to another impl are errors.
///
/// There is no `hot_experts` key: a Zipf tail with a larger exponent already concentrates the load
/// on a few experts (s = 1.2 over 256 experts gives rank 1 a quarter of the weight), so a second
/// knob would express the same skew two ways.
struct RoutingConfig {
  RoutingImpl impl = RoutingImpl::kUniform;  ///< key "impl"
  double zipfExponent = 1.0;                 ///< key "zipf_exponent" (skewed): s in (0, 10]
  bool perLayerRanks = true;                 ///< key "per_layer_ranks" (skewed): each layer has its own hot experts
  std::string file;                          ///< key "file" (trace): path as written; the caller resolves it

  static const config::Schema<RoutingConfig>& schema();
};

/// Name of `impl` as written in YAML ("uniform", "skewed", "trace").
std::string_view routingImplName(RoutingImpl impl);

/// Routes the tokens of MoE layers to experts. Stateful: successive calls for one layer continue
/// that layer's random stream (or trace position); calls for other layers do not affect it. Not
/// thread-safe.
class RoutingModel {
 public:
  virtual ~RoutingModel() = default;

  /// Routes `tokens` tokens through MoE layer `layer` (0-based model layer index): adds to
  /// counts[e] the number of those tokens that chose expert e. Each token picks topK distinct
  /// experts, so the counts grow by tokens * topK in total. counts.size() must equal experts()
  /// (std::invalid_argument otherwise). Allocates nothing per token.
  virtual void route(uint32_t layer, uint64_t tokens, std::vector<uint64_t>& counts) = 0;
  /// Routed experts of each layer.
  virtual int experts() const = 0;
  /// Distinct experts each token is sent to.
  virtual int topK() const = 0;
};

/// Builds the model `config.impl` names for layers of `experts` experts with `topK` per token;
/// `seed` picks the random streams (the trace model ignores it). Throws std::invalid_argument when
/// experts < 1, topK < 1 or topK > experts; for impl trace, config::ConfigError when the trace file
/// cannot be read (kFileNotFound, located at the file), is empty (kEmptyFile) or has a bad header or
/// row (kInvalidConfig, located at file:line). `moeLayers`, when not empty, are the layers the
/// model routes: a trace must have rows for each of them and for no other (kInvalidConfig).
std::unique_ptr<RoutingModel> makeRoutingModel(const RoutingConfig& config, int experts, int topK, uint64_t seed,
                                               const std::vector<uint32_t>& moeLayers = {});

}  // namespace scoville::workload
