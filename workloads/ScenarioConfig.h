#pragma once

#include <string>

#include "tlm/config/Schema.h"

namespace scoville::workload {

enum class ScenarioKind { kDecodeStep };

/// What to run, as read from workloads/scenarios/*.yaml. Today: one decode step of a batch of
/// requests that already hold `context_length` tokens; serving loads arrive with the driver.
struct ScenarioConfig {
  std::string name;
  std::string description;
  ScenarioKind kind = ScenarioKind::kDecodeStep;
  int batch = 0;
  int contextLength = 0;

  static const config::Schema<ScenarioConfig>& schema();
};

}  // namespace scoville::workload
