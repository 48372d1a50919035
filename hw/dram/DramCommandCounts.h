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

  DramCommandCounts& operator+=(const DramCommandCounts& o) {
    activates += o.activates;
    precharges += o.precharges;
    rowHits += o.rowHits;
    rowMisses += o.rowMisses;
    rowConflicts += o.rowConflicts;
    readBursts += o.readBursts;
    writeBursts += o.writeBursts;
    refreshes += o.refreshes;
    bankRefreshes += o.bankRefreshes;
    turnarounds += o.turnarounds;
    return *this;
  }
  /// What was issued between `before` and this.
  DramCommandCounts since(const DramCommandCounts& before) const {
    DramCommandCounts d;
    d.activates = activates - before.activates;
    d.precharges = precharges - before.precharges;
    d.rowHits = rowHits - before.rowHits;
    d.rowMisses = rowMisses - before.rowMisses;
    d.rowConflicts = rowConflicts - before.rowConflicts;
    d.readBursts = readBursts - before.readBursts;
    d.writeBursts = writeBursts - before.writeBursts;
    d.refreshes = refreshes - before.refreshes;
    d.bankRefreshes = bankRefreshes - before.bankRefreshes;
    d.turnarounds = turnarounds - before.turnarounds;
    return d;
  }
};

}  // namespace scoville::hw
