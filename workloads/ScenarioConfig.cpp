#include "workloads/ScenarioConfig.h"

namespace scoville::workload {

using namespace scoville::config;

const Schema<ScenarioConfig>& ScenarioConfig::schema() {
  static const Schema<ScenarioConfig> s =
      Schema<ScenarioConfig>("scenario", "Root of a scenario file (workloads/scenarios/*.yaml).")
          .text("name", &ScenarioConfig::name, required(), "scenario name, used in reports")
          .text("description", &ScenarioConfig::description, required(), "one line on what is measured")
          .choice("kind", &ScenarioConfig::kind, {{"decode_step", ScenarioKind::kDecodeStep}}, required(),
                  "decode_step: generate one token for each request of a batch")
          .integer("batch", &ScenarioConfig::batch, required(), between(1, 1 << 16), "requests decoded together")
          .integer("context_length", &ScenarioConfig::contextLength, required(), between(1, 1 << 24),
                   "tokens already in each request's KV cache");
  return s;
}

}  // namespace scoville::workload
