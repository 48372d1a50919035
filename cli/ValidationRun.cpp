#include "cli/ValidationRun.h"

#include <fmt/format.h>

namespace scoville::cli {

RunRequest validationRunRequest(const workload::ValidationPoint& p, const std::string& outDir, bool baseline) {
  RunRequest request;
  request.inputs.platform = p.platform;
  request.inputs.model = p.model;
  request.inputs.scenario = p.scenario;
  request.out = outDir;
  request.quiet = true;
  std::vector<std::string>& sets = request.inputs.sets;
  if (p.gpus > 0) sets.push_back(fmt::format("platform.chips[0].count={}", p.gpus));
  sets.push_back(fmt::format("platform.placement.tp={}", p.tp));
  sets.push_back(fmt::format("platform.placement.pp={}", p.pp));
  sets.push_back(fmt::format("platform.placement.dp={}", p.dp));
  sets.push_back(fmt::format("platform.placement.ep={}", p.ep));
  if (p.isl > 0) sets.push_back(fmt::format("scenario.input_tokens={}", p.isl));
  if (p.osl > 0) sets.push_back(fmt::format("scenario.output_tokens={}", p.osl));
  sets.emplace_back("scenario.load.impl=closed_loop");
  sets.push_back(fmt::format("scenario.load.concurrency={}", p.concurrency));
  sets.push_back(fmt::format("scenario.requests={}", p.requests > 0 ? p.requests : p.concurrency));
  if (!p.stack.empty()) sets.push_back("scenario.software_stack=" + p.stack);
  const std::vector<std::string>& own = baseline && p.baseline ? p.baseline->sets : p.sets;
  sets.insert(sets.end(), own.begin(), own.end());
  return request;
}

std::optional<double> simulatedMetric(const RunReport& report, const workload::MeasuredMetric& m,
                                      workload::ThroughputAccounting accounting) {
  using workload::ValidationMetric;
  const bool window = accounting == workload::ThroughputAccounting::kWindow;
  const bool mean = m.statistic == "mean";  // median when empty
  const auto pick = [mean](const InferenceXMetrics::Statistics& s) { return mean ? s.mean : s.median; };
  const InferenceXMetrics& ix = report.inferenceX;
  switch (m.metric) {
    case ValidationMetric::kOutputThroughputPerGpu: return window ? report.windowOutputTputPerGpu : ix.outputTputPerGpu;
    case ValidationMetric::kThroughputPerGpu: return window ? report.windowTputPerGpu : ix.tputPerGpu;
    case ValidationMetric::kTpot: return pick(ix.tpot);
    case ValidationMetric::kTtft: return pick(ix.ttft);
    case ValidationMetric::kE2el: return pick(ix.e2el);
    case ValidationMetric::kInteractivity: return pick(ix.intvty);
    case ValidationMetric::kPowerPerGpu: return report.averageChipPowerW;
  }
  return std::nullopt;
}

}  // namespace scoville::cli
