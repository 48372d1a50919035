#pragma once
// The results block of a serving run's report.json (docs/report.md) and its console summary.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "platforms/PlatformConfig.h"
#include "runtime/ServingEngine.h"
#include "workloads/ScenarioConfig.h"

namespace scoville::cli {

/// results for kind serving: load, placement, metrics (ours, InferenceX's and benchmark_serving's
/// names), step statistics per replica, KV cache, MoE routing imbalance, memory per chip, roofline
/// check. Only chips that serve count towards per-chip and per-kW rates. `samplingOff`: why the
/// caller asked for every step (the engine's own reason otherwise).
nlohmann::ordered_json servingResults(const runtime::ServingEngine& engine, const platform::PlatformConfig& platform,
                                      const workload::ScenarioConfig& scenario, const std::string& samplingOff = "");

/// The serving block as run (`serving_policy`) and what each phase did under it (`phases`): steps,
/// transitions, active arrays, clocks, achieved FLOP/s and HBM bandwidth against peak, and, with
/// a power model, energy, power per chip and energy per token (docs/report.md "Phases").
nlohmann::ordered_json servingPolicyResults(const runtime::ServingEngine& engine,
                                            const workload::ScenarioConfig& scenario);
nlohmann::ordered_json phaseResults(const runtime::ServingEngine& engine, const power::PowerMonitor& power,
                                    double endS);

void printServingSummary(std::ostream& out, const std::string& model, const platform::PlatformConfig& platform,
                         const workload::ScenarioConfig& scenario, const nlohmann::ordered_json& results,
                         const std::string& reportPath);

}  // namespace scoville::cli
