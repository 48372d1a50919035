#pragma once
// Where an activity event came from, read from its source's module name: the traces and the
// waveforms group events by chip and unit.

#include <string>

namespace scoville::trace {

struct UnitName {
  int chip = -1;     ///< N of "platform.chipN.UNIT"; -1 for a module outside the chips (switch, fabric)
  std::string unit;  ///< UNIT ("tensor_core", "hbm", ...), or the module's name without "platform."
};

/// "platform.chip3.hbm" -> {3, "hbm"}; "platform.switch0" -> {-1, "switch0"}.
UnitName unitNameOf(const std::string& source);

}  // namespace scoville::trace
