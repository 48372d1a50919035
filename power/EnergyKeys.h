#pragma once
// The constants of a chip type's `power` section by key, for what sets them by name: the
// calibration fit (`scoville calibrate-power`) and its tests. Each key names one value in SI
// units and its dimension.

#include <string>
#include <vector>

#include "config/Units.h"
#include "power/PowerConfig.h"

namespace scoville::power {

struct EnergyKey {
  std::string key;  ///< as written under `power`, e.g. "memory_interface.read_energy"
  config::Dimension dimension;
  /// The value in `energy`; null when the section lacks the level (an `llc` key without `llc`).
  double* (*value)(ChipEnergyConfig& energy);
};

/// Every key a fit may set, in the order of the schema.
const std::vector<EnergyKey>& energyKeys();
/// The key named `key`, or null.
const EnergyKey* findEnergyKey(const std::string& key);

}  // namespace scoville::power
