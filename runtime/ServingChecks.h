#pragma once
// The checks of a scenario's serving block against the platform, and against each replica's
// chips, before a serving run is elaborated. Each throws config::ConfigError (kInvalidConfig)
// naming the scenario file, the key and what would be needed.

#include "platforms/PlatformConfig.h"
#include "runtime/Replica.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ScenarioFiles.h"

namespace scoville::runtime {

/// Off-chip KV placement with swap preemption or disaggregation, and phase policies that set the
/// clock or gate arrays on a platform whose power governor owns the operating point.
void checkServingPolicy(const workload::ScenarioConfig& scenario, const platform::PlatformConfig& config,
                        const workload::ScenarioFiles& files);

/// Phase policies against replica `r`'s chips: one chip type unless the policies are trivial,
/// DVFS points and active arrays that exist, and no gating of an RTL tensor core.
void checkReplicaPolicy(const workload::ScenarioConfig& scenario, const Replica& r,
                        const platform::PlatformConfig& config, const workload::ScenarioFiles& files);

}  // namespace scoville::runtime
