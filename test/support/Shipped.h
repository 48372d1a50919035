#pragma once
// The configuration files shipped in platforms/ and workloads/, parsed as the CLI parses them.

#include <string>

#include "platforms/PlatformConfig.h"
#include "config/Loader.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"

namespace scoville::test {

inline platform::PlatformConfig shippedPlatform(const std::string& name) {
  return platform::PlatformConfig::schema().parse(
      config::loadConfigFile("platform", config::resolveConfigFile("platform", "platforms", name)));
}

inline workload::ModelConfig shippedModel(const std::string& name) {
  return workload::ModelConfig::schema().parse(
      config::loadConfigFile("model", config::resolveConfigFile("model", "workloads/models", name)));
}

/// A decode_step scenario of `batch` requests holding `context` tokens each.
inline workload::ScenarioConfig decodeStep(int batch, int context) {
  workload::ScenarioConfig s;
  s.name = "test";
  s.description = "test";
  s.kind = workload::ScenarioKind::kDecodeStep;
  s.batch = batch;
  s.contextLength = context;
  return s;
}

}  // namespace scoville::test
