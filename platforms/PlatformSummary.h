#pragma once
// Derived totals and views of a platform, for `scoville platform show` and reports.

#include <nlohmann/json.hpp>
#include <ostream>

#include "platforms/PlatformConfig.h"

namespace scoville::platform {

/// Bytes/s per direction across the worst balanced cut of the chips: a single-stage switched
/// network is non-blocking, so the cut is the smaller half's injection bandwidth; graph topologies
/// use hw::bisectionBandwidth; one chip has none.
double bisectionBandwidth(const PlatformConfig& config);

/// {"name", "description", "chips", "chip_types": [...], "network": {...}, "host": {...},
///  "placement": {...}, "totals": {"peak_flops_per_s": {precision: FLOP/s}, "hbm_bandwidth_bytes_per_s",
///  "hbm_capacity_bytes", "sram_capacity_bytes", "fabric_injection_bytes_per_s",
///  "bisection_bandwidth_bytes_per_s", "host_memory_bytes", "rated_power_w"}}
nlohmann::ordered_json summarize(const PlatformConfig& config);

/// Human-readable tree of the platform (chip types, network, host, placement) with its totals.
void printTree(std::ostream& out, const PlatformConfig& config);

/// Graphviz DOT of the topology: chips as boxes, switches as ellipses, link bundles as edges
/// labelled with their bandwidth per direction.
void printDot(std::ostream& out, const PlatformConfig& config);

}  // namespace scoville::platform
