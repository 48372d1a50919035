// A serving run traced and recorded as waveforms, through the scoville executable: the Perfetto
// trace shows every unit's transactions inside its window, its lanes never overlap, the VCD's
// signals stay within physical bounds, and neither changes a byte of the report.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class ServingTraceCliTest : public ServingCliFixture {};

TEST_F(ServingTraceCliTest, TraceShowsEachUnitsTransactionsInItsWindowAndChangesNoResult) {
  // Two chips of tensor parallelism: compute, memory, fabric ports and the switch all appear.
  const auto args = join(
      {"-m", "tiny-dense", "-p", "jalapeno-8", "--set", "platform.placement.tp=2", "--set", "platform.placement.dp=4"},
      smallLoad(2, 2, 256, 16));
  // A trace simulates every step (no sampled decode steps): so does the run it is compared with.
  const Json plain = serve("plain", join(args, {"--sample-period", "1"}));
  const std::string trace = dir.file("trace/run.json");
  const std::string vcd = dir.file("trace/run.vcd");
  const Json traced =
      serve("traced", join(args, {"--sample-period", "1", "--trace", trace, "--trace-start", "0.1 ms",
                                  "--trace-duration", "0.2 ms", "--vcd", vcd, "--vcd-interval", "5 us"}));
  EXPECT_EQ(readFile(dir.file("traced/report.json")), readFile(dir.file("plain/report.json")))
      << "tracing and waveforms only listen";

  const Json t = Json::parse(readFile(trace));
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  std::set<std::string> categories;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    EXPECT_GE(dur, 0.0);
    if (e["cat"] != "request") {
      EXPECT_GE(ts + dur, 100.0 - 1e-6) << "ends before the window";
      EXPECT_LE(ts, 300.0 + 1e-6) << "starts after the window";
    }
    lanes[{e["pid"], e["tid"]}].emplace_back(ts, dur);
    categories.insert(e["cat"].get<std::string>());
  }
  std::set<std::string> names;
  for (const auto& [key, name] : threads) names.insert(processes[key.first] + "/" + name);
  // Rank 1 mirrors rank 0's compute and memory (docs/serving.md); its fabric traffic is its own.
  for (const char* track : {"chip0/tensor_core", "chip0/vector_unit", "chip0/hbm", "chip0/fabric send",
                            "chip1/fabric receive", "network/switch0", "requests/requests"}) {
    EXPECT_EQ(names.count(track), 1u) << track;
  }
  EXPECT_EQ(names.count("chip1/tensor_core"), 0u);
  EXPECT_TRUE(categories.count("decode")) << "decode steps run in the window";
  // A viewer needs the slices of one track to be disjoint.
  for (auto& [key, slices] : lanes) {
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i) {
      EXPECT_GE(slices[i].first, slices[i - 1].first + slices[i - 1].second - 1e-3) << threads[key];
    }
  }
  EXPECT_EQ(t["otherData"]["slices_dropped"], 0);

  // The waveforms: 40 samples of 5 us per signal; no unit beyond its peak; every chip's power at
  // least its idle floor; at most the two users' requests in flight.
  const std::string waves = readFile(vcd);
  std::map<std::string, std::string> ids;  // "chip0.power_w" -> id
  std::map<std::string, std::vector<double>> values;
  std::istringstream in(waves);
  std::string scope;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first, type, width, id, name;
    words >> first;
    if (first == "$scope") words >> type >> scope;
    if (first == "$var") {
      words >> type >> width >> id >> name;
      ids[scope + "." + name] = id;
    }
    if (first.size() > 1 && first[0] == 'r') {
      words >> id;
      values[id].push_back(std::stod(first.substr(1)));
    }
  }
  ASSERT_EQ(ids.count("chip7.power_w"), 1u) << waves.substr(0, 2000);
  ASSERT_EQ(ids.count("platform.requests_in_flight"), 1u);
  for (int c = 0; c < 8; ++c) {
    const std::string chip = "chip" + std::to_string(c);
    for (const char* unit : {"tensor_core_utilization", "vector_unit_utilization", "hbm_bandwidth_utilization"}) {
      for (const double v : values[ids[chip + "." + unit]]) {
        EXPECT_GE(v, 0.0) << chip << " " << unit;
        EXPECT_LE(v, 1.0 + 1e-9) << chip << " " << unit << ": beyond the unit's peak";
      }
    }
    for (const double w : values[ids[chip + ".power_w"]]) EXPECT_GE(w, 100.0) << chip;
  }
  double busiest = 0.0;
  for (const double v : values[ids["chip0.hbm_bandwidth_utilization"]]) busiest = std::max(busiest, v);
  EXPECT_GT(busiest, 0.1) << "decode streams the weights";
  for (const double n : values[ids["platform.requests_in_flight"]]) EXPECT_LE(n, 2.0);

  const ProcessResult bad = runScoville(join({"run", "-q", "-s", "inferencex-8k1k", "--out", dir.file("bad"), "--trace",
                                              trace, "--trace-duration", "2 furlongs"},
                                             args));
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("--trace-duration 2 furlongs"), std::string::npos) << bad.err;
  const ProcessResult tooFine = runScoville(join(
      {"run", "-q", "-s", "inferencex-8k1k", "--out", dir.file("bad"), "--vcd", vcd, "--vcd-interval", "1 ps"}, args));
  EXPECT_EQ(tooFine.exitCode, 2);
  EXPECT_NE(tooFine.err.find("--vcd-interval 1 ps"), std::string::npos) << tooFine.err;
  EXPECT_FALSE(fs::exists(dir.file("bad/report.json")));
}

}  // namespace
}  // namespace scoville::test
