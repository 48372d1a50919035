#pragma once
// What a DRAM channel issued, for statistics and energy (the power model prices these).

namespace scoville::hw {

/// DRAM commands and events issued, for statistics and energy.
struct DramCommandCounts {
  double activates = 0;
  double precharges = 0;
  double rowHits = 0;       ///< page found open
  double rowMisses = 0;     ///< bank was closed: ACT only
  double rowConflicts = 0;  ///< another row open: PRE + ACT
  double readBursts = 0;
  double writeBursts = 0;
  double refreshes = 0;      ///< all-bank refreshes, or their equivalents (RefreshPolicy.h)
  double bankRefreshes = 0;  ///< per-bank or same-bank REF commands
  double turnarounds = 0;
};

}  // namespace scoville::hw
