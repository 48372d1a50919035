#include "workloads/Validation.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "config/ConfigError.h"
#include "config/Loader.h"

namespace scoville::workload {

using config::ConfigError;
using config::ErrorKind;
using config::Node;
using config::optional;
using config::required;
using config::Schema;

namespace {

struct MetricInfo {
  ValidationMetric metric;
  const char* name;
  std::vector<std::pair<const char*, double>> units;  // accepted unit -> factor to SI
  bool hasStatistic;                                  // median or mean
};

const std::vector<MetricInfo>& metricInfos() {
  static const std::vector<MetricInfo> infos = {
      {ValidationMetric::kOutputThroughputPerGpu, "output_throughput_per_gpu", {{"tok/s/GPU", 1.0}}, false},
      {ValidationMetric::kThroughputPerGpu, "throughput_per_gpu", {{"tok/s/GPU", 1.0}}, false},
      {ValidationMetric::kTpot, "tpot", {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}}, true},
      {ValidationMetric::kTtft, "ttft", {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}}, true},
      {ValidationMetric::kE2el, "e2el", {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}}, true},
      {ValidationMetric::kInteractivity, "interactivity", {{"tok/s/user", 1.0}}, true},
      {ValidationMetric::kPowerPerGpu, "power_per_gpu", {{"W", 1.0}, {"kW", 1e3}}, false},
  };
  return infos;
}

const MetricInfo& infoOf(ValidationMetric metric) {
  for (const MetricInfo& i : metricInfos()) {
    if (i.metric == metric) return i;
  }
  return metricInfos().front();
}

std::vector<std::string> unitNames(const MetricInfo& info) {
  std::vector<std::string> names;
  for (const auto& [unit, factor] : info.units) names.emplace_back(unit);
  return names;
}

}  // namespace

const char* validationMetricName(ValidationMetric metric) {
  return infoOf(metric).name;
}

double MeasuredMetric::si() const {
  for (const auto& [name, factor] : infoOf(metric).units) {
    if (unit == name) return value * factor;
  }
  return value;
}

const Schema<MeasuredMetric>& MeasuredMetric::schema() {
  static const Schema<MeasuredMetric> s = [] {
    std::vector<std::pair<std::string, ValidationMetric>> names;
    std::vector<std::string> units;
    for (const MetricInfo& i : metricInfos()) {
      names.emplace_back(i.name, i.metric);
      units.push_back(fmt::format("{} ({})", i.name, fmt::join(unitNames(i), " or ")));
    }
    return Schema<MeasuredMetric>("validation_metric", "One measured value of a validation point.")
        .choice("name", &MeasuredMetric::metric, names, required(),
                "output_throughput_per_gpu and throughput_per_gpu (output, and input + output, tokens/s per GPU "
                "over the measurement window), tpot, ttft, e2el (latencies), interactivity (tokens/s per user), "
                "power_per_gpu (average power per GPU over the window)")
        .number("value", &MeasuredMetric::value, required(), config::positive(), "the measured value, in `unit`")
        .text("unit", &MeasuredMetric::unit, required(), fmt::format("the value's unit: {}", fmt::join(units, "; ")))
        .choice("statistic", &MeasuredMetric::statistic, {{"median", "median"}, {"mean", "mean"}}, optional("median"),
                "latencies and interactivity: the statistic over requests the value is (ignored for "
                "throughput and power)")
        .number("baseline_value", &MeasuredMetric::baselineValue, optional("0"), config::nonNegative(),
                "a point with a baseline: the value measured in the baseline configuration, in `unit`; the "
                "metric is compared as value / baseline_value against the ratio of the two runs")
        .text("not_comparable", &MeasuredMetric::notComparable, optional("~"),
              "why the published value does not measure what the simulator reports (e.g. an average over a log "
              "that includes the server's start-up): the metric is compared and listed, but left out of the MAPE")
        .check("unit is one the metric accepts", [](const MeasuredMetric& m, const Node& n) {
          const MetricInfo& info = infoOf(m.metric);
          for (const auto& [unit, factor] : info.units) {
            if (m.unit == unit) return;
          }
          n.at("unit").fail(ErrorKind::kBadUnit,
                            fmt::format("key '{}' = '{}' is not a unit of {}: use {}", n.at("unit").path(), m.unit,
                                        info.name, fmt::join(unitNames(info), " or ")));
        });
  }();
  return s;
}

const Schema<ValidationBaseline>& ValidationBaseline::schema() {
  static const Schema<ValidationBaseline> s =
      Schema<ValidationBaseline>("validation_baseline",
                                 "The run a point's metrics are divided by: the point's run with other --set options.")
          .textList("sets", &ValidationBaseline::sets, optional("[]"),
                    "the baseline run's --set options, in place of the point's `sets`");
  return s;
}

const Schema<ValidationPoint>& ValidationPoint::schema() {
  static const Schema<ValidationPoint> s =
      Schema<ValidationPoint>("validation_point",
                              "A measured configuration (as published, with its source) and the Scoville run that "
                              "stands for it.")
          .text("id", &ValidationPoint::id, required(), "unique name of the point in its dataset")
          .text("source", &ValidationPoint::source, required(), "where the numbers come from")
          .text("hardware", &ValidationPoint::hardware, required(), "the measured hardware, as published")
          .text("framework", &ValidationPoint::framework, required(), "the serving stack, as published")
          .text("precision", &ValidationPoint::precision, optional("~"), "as published; `sets` models it")
          .text("note", &ValidationPoint::note, optional("~"), "anything a reader of the comparison should know")
          .flag("uncertain", &ValidationPoint::uncertain, optional("false"),
                "the numbers are second-hand, read off a plot, or conflict between sources")
          .text("skip", &ValidationPoint::skip, optional("~"),
                "why the simulator cannot express the point; a skipped point is listed, never run")
          .text("fitted", &ValidationPoint::fitted, optional("~"),
                "what was fitted to this point besides its profile's calibrated_on (e.g. an engine setting its "
                "source does not publish, fitted here and used by other points): the point counts as fitted, "
                "not predicted")
          .text("platform", &ValidationPoint::platform, optional("~"), "platform name or file (required unless skip)")
          .text("model", &ValidationPoint::model, optional("~"), "model name or file (required unless skip)")
          .text("scenario", &ValidationPoint::scenario, optional("inferencex-1k1k"),
                "serving scenario name or file whose lengths and load the point overrides")
          .integer("gpus", &ValidationPoint::gpus, optional("0"), config::between(0, 1 << 16),
                   "chips of the platform's first chip group the point uses (0: all it has)")
          .integer("tp", &ValidationPoint::tp, optional("1"), config::between(1, 1 << 16), "tensor parallelism")
          .integer("pp", &ValidationPoint::pp, optional("1"), config::between(1, 1 << 16), "pipeline stages")
          .integer("dp", &ValidationPoint::dp, optional("1"), config::between(1, 1 << 16), "data-parallel replicas")
          .integer("ep", &ValidationPoint::ep, optional("1"), config::between(1, 1 << 16), "expert parallelism")
          .integer("isl", &ValidationPoint::isl, optional("0"), config::between(0, 1 << 24),
                   "prompt tokens per request (0: the scenario's)")
          .integer("osl", &ValidationPoint::osl, optional("0"), config::between(0, 1 << 24),
                   "output tokens per request (0: the scenario's)")
          .integer("concurrency", &ValidationPoint::concurrency, optional("0"), config::between(0, 1 << 20),
                   "closed-loop users over all replicas (required unless skip)")
          .integer("requests", &ValidationPoint::requests, optional("0"), config::between(0, 1 << 24),
                   "measured requests (0: as many as the concurrency)")
          .text("stack", &ValidationPoint::stack, optional("~"),
                "software-stack profile of its framework and hardware (workloads/stacks/), the same for every "
                "point of that framework and hardware; absent: the hardware alone")
          .choice("throughput", &ValidationPoint::throughput,
                  {{"per_request", ThroughputAccounting::kPerRequest}, {"window", ThroughputAccounting::kWindow}},
                  optional("per_request"),
                  "how its throughput metrics are counted: per_request (the measured requests' tokens over the "
                  "benchmark's duration, as InferenceX, benchmark_serving and trtllm-bench count) or window (the "
                  "steady-state rate inside the measurement window, standing for a run longer than the simulated one)")
          .textList("sets", &ValidationPoint::sets, optional("[]"),
                    "more --set options of the run, e.g. 'model.compute_precision=fp8'")
          .optionalChild("baseline", &ValidationPoint::baseline, ValidationBaseline::schema(),
                         "compare each metric as a ratio to this run (a speedup): every metric then gives "
                         "baseline_value")
          .childList("metrics", &ValidationPoint::metrics, MeasuredMetric::schema(), required(), "the measured values")
          .check("a point with a baseline gives every metric's baseline_value, one without gives none",
                 [](const ValidationPoint& p, const Node& n) {
                   for (std::size_t i = 0; i < p.metrics.size(); ++i) {
                     const bool given = p.metrics[i].baselineValue > 0.0;
                     if (given == p.baseline.has_value()) continue;
                     const Node at = n.at("metrics").at(i);
                     at.fail(ErrorKind::kInvalidConfig,
                             p.baseline ? fmt::format("'{}' needs baseline_value (above 0): point '{}' has a "
                                                      "baseline",
                                                      at.path(), p.id)
                                        : fmt::format("'{}.baseline_value' is given but point '{}' has no baseline",
                                                      at.path(), p.id));
                   }
                 })
          .check("a point that is run names its platform, model and concurrency",
                 [](const ValidationPoint& p, const Node& n) {
                   if (!p.skip.empty()) return;
                   for (const auto& [key, missing] :
                        {std::pair{"platform", p.platform.empty()}, std::pair{"model", p.model.empty()},
                         std::pair{"concurrency", p.concurrency == 0}}) {
                     if (missing) {
                       n.fail(ErrorKind::kMissingKey,
                              fmt::format("point '{}' ({}) is run, so it needs key '{}' (or a 'skip' reason)", p.id,
                                          n.path(), key));
                     }
                   }
                 });
  return s;
}

const Schema<ValidationDataset>& ValidationDataset::schema() {
  static const Schema<ValidationDataset> s =
      Schema<ValidationDataset>("validation", "Root of a validation dataset (workloads/validation/*.yaml).")
          .text("name", &ValidationDataset::name, required(), "dataset name, used in results")
          .text("description", &ValidationDataset::description, required(), "what the measurements are")
          .text("origin", &ValidationDataset::origin, optional("~"), "the file it was converted from")
          .childList("points", &ValidationDataset::points, ValidationPoint::schema(), required(), "the measurements")
          .check("point ids are unique",
                 [](const ValidationDataset& d, const Node& n) { checkUniqueIds(d.points, n.at("points"), "point"); });
  return s;
}

ValidationDataset loadValidationDataset(const std::string& file) {
  return ValidationDataset::schema().parse(config::loadConfigFile("validation", file));
}

std::map<std::string, MetricSummary> summarize(const std::vector<MetricComparison>& comparisons) {
  std::map<std::string, MetricSummary> out;
  for (const MetricComparison& c : comparisons) {
    if (!c.notComparable.empty()) continue;
    MetricSummary& s = out[c.metric];
    ++s.points;
    s.mape += std::abs(c.errorPercent);
    if (std::abs(c.errorPercent) > s.maxAbsErrorPercent || s.worstPoint.empty()) {
      s.maxAbsErrorPercent = std::abs(c.errorPercent);
      s.worstPoint = c.point;
    }
  }
  for (auto& [name, s] : out) s.mape /= static_cast<double>(s.points);
  return out;
}

}  // namespace scoville::workload
