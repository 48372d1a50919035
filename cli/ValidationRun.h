#pragma once
// How `scoville validate` turns a validation point (workload::ValidationPoint, pure data) into a
// run, and reads the simulated value of a measured metric from that run's report. The run's
// options come from RunRequest and the report's fields from RunReport, so neither the run
// command's syntax nor the report's key paths appear here (docs/validation.md).

#include <optional>
#include <string>

#include "cli/RunReport.h"
#include "cli/RunRequest.h"
#include "workloads/Validation.h"

namespace scoville::cli {

/// The quiet `scoville run` that stands for `point`, writing into `outDir`: its platform, model and
/// scenario, the chips of the first chip group, the parallelism, the lengths, a closed-loop load of
/// its concurrency, its software stack, then its own `sets`.
/// `baseline`: the point's baseline run (its baseline.sets in place of its sets).
RunRequest validationRunRequest(const workload::ValidationPoint& point, const std::string& outDir,
                                bool baseline = false);

/// The simulated value of `metric` (its `statistic`, median when empty, for latencies and
/// interactivity) in `report`, in SI units; nothing when the report lacks it (a decode-step
/// report, or power without a power model). Throughput metrics are counted as `accounting` says.
std::optional<double> simulatedMetric(
    const RunReport& report, const workload::MeasuredMetric& metric,
    workload::ThroughputAccounting accounting = workload::ThroughputAccounting::kPerRequest);

}  // namespace scoville::cli
