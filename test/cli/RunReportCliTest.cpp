// The contract between `scoville run` and the commands that start runs and read their reports
// (sweep, validate): cli/RunRequest.h and cli/RunReport.h, end to end through the executable.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "cli/RunReport.h"
#include "cli/RunRequest.h"
#include "test/cli/ServingCliFixture.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

class RunReportCliTest : public ServingCliFixture {};

// A run started from a RunRequest (the argv sweep and validate give their child runs) writes a
// report whose summary reads back whole through RunReport (the accessor validate compares with):
// a renamed or moved field fails here rather than leaving a validation point without its metric.
TEST_F(RunReportCliTest, AReportReadsBackThroughRunReport) {
  cli::RunRequest request;
  request.inputs.model = "tiny-dense";
  request.inputs.scenario = "inferencex-1k1k";
  request.inputs.sets = {"scenario.load.concurrency=4", "scenario.requests=8", "scenario.input_tokens=512",
                         "scenario.output_tokens=32", "scenario.random_range_ratio=1"};
  request.out = dir.file("req");
  request.quiet = true;
  const ProcessResult run = runScoville(request.commandLine());
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, "") << "quiet";
  const Json report = Json::parse(readFile(dir.file("req/report.json")));
  const cli::RunReport r = cli::RunReport::read(dir.file("req/report.json"));
  EXPECT_EQ(r.kind, "serving");
  const cli::InferenceXMetrics& ix = r.inferenceX;
  for (const auto& [name, value] :
       std::vector<std::pair<const char*, std::optional<double>>>{{"output_tput_per_gpu", ix.outputTputPerGpu},
                                                                  {"tput_per_gpu", ix.tputPerGpu},
                                                                  {"mean_ttft", ix.ttft.mean},
                                                                  {"median_ttft", ix.ttft.median},
                                                                  {"mean_tpot", ix.tpot.mean},
                                                                  {"median_tpot", ix.tpot.median},
                                                                  {"mean_e2el", ix.e2el.mean},
                                                                  {"median_e2el", ix.e2el.median},
                                                                  {"mean_intvty", ix.intvty.mean},
                                                                  {"median_intvty", ix.intvty.median},
                                                                  {"average_chip_power_w", r.averageChipPowerW}}) {
    ASSERT_TRUE(value.has_value()) << name;
    EXPECT_GT(*value, 0.0) << name;
  }
  // The same quantities under the report's other names.
  const Json& metrics = report["results"]["metrics"];
  const double chips = metrics["chips"].get<double>();
  EXPECT_DOUBLE_EQ(*ix.outputTputPerGpu * chips, metrics["completed_throughput_tok_per_s"]["output"].get<double>());
  EXPECT_DOUBLE_EQ(*ix.tputPerGpu * chips, metrics["completed_throughput_tok_per_s"]["total"].get<double>());
  EXPECT_DOUBLE_EQ(*r.windowOutputTputPerGpu * chips, metrics["throughput_tok_per_s"]["output"].get<double>());
  EXPECT_DOUBLE_EQ(*r.windowTputPerGpu * chips, metrics["throughput_tok_per_s"]["total"].get<double>());
  EXPECT_DOUBLE_EQ(*ix.ttft.median, metrics["ttft_s"]["median"].get<double>());
  EXPECT_DOUBLE_EQ(*ix.tpot.mean, metrics["tpot_s"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(*ix.e2el.median, metrics["e2el_s"]["median"].get<double>());
  EXPECT_DOUBLE_EQ(*ix.intvty.median, metrics["interactivity_tok_per_s_per_user"].get<double>());
  EXPECT_EQ(report["inputs"]["overrides"].size(), request.inputs.sets.size());
}

}  // namespace
}  // namespace scoville::test
