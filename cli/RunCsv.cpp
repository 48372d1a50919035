#include "cli/RunCsv.h"

#include <fmt/format.h>

namespace scoville::cli {

std::string requestsCsv(const std::vector<workload::RequestRecord>& records) {
  std::string csv =
      "id,user,replica,measured,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,tokens_produced,"
      "ttft_s,tpot_s,e2el_s,preemptions\n";
  for (const workload::RequestRecord& r : records) {
    const bool started = !r.tokenTimes.empty();
    const bool finished = r.tokenTimes.size() == r.outputTokens;
    const auto time = [](bool known, double t) { return known ? fmt::format("{}", t) : std::string(); };
    const bool hasTpot = finished && r.outputTokens > 1;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.id, r.user, r.replica, r.measured ? 1 : 0,
                       r.arrival, time(started, r.firstToken), time(finished, r.finish), r.inputTokens, r.outputTokens,
                       r.tokenTimes.size(), time(started, r.firstToken - r.arrival),
                       time(hasTpot, (r.finish - r.firstToken) / static_cast<double>(r.outputTokens - 1)),
                       time(finished, r.finish - r.arrival), r.preemptions);
  }
  return csv;
}

std::string powerTimelineCsv(const nlohmann::ordered_json& power) {
  if (!power.contains("timeline")) return "";
  const nlohmann::ordered_json& timeline = power.at("timeline");
  const double interval = timeline.at("interval_s").get<double>();
  const nlohmann::ordered_json& platform = timeline.at("platform_w");
  std::string csv = "start_s,platform_w";
  for (const auto& [chip, watts] : timeline.at("chips_w").items()) csv += "," + chip + "_w";
  csv += "\n";
  for (std::size_t i = 0; i < platform.size(); ++i) {
    csv += fmt::format("{},{}", interval * static_cast<double>(i), platform[i].get<double>());
    for (const auto& [chip, watts] : timeline.at("chips_w").items())
      csv += fmt::format(",{}", watts.at(i).get<double>());
    csv += "\n";
  }
  return csv;
}

}  // namespace scoville::cli
