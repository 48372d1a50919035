#pragma once
// How long a fused kernel's thread blocks (tlm::WorkGrid) take on a chip's compute units: the
// hardware block scheduler places blocks in launch order, filling each unit's slots round-robin,
// then gives each freed slot the next block. A block issues at most 1 / slotsPerUnit of its unit's
// rate: its own warps cannot hide their latencies (a flash-attention block's tensor-core work waits
// on its own softmax and loads), and a unit reaches its full rate only with all its slots filled.
// The resident blocks share the unit equally up to that (processor sharing). Waves that leave units
// idle or half-filled (wave quantisation) and blocks of unequal work (a causal attention's query
// blocks) make the kernel take longer than its work spread evenly over the units; that ratio is the
// stretch the tensor core and the vector unit apply to the cycles of a transaction carrying the
// grid.

#include "tlm/WorkGrid.h"

namespace scoville::hw {

/// Makespan of `grid` on `units` compute units, in iterations at a unit's full rate (a block alone
/// on a unit runs one iteration in slotsPerUnit). At least grid.iterations() / units.
double gridMakespan(const tlm::WorkGrid& grid, int units);

/// gridMakespan / (grid.iterations() / units): 1 for a grid that fills every unit evenly, more for
/// idle units and unequal blocks. 1 for an empty grid or units < 1.
double gridStretch(const tlm::WorkGrid& grid, int units);

}  // namespace scoville::hw
