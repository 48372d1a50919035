#pragma once
// The memory a run will need, estimated before elaboration from the platform's size, so that a
// platform too large for the machine is refused with the numbers instead of ending in bad_alloc
// after minutes (docs/performance.md#memory).

#include <string>
#include <vector>

#include "cli/Inputs.h"

namespace scoville::cli {

struct MemoryEstimate {
  struct Part {
    std::string name;
    double bytes = 0.0;
    std::string basis;  ///< how it was counted
  };
  std::vector<Part> parts;                     ///< what a run holds from its start: process, chips, fabric routes
  Part timelineBound;                          ///< the power timelines' most (power.max_bins fine bins per chip)
  double bytes() const;                        ///< the sum of parts
  std::vector<std::string> partsText() const;  ///< "NAME SIZE" of each part
};

/// The estimate for `inputs`: the process and its libraries and every chip's modules (constants
/// fitted on measured runs, docs/performance.md#memory), every ordered chip pair's static fabric
/// route (counted exactly from the fabric graph: a vector and its heap block per pair), and, as
/// a separate bound, every chip's power timeline at power.max_bins.
MemoryEstimate estimateRunMemory(const Inputs& inputs);

/// The --max-memory limit in bytes for `text` ("" or "auto": the machine's available memory, from
/// /proc/meminfo). Throws config::ConfigError for a bad value.
double memoryLimit(const std::string& text);

/// Throws config::ConfigError(kDoesNotFit) located at --max-memory, with every part, when the
/// parts exceed `limitBytes` or the timelines' bound alone does.
void checkMemory(const MemoryEstimate& estimate, double limitBytes, const std::string& limitText);

}  // namespace scoville::cli
