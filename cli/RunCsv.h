#pragma once
// The CSV views a run writes beside report.json: one line per request of a serving run, and the
// power timeline (docs/report.md).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloads/ServingMetrics.h"

namespace scoville::cli {

/// requests.csv: every request the load sent, in id order, with its times (s from the run's
/// start) and latencies; an unfinished request has empty finish, TPOT and E2E latency.
std::string requestsCsv(const std::vector<workload::RequestRecord>& records);

/// power.csv: the report's power timeline (`power.timeline`): each interval's start, the
/// platform's average watts over it, and each chip's ("" when the report has no timeline).
std::string powerTimelineCsv(const nlohmann::ordered_json& power);

}  // namespace scoville::cli
