#pragma once
// Validation datasets: measured serving results of real systems (hardware, GPU count,
// parallelism, framework, ISL/OSL, load, metrics, source) with the run each stands for, and the
// statistics of the comparison. Pure data: `scoville validate` (cli/ValidateCommand.cpp) turns a
// point into a run and reads the simulated values from its report (cli/ValidationRun.h), one
// process per point. Format: docs/validation.md.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/ConfigError.h"
#include "config/Node.h"
#include "config/Schema.h"

namespace scoville::workload {

/// A metric a dataset may give (cli::simulatedMetric reads its simulated value from a report).
enum class ValidationMetric {
  kOutputThroughputPerGpu,  ///< output tokens/s per GPU over the measurement window
  kThroughputPerGpu,        ///< input + output tokens/s per GPU
  kTpot,                    ///< time per output token (median or mean)
  kTtft,                    ///< time to first token
  kE2el,                    ///< end-to-end latency
  kInteractivity,           ///< tokens/s per user (median or mean)
  kPowerPerGpu,             ///< average power per chip over the window
};

/// Stable name of a metric in datasets and results: output_throughput_per_gpu, throughput_per_gpu,
/// tpot, ttft, e2el, interactivity, power_per_gpu.
const char* validationMetricName(ValidationMetric metric);

/// One measured value.
struct MeasuredMetric {
  ValidationMetric metric = ValidationMetric::kOutputThroughputPerGpu;
  double value = 0.0;     ///< as published, in `unit`
  std::string unit;       ///< one the metric accepts (tok/s/GPU; s, ms or us; tok/s/user; W or kW)
  std::string statistic;  ///< median or mean (latencies and interactivity)
  /// With the point's baseline: the value measured in the baseline configuration (same unit).
  /// The comparison is then of value / baseline_value against the two runs' ratio.
  double baselineValue = 0.0;
  /// Non-empty: why the measured value is not the quantity the simulator reports (an average over
  /// a log that includes the server's start-up, ...). The metric is compared and shown, but left
  /// out of the MAPE, so a number known to measure something else cannot move the verdict.
  std::string notComparable{};
  double si() const;  ///< value in the report's unit (seconds, tokens/s, watts)

  static const config::Schema<MeasuredMetric>& schema();
};

/// How a point's throughput metrics are counted (docs/serving.md#throughput-accounting).
enum class ThroughputAccounting {
  kPerRequest,  ///< the measured requests' tokens over the benchmark's duration (InferenceX, benchmark_serving)
  kWindow,      ///< the steady-state rate of the work done inside the measurement window
};

/// A point's baseline: the same run with other --set options (e.g. without speculative
/// decoding), whose simulated metrics divide the point's (a speedup compared with a published one).
struct ValidationBaseline {
  std::vector<std::string> sets;  ///< the baseline run's --set options, in place of the point's `sets`

  static const config::Schema<ValidationBaseline>& schema();
};

/// One measured configuration and the run that stands for it.
struct ValidationPoint {
  std::string id;         ///< unique in the dataset
  std::string source;     ///< where the numbers come from
  std::string hardware;   ///< as published
  std::string framework;  ///< serving stack as published (TensorRT-LLM, vLLM, SGLang, ...)
  std::string precision;  ///< as published; `sets` says how the run models it
  std::string note;
  bool uncertain = false;  ///< second-hand or conflicting numbers
  std::string skip;        ///< non-empty: why the simulator cannot express the point (it is not run)
  /// Non-empty: what was fitted to this point besides its profile's calibrated_on (an engine
  /// setting its source does not publish); the point is then fitted, not predicted.
  std::string fitted;
  // The run.
  std::string platform;  ///< shipped name or file
  std::string model;     ///< shipped name or file
  std::string scenario = "inferencex-1k1k";
  int gpus = 0;  ///< chips of the platform's first chip group used (0: as the platform has them)
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
  int isl = 0;          ///< prompt tokens (0: the scenario's)
  int osl = 0;          ///< output tokens (0: the scenario's)
  int concurrency = 0;  ///< closed-loop users over all replicas
  int requests = 0;     ///< measured requests (0: = concurrency)
  std::string stack;    ///< software-stack profile (scenario.software_stack; "" : none)
  ThroughputAccounting throughput = ThroughputAccounting::kPerRequest;
  std::vector<std::string> sets;               ///< more --set options (precision, scheduler, ...)
  std::optional<ValidationBaseline> baseline;  ///< compare ratios to this run (metrics give baseline_value)
  std::vector<MeasuredMetric> metrics;

  static const config::Schema<ValidationPoint>& schema();
};

struct ValidationDataset {
  std::string name;
  std::string description;
  std::string origin;  ///< the file it was converted from, if any
  std::vector<ValidationPoint> points;

  static const config::Schema<ValidationDataset>& schema();
};

/// Fails at `list`'s item holding the first id already used by an earlier item of `items` (each
/// with an `id`), naming `what` ("point", "kernel"). For the datasets' schema checks.
template <class T>
void checkUniqueIds(const std::vector<T>& items, const config::Node& list, const char* what) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!seen.insert(items[i].id).second) {
      list.at(i).at("id").fail(config::ErrorKind::kInvalidConfig,
                               std::string(what) + " id '" + items[i].id + "' is used twice");
    }
  }
}

/// Loads and checks a dataset (ConfigError naming the file and key): unique ids, run fields on
/// every point that is not skipped.
ValidationDataset loadValidationDataset(const std::string& file);

/// One point's comparison: per metric the measured and simulated values and the signed error.
struct MetricComparison {
  std::string point;
  std::string metric;
  double measured = 0.0;        ///< SI
  double simulated = 0.0;       ///< SI
  double errorPercent = 0.0;    ///< (simulated - measured) / measured x 100
  std::string notComparable{};  ///< the measured metric's not_comparable reason ("" : it counts)
};

/// Per metric over the points: count, mean absolute percentage error, the worst point.
struct MetricSummary {
  std::size_t points = 0;
  double mape = 0.0;
  double maxAbsErrorPercent = 0.0;
  std::string worstPoint;
};

/// The comparisons marked not comparable are left out.
std::map<std::string, MetricSummary> summarize(const std::vector<MetricComparison>& comparisons);

}  // namespace scoville::workload
