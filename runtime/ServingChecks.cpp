#include "runtime/ServingChecks.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "config/ConfigError.h"

namespace scoville::runtime {

using namespace workload;  // the scenario's configuration types

using config::ConfigError;
using config::ErrorKind;

namespace {

/// The serving block's two policies with their keys.
std::array<std::pair<const char*, const PhasePolicyConfig*>, 2> phasePolicies(const ServingPolicyConfig& serving) {
  return {{{"prefill_policy", &serving.prefill}, {"decode_policy", &serving.decode}}};
}

[[noreturn]] void servingPolicyError(const ScenarioConfig& scenario, const platform::PlatformConfig& config,
                                     const ScenarioFiles& files, const std::string& message) {
  throw ConfigError(ErrorKind::kInvalidConfig, files.scenario,
                    fmt::format("scenario '{}' on platform '{}': {}", scenario.name, config.name, message));
}

}  // namespace

void checkServingPolicy(const ScenarioConfig& scenario, const platform::PlatformConfig& config,
                        const ScenarioFiles& files) {
  const ServingPolicyConfig& serving = scenario.serving;
  const auto fail = [&](const std::string& message) { servingPolicyError(scenario, config, files, message); };
  const std::string placement = serving.kvPlacementPolicy(config.placement.kvCache.placement);
  if (KvPlacementMode::of(placement).offChip()) {
    const std::string where = serving.kvCachePlacement == ServingPolicyConfig::KvPlacement::kPlatform
                                  ? "the platform's placement.kv_cache.placement"
                                  : "serving.kv_cache_placement";
    if (config.placement.kvCache.preemption == hw::KvPreemption::kSwap) {
      fail(
          fmt::format("KV-cache placement '{}' ({}) with placement.kv_cache.preemption: swap is not modelled in "
                      "serving runs (swap moves blocks between local HBM and host only); use preemption: "
                      "recompute, or kv_cache_placement: local",
                      placement, where));
    }
    if (config.placement.disaggregation) {
      fail(
          fmt::format("KV-cache placement '{}' ({}) with prefill/decode disaggregation is not modelled in "
                      "serving runs (the prompt KV transfer lands in the decode chips' HBM); use "
                      "kv_cache_placement: local",
                      placement, where));
    }
  }
  const bool governed = config.power.governor.kind != power::GovernorKind::kNone;
  for (const auto& [key, policy] : phasePolicies(serving)) {
    if (governed && (policy->mayLowerClock() || policy->mayGate())) {
      fail(
          fmt::format("'serving.{}' ({}) sets the core clock or powers tensor arrays off, but the platform's "
                      "power.governor ({}) owns the core's operating point; use compute_opt or uniform at its "
                      "defaults, or set power.governor.impl: none",
                      key, phasePolicyName(policy->impl), files.platform.empty() ? config.name : files.platform));
    }
  }
}

void checkReplicaPolicy(const ScenarioConfig& scenario, const Replica& r, const platform::PlatformConfig& config,
                        const ScenarioFiles& files) {
  const ServingPolicyConfig& serving = scenario.serving;
  const auto fail = [&](const std::string& message) { servingPolicyError(scenario, config, files, message); };
  // Policies that never leave the nominal setting may run on any mix of chips.
  const bool trivial = !serving.prefill.mayLowerClock() && !serving.decode.mayLowerClock() &&
                       !serving.prefill.mayGate() && !serving.decode.mayGate();
  const std::string& type = config.chipConfig(r.chips.front()).name;
  for (int chip : r.chips) {
    if (!trivial && config.chipConfig(chip).name != type) {
      fail(
          fmt::format("replica {} mixes chip types '{}' and '{}'; phase policies set one operating point per "
                      "replica and need one chip type (use uniform policies at their defaults)",
                      r.index, type, config.chipConfig(chip).name));
    }
  }
  const hw::ChipConfig& chip = config.chipConfig(r.chips.front());
  for (const auto& [key, policy] : phasePolicies(serving)) {
    const std::size_t points = chip.power ? std::max<std::size_t>(1, chip.power->dvfs.size()) : 1;
    if (policy->dvfsPoint >= 0 && static_cast<std::size_t>(policy->dvfsPoint) >= points) {
      fail(
          fmt::format("'serving.{}.dvfs_point' is {}, but chip type '{}' has {} DVFS point(s) (power.dvfs; "
                      "0 is the nominal clock)",
                      key, policy->dvfsPoint, chip.name, points));
    }
    if (policy->activeArrays > chip.tensorCore.count) {
      fail(fmt::format("'serving.{}.active_arrays' is {}, but chip type '{}' has {} tensor arrays", key,
                       policy->activeArrays, chip.name, chip.tensorCore.count));
    }
    const bool gates = policy->impl == PhasePolicyImpl::kBandwidthOpt ||
                       (policy->activeArrays > 0 && policy->activeArrays < chip.tensorCore.count);
    if (gates && chip.tensorCore.impl != hw::TensorCoreImpl::kTlm) {
      fail(
          fmt::format("'serving.{}' ({}) powers tensor arrays off, which the RTL tensor core of chip type "
                      "'{}' (tensor_core.impl) cannot do",
                      key, phasePolicyName(policy->impl), chip.name));
    }
  }
}

}  // namespace scoville::runtime
