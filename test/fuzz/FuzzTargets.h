#pragma once
// What the configuration fuzzer feeds: shared by the libFuzzer target and the unit test that
// replays test/fuzz/regressions/.

#include <cstdint>
#include <string>

#include "hw/kv/KvCacheConfig.h"
#include "hw/network/NetworkConfig.h"
#include "platforms/PlatformConfig.h"
#include "config/Loader.h"
#include "config/Units.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/Validation.h"

namespace scoville::test {

template <class Config>
void parseFuzzConfig(const char* root, const std::string& text) {
  (void)Config::schema().parse(config::loadConfigText(root, text, "fuzz.yaml"));
}

/// Parses `text` with the loader `selector` picks: a validation dataset when selector mod 7 is
/// 6, else (mod 6) platform, model, scenario, kv_cache, network, or the unit parser (so the
/// regressions kept from before validation datasets existed still reach their loader). Throws
/// config::ConfigError for bad input; a unit-parser error is swallowed. Anything else escaping
/// is a bug.
inline void parseFuzzInput(uint8_t selector, const std::string& text) {
  if (selector % 7 == 6) {
    parseFuzzConfig<workload::ValidationDataset>("validation", text);
    return;
  }
  switch (selector % 6) {
    case 0: parseFuzzConfig<platform::PlatformConfig>("platform", text); break;
    case 1: parseFuzzConfig<workload::ModelConfig>("model", text); break;
    case 2: parseFuzzConfig<workload::ScenarioConfig>("scenario", text); break;
    case 3: parseFuzzConfig<hw::KvCacheConfig>("kv_cache", text); break;
    case 4: parseFuzzConfig<hw::NetworkConfig>("network", text); break;
    default: try { (void)config::parseQuantity(text);
      } catch (const config::UnitError&) {
      }
      break;
  }
}

}  // namespace scoville::test
