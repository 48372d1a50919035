// Reading a run's report back (cli/RunReport.h): the serving metrics block as
// workload::servingMetricsJson writes it reads back field by field, what a report lacks reads as
// nothing, and a validation metric picks its field and statistic. The end-to-end check on a real
// report is ServingCliTest.AReportReadsBackThroughRunReport.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/ReportWriter.h"
#include "cli/RunReport.h"
#include "cli/ValidationRun.h"
#include "config/ConfigError.h"
#include "workloads/ServingMetrics.h"

namespace scoville::cli {
namespace {

using workload::MeasuredMetric;
using workload::ValidationMetric;

workload::RequestRecord record(uint64_t id, double arrival, std::vector<double> tokens, uint64_t input) {
  workload::RequestRecord r;
  r.id = id;
  r.arrival = arrival;
  r.inputTokens = input;
  r.outputTokens = tokens.size();
  r.firstToken = tokens.front();
  r.finish = tokens.back();
  r.tokenTimes = std::move(tokens);
  r.measured = true;
  return r;
}

/// A serving report's two blocks that RunReport reads: results (with the metrics as
/// servingMetricsJson writes them) and power.serving.
nlohmann::json servingReport(const workload::ServingMetrics& m, int chips, double averageChipPowerW) {
  return {{"results", {{"kind", "serving"}, {"metrics", workload::servingMetricsJson(m, chips, 1000.0 * chips)}}},
          {"power", {{"serving", {{"average_chip_power_w", averageChipPowerW}}}}}};
}

TEST(RunReport, ReadsBackTheServingMetricsAsTheyAreWritten) {
  const workload::ServingMetrics m =
      workload::computeServingMetrics({record(1, 0.0, {0.5, 0.75, 1.0}, 100),
                                       record(2, 0.25, {1.0, 1.5, 2.0, 2.5}, 300), record(3, 0.5, {0.75, 1.0}, 200)},
                                      {0.0, 3.0});
  const RunReport r = RunReport::fromJson(servingReport(m, 4, 275.0));
  EXPECT_EQ(r.kind, "serving");
  const InferenceXMetrics& ix = r.inferenceX;
  ASSERT_TRUE(ix.outputTputPerGpu && ix.tputPerGpu);
  EXPECT_DOUBLE_EQ(*ix.outputTputPerGpu, m.completedOutputThroughput / 4);
  EXPECT_DOUBLE_EQ(*ix.tputPerGpu, m.completedTotalThroughput / 4);
  ASSERT_TRUE(r.windowOutputTputPerGpu && r.windowTputPerGpu);
  EXPECT_DOUBLE_EQ(*r.windowOutputTputPerGpu, m.outputThroughput / 4);
  EXPECT_DOUBLE_EQ(*r.windowTputPerGpu, m.totalThroughput / 4);
  const auto expect = [](const InferenceXMetrics::Statistics& s, double mean, double median, const char* what) {
    ASSERT_TRUE(s.mean && s.median) << what;
    EXPECT_DOUBLE_EQ(*s.mean, mean) << what;
    EXPECT_DOUBLE_EQ(*s.median, median) << what;
  };
  expect(ix.ttft, m.ttft.mean, m.ttft.median, "ttft");
  expect(ix.tpot, m.tpot.mean, m.tpot.median, "tpot");
  expect(ix.e2el, m.e2el.mean, m.e2el.median, "e2el");
  expect(ix.intvty, m.interactivityMean, m.interactivity, "interactivity");
  ASSERT_TRUE(r.averageChipPowerW);
  EXPECT_DOUBLE_EQ(*r.averageChipPowerW, 275.0);
}

TEST(RunReport, WhatAReportLacksReadsAsNothing) {
  for (const nlohmann::json& report :
       {nlohmann::json::object(), nlohmann::json{{"results", {{"kind", "decode_step"}}}},
        nlohmann::json{{"results", {{"metrics", {{"inferencex", {{"median_tpot", nullptr}}}}}}}},
        nlohmann::json{{"power", {{"serving", nullptr}}}}, nlohmann::json(nlohmann::json::value_t::discarded),
        nlohmann::json::array()}) {
    const RunReport r = RunReport::fromJson(report);
    EXPECT_FALSE(r.inferenceX.tpot.median) << report.dump();
    EXPECT_FALSE(r.inferenceX.outputTputPerGpu) << report.dump();
    EXPECT_FALSE(r.averageChipPowerW) << report.dump();
  }
  EXPECT_EQ(RunReport::fromJson({{"results", {{"kind", "decode_step"}}}}).kind, "decode_step");
  EXPECT_FALSE(RunReport::read("/nonexistent/report.json").inferenceX.tputPerGpu);
}

TEST(RunReport, AValidationMetricReadsItsFieldAndStatistic) {
  RunReport r;
  r.inferenceX.tpot = {0.005, 0.004};
  r.inferenceX.ttft = {0.2, std::nullopt};
  r.inferenceX.outputTputPerGpu = 100.0;
  r.inferenceX.tputPerGpu = 200.0;
  r.averageChipPowerW = 150.0;
  MeasuredMetric tpot{ValidationMetric::kTpot, 4.0, "ms", "median"};
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, tpot), 0.004);
  tpot.statistic = "";
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, tpot), 0.004) << "median by default";
  tpot.statistic = "mean";
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, tpot), 0.005);
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, MeasuredMetric{ValidationMetric::kPowerPerGpu, 1, "W", ""}), 150.0);
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, MeasuredMetric{ValidationMetric::kOutputThroughputPerGpu, 1, "tok/s/GPU", ""}),
                   100.0);
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, MeasuredMetric{ValidationMetric::kThroughputPerGpu, 1, "tok/s/GPU", ""}), 200.0);
  // A point counted in the window reads the steady-state rates instead.
  r.windowOutputTputPerGpu = 110.0;
  r.windowTputPerGpu = 220.0;
  const auto window = workload::ThroughputAccounting::kWindow;
  EXPECT_DOUBLE_EQ(
      *simulatedMetric(r, MeasuredMetric{ValidationMetric::kOutputThroughputPerGpu, 1, "tok/s/GPU", ""}, window),
      110.0);
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, MeasuredMetric{ValidationMetric::kThroughputPerGpu, 1, "tok/s/GPU", ""}, window),
                   220.0);
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, MeasuredMetric{ValidationMetric::kThroughputPerGpu, 1, "tok/s/GPU", ""}), 200.0);
  EXPECT_DOUBLE_EQ(*simulatedMetric(r, MeasuredMetric{ValidationMetric::kTtft, 1, "s", "mean"}), 0.2);
  EXPECT_FALSE(simulatedMetric(r, MeasuredMetric{ValidationMetric::kTtft, 1, "s", "median"}).has_value());
  EXPECT_FALSE(simulatedMetric(RunReport{}, tpot).has_value());
}

// Issue 38: a result file is written only as a new or regular file; a FIFO or a link in its
// place stays as it was and the failure is an OutputError (error[output]), not an internal one.
TEST(ReportWriter, NeverReplacesALinkOrASpecialFileAndSaysItIsAnOutputError) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("scoville-writer-{}", ::getpid());
  fs::create_directories(dir);
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = (dir / "link").string();
  fs::create_symlink(dir / "target", link);
  EXPECT_THROW(writeFileAtomically(fifo, "x"), OutputError);
  EXPECT_THROW(writeFileAtomically(link, "x"), OutputError);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(dir / "target"));
  EXPECT_THROW(writeFileAtomically((dir / "no-such-folder" / "f").string(), "x"), OutputError);
  writeFileAtomically((dir / "regular").string(), "first");
  writeFileAtomically((dir / "regular").string(), "second");
  EXPECT_EQ(fs::file_size(dir / "regular"), 6u);
  EXPECT_THROW(checkOutputTargets({{"--a", (dir / "x").string()}, {"--b", (dir / "." / "x").string()}}),
               config::ConfigError);
  EXPECT_NO_THROW(checkOutputTargets({{"--a", (dir / "x").string()}, {"--b", (dir / "y").string()}}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace scoville::cli
