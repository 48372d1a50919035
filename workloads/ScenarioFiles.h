#pragma once
// The files a scenario refers to, resolved by the loader (cli/Inputs), and the platform file it
// runs on: what the serving run opens and names in its messages.

#include <string>

namespace scoville::workload {

/// Files a scenario refers to, resolved by the loader, and the platform file it runs on.
struct ScenarioFiles {
  std::string loadTrace;
  std::string routingTrace;
  std::string platform;  ///< the platform file (for messages about its keys); may be empty
  std::string scenario;  ///< the scenario file (for messages about its keys); may be empty
};

}  // namespace scoville::workload
