#pragma once
// The results block of a serving run's report.json (docs/report.md) and its console summary.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "platforms/PlatformConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ServingEngine.h"

namespace scoville::cli {

/// results for kind serving: load, placement, metrics (ours, InferenceX's and benchmark_serving's
/// names), step statistics per replica, KV cache, MoE routing imbalance, memory per chip, roofline
/// check. Only chips that serve count towards per-chip and per-kW rates.
nlohmann::ordered_json servingResults(const workload::ServingEngine& engine, const platform::PlatformConfig& platform,
                                      const workload::ScenarioConfig& scenario);

void printServingSummary(std::ostream& out, const std::string& model, const platform::PlatformConfig& platform,
                         const workload::ScenarioConfig& scenario, const nlohmann::ordered_json& results,
                         const std::string& reportPath);

}  // namespace scoville::cli
