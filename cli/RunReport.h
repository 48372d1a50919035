#pragma once
// Reading a `scoville run` report.json back: the summary metrics other commands compare (validate)
// through one typed accessor, and whether a stored report stands for a run request (sweep), so
// that the key paths of those fields are written down once, here, beside the code that writes
// them (RunCommand.cpp's `inputs`; ServingReport.cpp's results.metrics, whose `inferencex` block
// workload::servingMetricsJson fills; power::PowerMonitor::report's `serving` block).
// docs/report.md describes the fields.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/RunRequest.h"

namespace scoville::cli {

/// A serving run's headline metrics under InferenceX's names (report.json
/// results.metrics.inferencex). Each is nothing when the report lacks it or holds no number there.
struct InferenceXMetrics {
  /// The mean and median of a distribution over requests.
  struct Statistics {
    std::optional<double> mean;
    std::optional<double> median;
  };
  std::optional<double> outputTputPerGpu;  ///< output tokens/s per chip (output_tput_per_gpu)
  std::optional<double> tputPerGpu;        ///< input + output tokens/s per chip (tput_per_gpu)
  Statistics ttft;                         ///< time to first token, s (mean_ttft, median_ttft)
  Statistics tpot;                         ///< time per output token, s (mean_tpot, median_tpot)
  Statistics e2el;                         ///< end-to-end latency, s (mean_e2el, median_e2el)
  Statistics intvty;                       ///< interactivity, tokens/s per user (mean_intvty, median_intvty)
};

/// The summary of a run's report that other commands read. Reading never throws: what the report
/// lacks (a decode-step report has no serving metrics, a platform without a power model no power)
/// is left empty.
struct RunReport {
  std::string kind;              ///< results.kind: serving or decode_step ("" when absent)
  InferenceXMetrics inferenceX;  ///< serving: results.metrics.inferencex (throughput per request)
  /// Serving: the steady-state rates inside the measurement window, tokens/s per chip
  /// (results.metrics.throughput_per_chip_tok_per_s output and total).
  std::optional<double> windowOutputTputPerGpu;
  std::optional<double> windowTputPerGpu;
  /// Serving with a power model: a chip's own average power over the measurement window, the
  /// switches' share left out (what a GPU's board telemetry reports), W
  /// (power.serving.average_chip_power_w).
  std::optional<double> averageChipPowerW;

  /// The summary of a parsed report.json.
  static RunReport fromJson(const nlohmann::json& report);

  /// The summary of the report.json at `path`; empty when it is missing or does not parse.
  static RunReport read(const std::string& path);
};

/// Why the report at `reportPath` cannot stand for the run `request` asks for ("" when it can):
/// missing, unreadable, another report schema or simulator version, other inputs (platform, model,
/// scenario as given, overrides as a set, seed, timing), or no results. The output directory and
/// the printing and tracing options are not inputs. `inputsDigest`, when given, is the request's
/// Inputs::digest already computed; otherwise the inputs are loaded again to compute it.
std::string reportMismatch(const RunRequest& request, const std::string& reportPath,
                           const std::string* inputsDigest = nullptr);

}  // namespace scoville::cli
