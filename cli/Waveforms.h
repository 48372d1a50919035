#pragma once
// The VCD waveforms of a run (`scoville run --vcd`): what each chip's units did in each interval
// of the trace window, its power and core clock, and the platform's (docs/trace.md).

#include <string>
#include <vector>

#include "platforms/Platform.h"
#include "trace/UnitActivity.h"
#include "workloads/ServingMetrics.h"

namespace scoville::cli {

/// `mirrorOf[c]`: the chip whose simulation chip c mirrors (-1: its own; empty: none mirror);
/// `records`: a serving run's requests (nullptr for a decode step).
std::string waveformsVcd(const trace::UnitActivity& activity, const platform::Platform& platform,
                         const std::vector<int>& mirrorOf, const std::vector<workload::RequestRecord>* records);

}  // namespace scoville::cli
