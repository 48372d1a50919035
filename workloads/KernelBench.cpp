#include "workloads/KernelBench.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "power/EnergyKeys.h"

namespace scoville::workload {

using config::ConfigError;
using config::ErrorKind;
using config::Node;
using config::optional;
using config::required;
using config::Schema;

namespace {

const std::vector<std::pair<std::string, KernelKind>>& kindNames() {
  static const std::vector<std::pair<std::string, KernelKind>> names = {
      {"hbm_read", KernelKind::kHbmRead},
      {"hbm_write", KernelKind::kHbmWrite},
      {"hbm_copy", KernelKind::kHbmCopy},
      {"gemm", KernelKind::kGemm},
      {"attention_decode", KernelKind::kAttentionDecode},
      {"attention_prefill", KernelKind::kAttentionPrefill},
      {"moe", KernelKind::kMoe}};
  return names;
}

}  // namespace

bool isHbmKind(KernelKind kind) {
  return kind == KernelKind::kHbmRead || kind == KernelKind::kHbmWrite || kind == KernelKind::kHbmCopy;
}

bool isAttentionKind(KernelKind kind) {
  return kind == KernelKind::kAttentionDecode || kind == KernelKind::kAttentionPrefill;
}

const char* kernelKindName(KernelKind kind) {
  for (const auto& [name, k] : kindNames()) {
    if (k == kind) return name.c_str();
  }
  return "?";
}

const Schema<MeasuredKernel>& MeasuredKernel::schema() {
  static const Schema<MeasuredKernel> s =
      Schema<MeasuredKernel>("kernel_measurement", "One kernel timed on real hardware: its shape and time per launch.")
          .text("id", &MeasuredKernel::id, required(), "unique name of the kernel in its dataset")
          .choice("kind", &MeasuredKernel::kind, kindNames(), required(),
                  "hbm_read, hbm_write, hbm_copy (a stream of `bytes`), gemm (C[M x N] = A[M x K] x W[K x N], W "
                  "from HBM), attention_decode (one query token per sequence over `context` cached tokens), "
                  "attention_prefill (one causal prompt of `context` tokens), moe (a fused mixture-of-experts "
                  "layer: `m` tokens each routed to `top_k` of `experts` gated experts [k x 2n] and [n x k])")
          .choice("precision", &MeasuredKernel::precision, tlm::precisionNames(), optional("bf16"),
                  "gemm: operand precision; attention: Q, K and V; moe: the experts' weights")
          .quantity("bytes", &MeasuredKernel::bytes, config::dim::kBytes, optional("0 B"), config::nonNegative(),
                    "hbm kinds: bytes moved per launch (a copy counts those read and those written)")
          .integer("m", &MeasuredKernel::m, optional("0"), config::between(0, 1 << 24),
                   "gemm: rows of A and C (tokens); moe: tokens")
          .integer("k", &MeasuredKernel::k, optional("0"), config::between(0, 1 << 24),
                   "gemm: inner dimension; moe: the experts' hidden width")
          .integer("n", &MeasuredKernel::n, optional("0"), config::between(0, 1 << 24),
                   "gemm: columns of W and C; moe: an expert's inner width (its gate and up are 2n wide)")
          .integer("experts", &MeasuredKernel::experts, optional("0"), config::between(0, 1 << 16),
                   "moe: routed experts")
          .integer("top_k", &MeasuredKernel::topK, optional("0"), config::between(0, 1 << 16),
                   "moe: experts each token is routed to, distinct and uniformly at random (one seeded stream, as a "
                   "benchmark's random router scores route them)")
          .integer("scale_block", &MeasuredKernel::scaleBlock, optional("0"), config::between(0, 1 << 16),
                   "moe: weight elements sharing one scale, which replaces fp4's and int4's own (0: the precision's "
                   "format as it is)")
          .integer("scale_bits", &MeasuredKernel::scaleBits, optional("0"), config::between(0, 64),
                   "moe: bits of one weight scale")
          .choice("compute_precision", &MeasuredKernel::computePrecision, tlm::precisionNames(), optional("bf16"),
                  "moe: the precision the experts compute in (activations; weights stored narrower are converted "
                  "to it)")
          .integer("batch", &MeasuredKernel::batch, optional("1"), config::between(1, 1 << 20),
                   "attention: sequences (prefill: 1)")
          .integer("context", &MeasuredKernel::context, optional("0"), config::between(0, 1 << 24),
                   "attention: cached tokens per sequence (decode) or prompt tokens (prefill)")
          .integer("heads", &MeasuredKernel::heads, optional("0"), config::between(0, 4096), "attention: query heads")
          .integer("kv_heads", &MeasuredKernel::kvHeads, optional("0"), config::between(0, 4096),
                   "attention: key/value heads (a divisor of heads; 0: as heads)")
          .integer("head_dim", &MeasuredKernel::headDim, optional("0"), config::between(0, 4096),
                   "attention: elements per head")
          .quantity("time", &MeasuredKernel::seconds, config::dim::kTime, required(), config::positive(),
                    "measured time per launch (the median of the repetitions)")
          .quantity("time_min", &MeasuredKernel::secondsMin, config::dim::kTime, optional("0 s"), config::nonNegative(),
                    "fastest repetition (0: not given)")
          .quantity("time_max", &MeasuredKernel::secondsMax, config::dim::kTime, optional("0 s"), config::nonNegative(),
                    "slowest repetition (0: not given)")
          .choice("data", &MeasuredKernel::constantData, {{"random", false}, {"constant", true}}, optional("random"),
                  "hbm kinds: the data the kernel moves: random (its wires toggle as for weights and KV) or "
                  "constant (a fill: they do not)")
          .integer("query_block", &MeasuredKernel::queryBlock, optional("1"), config::between(1, 4096),
                   "attention: query rows the kernel computes per block; a block of fewer real rows (a decode "
                   "step's query heads) computes its padding rows too")
          .text("exclude", &MeasuredKernel::exclude, optional("~"),
                "why the point is not compared (a measurement artefact, say); it is listed, never run")
          .text("note", &MeasuredKernel::note, optional("~"), "anything a reader of the comparison should know")
          .check("each kind has its shape", [](const MeasuredKernel& k, const Node& n) {
            const auto need = [&](const char* key, bool missing, const char* what) {
              if (missing) {
                n.fail(ErrorKind::kMissingKey,
                       fmt::format("kernel '{}' ({}) is {} {}, so it needs key '{}' ({})", k.id, n.path(),
                                   isHbmKind(k.kind) || isAttentionKind(k.kind) ? "an" : "a", kernelKindName(k.kind),
                                   key, what));
              }
            };
            if (isHbmKind(k.kind)) need("bytes", !(k.bytes > 0), "a positive size");
            if (k.kind == KernelKind::kGemm || k.kind == KernelKind::kMoe) {
              need("m", k.m <= 0, "a positive integer");
              need("k", k.k <= 0, "a positive integer");
              need("n", k.n <= 0, "a positive integer");
            }
            if (k.kind == KernelKind::kMoe) {
              need("experts", k.experts <= 0, "a positive integer");
              need("top_k", k.topK <= 0, "a positive integer");
              if (k.experts > 0 && k.topK > k.experts) {
                n.at("top_k").fail(
                    ErrorKind::kInvalidConfig,
                    fmt::format("kernel '{}': top_k {} exceeds its {} experts", k.id, k.topK, k.experts));
              }
              if ((k.scaleBlock > 0) != (k.scaleBits > 0)) {
                n.at(k.scaleBlock > 0 ? "scale_bits" : "scale_block")
                    .fail(ErrorKind::kInvalidConfig,
                          fmt::format("kernel '{}': scale_block and scale_bits go together (a scale of scale_bits "
                                      "per scale_block weights)",
                                      k.id));
              }
            }
            if (isAttentionKind(k.kind)) {
              need("context", k.context <= 0, "a positive integer");
              need("heads", k.heads <= 0, "a positive integer");
              need("head_dim", k.headDim <= 0, "a positive integer");
              if (k.heads > 0 && k.heads % k.kvHeadCount() != 0) {
                n.at("kv_heads")
                    .fail(ErrorKind::kInvalidConfig,
                          fmt::format("kernel '{}': kv_heads {} does not divide heads {}", k.id, k.kvHeads, k.heads));
              }
              if (k.kind == KernelKind::kAttentionPrefill && k.batch != 1) {
                n.at("batch").fail(ErrorKind::kInvalidConfig,
                                   fmt::format("kernel '{}': a prefill kernel is one sequence (batch 1)", k.id));
              }
            }
          });
  return s;
}

const Schema<MeasuredPower>& MeasuredPower::schema() {
  static const Schema<MeasuredPower> s =
      Schema<MeasuredPower>("power_measurement", "Board power under a sustained load of one kernel, or idle.")
          .text("id", &MeasuredPower::id, required(), "unique name of the measurement in its dataset")
          .text("kernel", &MeasuredPower::kernel, optional("~"),
                "id of the dataset's kernel launched back to back (absent: idle, nothing running)")
          .number("duty", &MeasuredPower::duty, optional("1"), config::Range{0.0, true, 1.0},
                  "share of the time the kernel ran: bursts of launches with the device idle in between (1: "
                  "back to back)")
          .quantity("power", &MeasuredPower::watts, config::dim::kPower, required(), config::positive(),
                    "measured board power (median over the load's steady part)")
          .quantity("sm_clock", &MeasuredPower::smClockHz, config::dim::kFrequency, optional("0 Hz"),
                    config::nonNegative(), "core clock the board ran at meanwhile (below its maximum: power-capped)")
          .quantity("launch_time", &MeasuredPower::launchTimeS, config::dim::kTime, optional("0 s"),
                    config::nonNegative(),
                    "time per launch while the load ran: the kernel's work per launch over the rate measured "
                    "meanwhile (0: the kernel's timed `time`)")
          .text("note", &MeasuredPower::note, optional("~"), "anything a reader of the comparison should know");
  return s;
}

const Schema<PowerFitParameter>& PowerFitParameter::schema() {
  static const Schema<PowerFitParameter> s =
      Schema<PowerFitParameter>("power_fit_parameter", "A constant of the chip's `power` section the fit sets.")
          .text("key", &PowerFitParameter::key, required(),
                "its key in the chip type's `power` section, e.g. floor or memory_interface.read_energy")
          .text("min", &PowerFitParameter::minText, required(),
                "lower end of its public range, in the key's unit (e.g. '1 pJ/bit')")
          .text("max", &PowerFitParameter::maxText, required(), "upper end of its public range")
          .text("source", &PowerFitParameter::source, required(), "where the range comes from");
  return s;
}

const Schema<PowerFitTie>& PowerFitTie::schema() {
  static const Schema<PowerFitTie> s =
      Schema<PowerFitTie>("power_fit_tie", "A constant the fit sets to a fixed multiple of a fitted one.")
          .text("key", &PowerFitTie::key, required(), "the tied key")
          .text("to", &PowerFitTie::to, required(), "the fitted key it follows")
          .number("ratio", &PowerFitTie::ratio, required(), config::positive(), "key = ratio x to")
          .text("source", &PowerFitTie::source, required(), "why that ratio");
  return s;
}

const Schema<PowerFitSpec>& PowerFitSpec::schema() {
  static const Schema<PowerFitSpec> s =
      Schema<PowerFitSpec>("power_fit",
                           "How a kernel dataset's power points calibrate the platform chip's energy model "
                           "(docs/power.md#calibration).")
          .textList("training", &PowerFitSpec::training, required(),
                    "the power points the fit is trained on (at most half of them); the rest are predicted")
          .childList("parameters", &PowerFitSpec::parameters, PowerFitParameter::schema(), required(),
                     "the constants fitted, each within its public range")
          .childList("tied", &PowerFitSpec::tied, PowerFitTie::schema(), optional("[]"),
                     "constants set to a fixed multiple of a fitted one")
          .number("prior", &PowerFitSpec::prior, optional("0.01"), config::between(0.0, 10.0),
                  "weight of each constant's pull towards the middle of its range, against a point's relative "
                  "error");
  return s;
}

const Schema<TimingFitSpec>& TimingFitSpec::schema() {
  static const Schema<TimingFitSpec> s =
      Schema<TimingFitSpec>("timing_fit",
                            "Which kernels train the chip's one fitted timing constant, "
                            "command_processor.kernel_launch (docs/validation.md#the-launch-gap); the rest are "
                            "predicted.")
          .textList("training", &TimingFitSpec::training, required(),
                    "the kernels the launch gap is fitted on (compared kernels, at most half of them, each run at the "
                    "nominal clock); `scoville kernels` lists them apart from the predicted ones");
  return s;
}

double fitKernelLaunchS(const std::vector<double>& measuredS, const std::vector<double>& simulatedS, double gapS,
                        double hopsS) {
  // Minimise sum ((s_i + d - m_i) / m_i)^2 over the shift d: d = sum((m - s) / m^2) / sum(1 / m^2).
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < measuredS.size() && i < simulatedS.size(); ++i) {
    const double w = 1.0 / (measuredS[i] * measuredS[i]);
    num += (measuredS[i] - simulatedS[i]) * w;
    den += w;
  }
  return den > 0.0 ? std::max(0.0, gapS + num / den - hopsS) : std::max(0.0, gapS - hopsS);
}

const Schema<KernelDataset>& KernelDataset::schema() {
  static const Schema<KernelDataset> s =
      Schema<KernelDataset>("kernel_dataset",
                            "Root of a kernel microbenchmark dataset (workloads/validation/*-kernels.yaml).")
          .text("name", &KernelDataset::name, required(), "dataset name, used in results")
          .text("description", &KernelDataset::description, required(), "what was measured")
          .text("hardware", &KernelDataset::hardware, required(), "the measured device, as its driver names it")
          .text("platform", &KernelDataset::platform, required(),
                "platform (name or file) whose first chip models the device")
          .text("date", &KernelDataset::date, required(), "when it was measured (ISO 8601)")
          .text("source", &KernelDataset::source, required(), "what produced the numbers")
          .text("method", &KernelDataset::method, required(), "how they were taken: timing, inputs, what is counted")
          .text("environment", &KernelDataset::environment, optional("~"), "driver, CUDA and framework versions")
          .quantity("nominal_sm_clock", &KernelDataset::nominalSmClockHz, config::dim::kFrequency, optional("0 Hz"),
                    config::nonNegative(),
                    "the core clock the platform chip's first dvfs point stands for; power points' sm_clock are "
                    "taken relative to it (0: every point at the nominal point)")
          .choice("timing_load", &KernelDataset::sustainedTiming, {{"single", false}, {"sustained", true}},
                  optional("single"),
                  "how the kernels were timed: single (each launch on its own; the chip at its nominal clock) or "
                  "sustained (launched back to back long enough for the board's power limiter to settle: each "
                  "kernel is simulated under the chip's rated-power limiter in its steady state)")
          .childList("kernels", &KernelDataset::kernels, MeasuredKernel::schema(), required(), "the timed kernels")
          .childList("power", &KernelDataset::power, MeasuredPower::schema(), optional("[]"),
                     "board power under sustained loads")
          .optionalChild("power_fit", &KernelDataset::powerFit, PowerFitSpec::schema(),
                         "how `scoville calibrate-power` fits the platform chip's energy constants on the power points")
          .optionalChild("timing_fit", &KernelDataset::timingFit, TimingFitSpec::schema(),
                         "which kernels train the chip's launch gap (`scoville kernels` fits it and predicts the rest)")
          .optionalChild("attention_kernel", &KernelDataset::attentionKernel, AttentionKernelConfig::schema(),
                         "the attention kernel the attention kernels ran (tiles, MMA, flash-decoding); absent: exact "
                         "GEMMs padded to each kernel's query_block")
          .check("ids are unique and power loads name kernels", [](const KernelDataset& d, const Node& n) {
            checkUniqueIds(d.kernels, n.at("kernels"), "kernel");
            if (!d.power.empty()) checkUniqueIds(d.power, n.at("power"), "power");
            std::set<std::string> kernels;
            for (const MeasuredKernel& k : d.kernels) kernels.insert(k.id);
            if (d.attentionKernel) {
              // The kernel's tiles set the query blocks; a kernel's own would contradict them.
              for (std::size_t i = 0; i < d.kernels.size(); ++i) {
                n.at("kernels").at(i).rejectIfGiven(
                    "query_block",
                    "is set by the dataset's attention_kernel (its query_block and split_kv's); "
                    "drop one of them");
              }
            }
            for (std::size_t i = 0; i < d.power.size(); ++i) {
              const MeasuredPower& p = d.power[i];
              if (!p.kernel.empty() && kernels.count(p.kernel) == 0) {
                n.at("power").at(i).at("kernel").fail(
                    ErrorKind::kUnknownName,
                    fmt::format("power '{}' names kernel '{}', which the dataset does not have", p.id, p.kernel));
              }
            }
            if (d.timingFit) {
              std::set<std::string> compared;
              for (const MeasuredKernel& k : d.kernels) {
                if (k.exclude.empty()) compared.insert(k.id);
              }
              const Node training = n.at("timing_fit").at("training");
              std::set<std::string> seen;
              for (std::size_t i = 0; i < d.timingFit->training.size(); ++i) {
                const std::string& id = d.timingFit->training[i];
                if (compared.count(id) == 0) {
                  training.at(i).fail(
                      ErrorKind::kUnknownName,
                      fmt::format("{}: training kernel '{}' is not one of the dataset's compared kernels",
                                  training.at(i).path(), id));
                }
                if (!seen.insert(id).second) {
                  training.at(i).fail(ErrorKind::kInvalidConfig,
                                      fmt::format("training kernel '{}' is listed twice", id));
                }
              }
              if (d.timingFit->training.empty() || d.timingFit->training.size() * 2 > compared.size()) {
                training.fail(ErrorKind::kInvalidConfig,
                              fmt::format("{} training kernels of {} compared: the fit needs at least one, and at "
                                          "most half of them may train it, the rest are predicted",
                                          d.timingFit->training.size(), compared.size()));
              }
            }
            if (d.powerFit) {
              std::set<std::string> points;
              for (const MeasuredPower& p : d.power) points.insert(p.id);
              const std::optional<Node> included = config::resolveInclude(n.at("power_fit"));
              const Node fit = included ? *included : n.at("power_fit");
              for (std::size_t i = 0; i < d.powerFit->training.size(); ++i) {
                if (points.count(d.powerFit->training[i]) == 0) {
                  fit.at("training")
                      .at(i)
                      .fail(ErrorKind::kUnknownName,
                            fmt::format("training point '{}' is not one of the dataset's power "
                                        "points",
                                        d.powerFit->training[i]));
                }
              }
              std::set<std::string> fitted;
              for (std::size_t i = 0; i < d.powerFit->parameters.size(); ++i) {
                const PowerFitParameter& p = d.powerFit->parameters[i];
                const Node at = fit.at("parameters").at(i);
                const power::EnergyKey* key = power::findEnergyKey(p.key);
                if (key == nullptr) {
                  at.at("key").fail(ErrorKind::kUnknownName,
                                    fmt::format("'{}' is not a constant of a chip's `power` section", p.key));
                }
                if (!fitted.insert(p.key).second) {
                  at.at("key").fail(ErrorKind::kInvalidConfig, fmt::format("'{}' is fitted twice", p.key));
                }
                const double lo = config::readQuantity(at.at("min"), key->dimension, config::nonNegative());
                const double hi = config::readQuantity(at.at("max"), key->dimension, config::nonNegative());
                if (!(hi > lo)) {
                  at.at("max").fail(ErrorKind::kInvalidConfig,
                                    fmt::format("the range of '{}' is empty: max must be above min", p.key));
                }
              }
              for (std::size_t i = 0; i < d.powerFit->tied.size(); ++i) {
                const PowerFitTie& t = d.powerFit->tied[i];
                const Node at = fit.at("tied").at(i);
                if (power::findEnergyKey(t.key) == nullptr) {
                  at.at("key").fail(ErrorKind::kUnknownName,
                                    fmt::format("'{}' is not a constant of a chip's `power` section", t.key));
                }
                if (fitted.count(t.to) == 0) {
                  at.at("to").fail(ErrorKind::kUnknownName,
                                   fmt::format("'{}' is not one of the fitted parameters", t.to));
                }
                if (fitted.count(t.key) > 0) {
                  at.at("key").fail(ErrorKind::kInvalidConfig,
                                    fmt::format("'{}' is fitted, so it cannot also be tied", t.key));
                }
              }
              if (d.powerFit->training.size() * 2 > d.power.size()) {
                fit.at("training")
                    .fail(ErrorKind::kInvalidConfig,
                          fmt::format("{} training points of {}: at most half of the power points may "
                                      "train the fit, the rest are predicted",
                                      d.powerFit->training.size(), d.power.size()));
              }
            }
          });
  return s;
}

KernelDataset loadKernelDataset(const std::string& file) {
  return KernelDataset::schema().parse(config::loadConfigFile("kernels", file));
}

std::map<std::string, KernelClassSummary> summarizeKernels(const std::vector<KernelComparison>& comparisons) {
  std::map<std::string, KernelClassSummary> out;
  std::vector<MetricComparison> errors;
  std::map<std::string, std::array<double, 5>> sums;  // n, x, y, xx, xy with x simulated, y measured
  for (const KernelComparison& c : comparisons) {
    errors.push_back(MetricComparison{c.id, c.cls, c.measuredS, c.simulatedS, c.errorPercent});
    std::array<double, 5>& a = sums[c.cls];
    a[0] += 1.0;
    a[1] += c.simulatedS;
    a[2] += c.measuredS;
    a[3] += c.simulatedS * c.simulatedS;
    a[4] += c.simulatedS * c.measuredS;
  }
  for (const auto& [cls, error] : summarize(errors)) {
    KernelClassSummary& s = out[cls];
    s.error = error;
    const std::array<double, 5>& a = sums[cls];
    const double spread = a[0] * a[3] - a[1] * a[1];
    if (a[0] >= 2.0 && spread > 0.0) {
      const double slope = (a[0] * a[4] - a[1] * a[2]) / spread;
      if (slope > 0.0) {
        s.fitEfficiency = 1.0 / slope;
        s.fitOverheadS = (a[2] - slope * a[1]) / a[0];
      }
    }
  }
  return out;
}

}  // namespace scoville::workload
