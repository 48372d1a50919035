#pragma once
// The thread blocks of a fused kernel (a flash-attention kernel): how its work divides into
// blocks that each run on one compute unit of the chip, and how many of them a unit holds at
// once. A transaction that carries one (OpExtension::grid) is timed by its modules as the grid's
// schedule on their compute units (hw/GridSchedule.h), not as work spread evenly over them.

#include <cstdint>
#include <vector>

namespace scoville::tlm {

struct WorkGrid {
  /// `count` blocks of `iterations` equal steps each, consecutive in launch order.
  struct Run {
    uint32_t count = 0;
    uint32_t iterations = 0;
  };
  std::vector<Run> runs;  ///< in launch order
  int slotsPerUnit = 1;   ///< blocks resident on one compute unit at once (occupancy)

  uint64_t blocks() const {
    uint64_t n = 0;
    for (const Run& r : runs) n += r.count;
    return n;
  }
  uint64_t iterations() const {
    uint64_t n = 0;
    for (const Run& r : runs) n += uint64_t{r.count} * r.iterations;
    return n;
  }
  /// Appends `count` blocks of `iterations` steps, merged into the last run when alike.
  void add(uint32_t count, uint32_t iterations) {
    if (count == 0 || iterations == 0) return;
    if (!runs.empty() && runs.back().iterations == iterations) {
      runs.back().count += count;
    } else {
      runs.push_back(Run{count, iterations});
    }
  }

  // The schedule's stretch on the last unit count asked for (hw::gridStretch caches it here: a
  // grid is immutable once planned and its ops' transactions ask for it many times).
  mutable int cachedUnits = 0;
  mutable double cachedStretch = 1.0;
};

}  // namespace scoville::tlm
