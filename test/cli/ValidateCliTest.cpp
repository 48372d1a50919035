// `scoville validate`, end to end: a dataset of tiny-dense points on one jalapeno chip, one of
// them skipped and one that cannot run; the signed errors against a run of the same point, the
// statuses, the exit codes, and a bad dataset refused before anything runs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using Json = nlohmann::json;

const char* kPoint = R"(
- id: {ID}
  source: a test
  hardware: jalapeno
  framework: none
  platform: jalapeno
  model: tiny-dense
  isl: 256
  osl: 32
  concurrency: 2
  requests: 4
  sets: [{SET}]
  metrics:
  - {name: tpot, value: 50, unit: us}
  - {name: output_throughput_per_gpu, value: 1000, unit: tok/s/GPU}
)";

std::string point(const std::string& id, const std::string& set) {
  std::string p = kPoint;
  p.replace(p.find("{ID}"), 4, id);
  p.replace(p.find("{SET}"), 5, set);
  return p;
}

TEST(ValidateCli, ComparesEveryMeasuredMetricListsSkippedAndFailedPointsAndWritesValidationJson) {
  TempDir dir;
  const std::string dataset =
      "name: t\ndescription: test\npoints:" + point("ok", "scenario.random_range_ratio=1") +
      point("broken", "model.layers=0") +
      "- id: later\n  source: s\n  hardware: h\n  framework: f\n  skip: not expressible\n  metrics:\n"
      "  - {name: ttft, value: 1, unit: s}\n";
  writeFile(dir.file("d.yaml"), dataset);
  const ProcessResult r = runScoville({"validate", dir.file("d.yaml"), "--out", dir.file("v"), "-j", "2"});
  EXPECT_EQ(r.exitCode, 1) << "a point failed to run: " << r.out << r.err;
  EXPECT_NE(r.out.find("3 points: 1 compared, 1 skipped, 1 failed"), std::string::npos) << r.out;
  const Json v = Json::parse(readFile(dir.file("v/validation.json")));
  ASSERT_EQ(v["points"].size(), 3u);
  const Json& ok = v["points"][0];
  EXPECT_EQ(ok["status"], "compared");
  ASSERT_EQ(ok["metrics"].size(), 2u);
  // The simulated values are the run's own report's.
  const Json report = Json::parse(readFile(dir.file("v/points/ok/report.json")));
  const Json& tpot = ok["metrics"][0];
  EXPECT_EQ(tpot["metric"], "tpot");
  EXPECT_DOUBLE_EQ(tpot["measured"].get<double>(), 50e-6);
  EXPECT_DOUBLE_EQ(tpot["simulated"].get<double>(),
                   report["results"]["metrics"]["inferencex"]["median_tpot"].get<double>());
  EXPECT_NEAR(tpot["error_percent"].get<double>(), (tpot["simulated"].get<double>() / 50e-6 - 1.0) * 100.0, 1e-9);
  EXPECT_EQ(v["points"][1]["status"], "failed");
  EXPECT_NE(v["points"][1]["reason"].get<std::string>().find("layers"), std::string::npos) << v["points"][1];
  EXPECT_EQ(v["points"][2]["status"], "skipped");
  EXPECT_EQ(v["points"][2]["reason"], "not expressible");
  EXPECT_EQ(v["summary"]["tpot"]["points"], 1);
  EXPECT_DOUBLE_EQ(v["summary"]["tpot"]["mape_percent"].get<double>(), std::abs(tpot["error_percent"].get<double>()));
  EXPECT_EQ(ok["role"], "predicted") << "no profile was fitted to it";
}

// A measured value known to measure something else (not_comparable) is still run, compared and
// listed with its reason, and left out of the summary's MAPE.
TEST(ValidateCli, AMetricMarkedNotComparableIsListedWithItsReasonButLeftOutOfTheMape) {
  TempDir dir;
  std::string p = point("ok", "scenario.random_range_ratio=1");
  const std::string throughput = "unit: tok/s/GPU}";
  p.replace(p.find(throughput), throughput.size(), "unit: tok/s/GPU, not_comparable: averaged over the whole log}");
  writeFile(dir.file("d.yaml"), "name: t\ndescription: test\npoints:" + p);
  const ProcessResult r = runScoville({"validate", dir.file("d.yaml"), "--out", dir.file("v")});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("not comparable: averaged over the whole log"), std::string::npos) << r.out;
  const Json v = Json::parse(readFile(dir.file("v/validation.json")));
  const Json& metrics = v["points"][0]["metrics"];
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_FALSE(metrics[0].contains("not_comparable"));
  EXPECT_EQ(metrics[1]["metric"], "output_throughput_per_gpu");
  EXPECT_EQ(metrics[1]["not_comparable"], "averaged over the whole log");
  EXPECT_GT(metrics[1]["simulated"].get<double>(), 0.0) << "still run and compared";
  EXPECT_TRUE(v["summary"].contains("tpot"));
  EXPECT_FALSE(v["summary"].contains("output_throughput_per_gpu")) << v["summary"];
}

// A point its software-stack profile was fitted to (calibrated_on) is marked fitted, the others
// predicted, and the summary gives each apart as well as both together.
TEST(ValidateCli, SaysWhichPointsTheirProfileWasFittedToAndSummarisesThemApart) {
  TempDir dir;
  writeFile(dir.file("stack.yaml"),
            "name: s\ndescription: test\nframework: f\nhardware: h\nstep_overhead: 10 us\ncalibrated_on: [fit]\n");
  const std::string withStack = "  stack: " + dir.file("stack.yaml") + "\n";
  std::string fit = point("fit", "scenario.random_range_ratio=1");
  fit.insert(fit.find("  metrics:"), withStack);
  std::string other = point("other", "scenario.random_range_ratio=1");
  other.insert(other.find("  metrics:"), withStack);
  writeFile(dir.file("d.yaml"), "name: t\ndescription: test\npoints:" + fit + other);
  const ProcessResult r = runScoville({"validate", dir.file("d.yaml"), "--out", dir.file("v"), "-j", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const Json v = Json::parse(readFile(dir.file("v/validation.json")));
  EXPECT_EQ(v["points"][0]["role"], "fitted");
  EXPECT_EQ(v["points"][1]["role"], "predicted");
  EXPECT_EQ(v["summary"]["tpot"]["points"], 2);
  EXPECT_EQ(v["summary_by_role"]["fitted"]["tpot"]["points"], 1);
  EXPECT_EQ(v["summary_by_role"]["predicted"]["tpot"]["worst_point"], "other");
  EXPECT_NE(r.out.find("predicted"), std::string::npos) << r.out;
}

// A point that says what else was fitted to it (an engine setting its source does not publish)
// is fitted though no profile names it, and validation.json says what; the others stay predicted.
TEST(ValidateCli, APointThatSaysWhatWasFittedToItIsFittedWithoutAProfile) {
  TempDir dir;
  std::string fit = point("engine", "scenario.random_range_ratio=1");
  fit.insert(fit.find("  metrics:"), "  fitted: the engine's token budget\n");
  const std::string other = point("other", "scenario.random_range_ratio=1");
  writeFile(dir.file("d.yaml"), "name: t\ndescription: test\npoints:" + fit + other);
  const ProcessResult r = runScoville({"validate", dir.file("d.yaml"), "--out", dir.file("v"), "-j", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const Json v = Json::parse(readFile(dir.file("v/validation.json")));
  EXPECT_EQ(v["points"][0]["role"], "fitted");
  EXPECT_EQ(v["points"][0]["fitted"], "the engine's token budget");
  EXPECT_EQ(v["points"][1]["role"], "predicted");
  EXPECT_TRUE(v["points"][1]["fitted"].is_null());
  EXPECT_EQ(v["summary_by_role"]["fitted"]["tpot"]["worst_point"], "engine");
}

TEST(ValidateCli, APointWithABaselineComparesTheRatioOfItsTwoRuns) {
  TempDir dir;
  // The point's model has twice its baseline's layers: the measured ratio of their E2E is 1.9.
  const std::string dataset =
      "name: t\ndescription: test\npoints:\n"
      "- id: longer\n  source: s\n  hardware: h\n  framework: f\n  platform: jalapeno\n"
      "  model: tiny-dense\n  isl: 256\n  osl: 32\n  concurrency: 1\n  requests: 2\n"
      "  sets: [model.layers=8]\n  baseline: {sets: []}\n"
      "  metrics:\n  - {name: e2el, value: 1.9, baseline_value: 1, unit: ms}\n";
  writeFile(dir.file("d.yaml"), dataset);
  const ProcessResult r = runScoville({"validate", dir.file("d.yaml"), "--out", dir.file("v"), "-j", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const Json v = Json::parse(readFile(dir.file("v/validation.json")));
  const Json& m = v["points"][0]["metrics"][0];
  EXPECT_EQ(m["metric"], "e2el_over_baseline");
  EXPECT_DOUBLE_EQ(m["measured"].get<double>(), 1.9);
  const auto e2e = [&](const std::string& file) {
    return Json::parse(readFile(dir.file(file)))["results"]["metrics"]["inferencex"]["median_e2el"].get<double>();
  };
  EXPECT_DOUBLE_EQ(m["simulated"].get<double>(),
                   e2e("v/points/longer/report.json") / e2e("v/points/longer/baseline/report.json"));
  EXPECT_GT(m["simulated"].get<double>(), 1.5) << "twice the layers: nearly twice the time";
  EXPECT_TRUE(v["summary"].contains("e2el_over_baseline")) << "a summary row of its own";
  // A baseline without baseline values, or baseline values without a baseline, is refused.
  std::string bad = dataset;
  bad.replace(bad.find(", baseline_value: 1"), 19, "");
  writeFile(dir.file("bad.yaml"), bad);
  const ProcessResult noValue = runScoville({"validate", dir.file("bad.yaml"), "--out", dir.file("w")});
  EXPECT_EQ(noValue.exitCode, 2);
  EXPECT_NE(noValue.err.find("needs baseline_value"), std::string::npos) << noValue.err;
  bad = dataset;
  bad.replace(bad.find("  baseline: {sets: []}\n"), 23, "");
  writeFile(dir.file("bad2.yaml"), bad);
  const ProcessResult noBaseline = runScoville({"validate", dir.file("bad2.yaml"), "--out", dir.file("w")});
  EXPECT_EQ(noBaseline.exitCode, 2);
  EXPECT_NE(noBaseline.err.find("has no baseline"), std::string::npos) << noBaseline.err;
}

TEST(ValidateCli, ABadDatasetIsRefusedNamingTheKeyAndNothingRuns) {
  TempDir dir;
  writeFile(dir.file("d.yaml"),
            "name: t\ndescription: test\npoints:" + point("ok", "scenario.random_range_ratio=1") + "  concurency: 3\n");
  const ProcessResult r = runScoville({"validate", dir.file("d.yaml"), "--out", dir.file("v")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("concurency"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("d.yaml"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("v/validation.json")));
  const ProcessResult missing = runScoville({"validate", dir.file("nope.yaml")});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos) << missing.err;
  const ProcessResult unknown = runScoville({"validate", dir.file("d.yaml"), "--only", "zzz"});
  EXPECT_EQ(unknown.exitCode, 2);
}

}  // namespace
}  // namespace scoville::test
