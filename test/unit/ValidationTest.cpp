// Validation datasets (workloads/Validation.h): the format's checks and the error summary. The
// shipped calibration set loads. The run a point maps to and the metrics read from its report are
// RunRequestTest's and RunReportTest's.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/ConfigError.h"
#include "config/Loader.h"
#include "test/support/ConfigErrors.h"
#include "workloads/SoftwareStack.h"
#include "workloads/Validation.h"

namespace scoville::workload {
namespace {

ValidationDataset parseDataset(const std::string& yaml) {
  return ValidationDataset::schema().parse(config::loadConfigText("validation", yaml, "v.yaml"));
}

std::optional<config::ConfigError> errorOf(const std::string& yaml) {
  return test::configErrorOf([&] { parseDataset(yaml); }, yaml);
}

const std::string kHead = "name: t\ndescription: d\npoints:\n";
const std::string kPoint =
    "- id: a\n  source: s\n  hardware: H100\n  framework: vLLM\n  platform: h100-hgx8\n  model: gpt-oss-120b\n"
    "  tp: 8\n  concurrency: 4\n";

TEST(ValidationDataset, ParsesAPointAndConvertsItsUnits) {
  const ValidationDataset d = parseDataset(kHead + kPoint +
                                           "  metrics:\n  - {name: tpot, value: 3.71, unit: ms, statistic: mean}\n"
                                           "  - {name: output_throughput_per_gpu, value: 129.6, unit: tok/s/GPU}\n");
  ASSERT_EQ(d.points.size(), 1u);
  const ValidationPoint& p = d.points[0];
  EXPECT_EQ(p.scenario, "inferencex-1k1k");
  ASSERT_EQ(p.metrics.size(), 2u);
  EXPECT_EQ(p.metrics[0].metric, ValidationMetric::kTpot);
  EXPECT_DOUBLE_EQ(p.metrics[0].si(), 3.71e-3);
  EXPECT_EQ(p.metrics[0].statistic, "mean");
  EXPECT_EQ(p.metrics[1].statistic, "median");
  EXPECT_DOUBLE_EQ(p.metrics[1].si(), 129.6);
}

TEST(ValidationDataset, RejectsWrongUnitsDuplicateIdsMissingRunKeysAndTypos) {
  const auto expect = [](const std::string& yaml, config::ErrorKind kind, const std::string& words) {
    SCOPED_TRACE(yaml);
    const std::optional<config::ConfigError> e = errorOf(yaml);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->kind(), kind) << e->what();
    EXPECT_NE(std::string(e->what()).find(words), std::string::npos) << e->what();
    EXPECT_NE(std::string(e->what()).find("v.yaml"), std::string::npos) << e->what();
  };
  const std::string tpot = "  metrics:\n  - {name: tpot, value: 3.71, unit: tok/s}\n";
  expect(kHead + kPoint + tpot, config::ErrorKind::kBadUnit, "points[0].metrics[0].unit");
  const std::string ok = "  metrics:\n  - {name: tpot, value: 3.71, unit: ms}\n";
  expect(kHead + kPoint + ok + kPoint + ok, config::ErrorKind::kInvalidConfig, "'a' is used twice");
  expect(kHead + "- id: b\n  source: s\n  hardware: H100\n  framework: vLLM\n  model: m\n  concurrency: 1\n" + ok,
         config::ErrorKind::kMissingKey, "platform");
  expect(kHead + kPoint + "  metrics:\n  - {name: tpop, value: 3.71, unit: ms}\n", config::ErrorKind::kOutOfRange,
         "did you mean 'tpot'");
  expect(kHead + kPoint + "  concurency: 8\n" + ok, config::ErrorKind::kUnknownKey, "concurency");
  expect(kHead + kPoint + "  metrics:\n  - {name: tpot, value: -1, unit: ms}\n", config::ErrorKind::kOutOfRange,
         "value");
  expect(kHead + kPoint + "  throughput: steady\n" + ok, config::ErrorKind::kOutOfRange, "per_request, window");
  EXPECT_EQ(parseDataset(kHead + kPoint + ok).points[0].throughput, ThroughputAccounting::kPerRequest);
  EXPECT_EQ(parseDataset(kHead + kPoint + "  throughput: window\n" + ok).points[0].throughput,
            ThroughputAccounting::kWindow);
  // A skipped point needs no run keys.
  EXPECT_NO_THROW(parseDataset(kHead + "- id: c\n  source: s\n  hardware: X\n  framework: Y\n  skip: why\n" + ok));
}

TEST(ValidationDataset, SummarisesSignedErrorsPerMetric) {
  const auto summary = summarize({{"a", "tpot", 1.0, 1.1, 10.0, ""},
                                  {"b", "tpot", 1.0, 0.7, -30.0, ""},
                                  {"a", "power_per_gpu", 100.0, 95.0, -5.0, ""}});
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_EQ(summary.at("tpot").points, 2u);
  EXPECT_DOUBLE_EQ(summary.at("tpot").mape, 20.0);
  EXPECT_DOUBLE_EQ(summary.at("tpot").maxAbsErrorPercent, 30.0);
  EXPECT_EQ(summary.at("tpot").worstPoint, "b");
  EXPECT_DOUBLE_EQ(summary.at("power_per_gpu").mape, 5.0);
  // A comparison marked not comparable counts nowhere: alone it leaves its metric out.
  const auto without = summarize({{"a", "tpot", 1.0, 1.1, 10.0, ""},
                                  {"b", "tpot", 1.0, 0.7, -30.0, "a log average"},
                                  {"a", "power_per_gpu", 100.0, 250.0, 150.0, "a log average"}});
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(without.at("tpot").points, 1u);
  EXPECT_DOUBLE_EQ(without.at("tpot").mape, 10.0);
  EXPECT_EQ(parseDataset(kHead + kPoint + "  metrics:\n  - {name: ttft, value: 1, unit: s, not_comparable: why}\n")
                .points[0]
                .metrics[0]
                .notComparable,
            "why");
}

TEST(ValidationDataset, TheHotChipsTableLoadsWithEveryPublishedLatency) {
  const ValidationDataset d =
      loadValidationDataset(config::resolveConfigFile("DATASET", "workloads/validation", "hotchips2026"));
  std::map<std::string, double> e2el;
  for (const ValidationPoint& p : d.points) {
    for (const MeasuredMetric& m : p.metrics) {
      if (m.metric == ValidationMetric::kE2el) e2el[p.id] = m.si();
    }
  }
  EXPECT_EQ(e2el, (std::map<std::string, double>{{"gptoss-jalapeno-c1", 1.03},
                                                 {"gptoss-gb200-c1", 1.80},
                                                 {"dsr1-jalapeno-c1", 1.65},
                                                 {"dsr1-gb300-c1", 5.99},
                                                 {"kimi-jalapeno-c1", 1.56},
                                                 {"kimi-gb300-c1", 5.31}}));
}

TEST(ValidationDataset, TheShippedCalibrationSetLoadsAndKeepsEverySourcePoint) {
  const ValidationDataset d =
      loadValidationDataset(config::resolveConfigFile("DATASET", "workloads/validation", "calibration"));
  EXPECT_EQ(d.name, "calibration");
  std::size_t run = 0, skipped = 0;
  for (const ValidationPoint& p : d.points) {
    EXPECT_FALSE(p.source.empty()) << p.id;
    (p.skip.empty() ? run : skipped) += 1;
  }
  EXPECT_GE(run, 17u);
  EXPECT_GE(skipped, 6u);
  // Every profile a point of either set names ships, names the hardware it serves (the point's
  // among them) and the points it was fitted to, and each of those uses it under its framework:
  // one profile per framework and hardware, no per-point factors. Fitted points come from this
  // set, but for a value no point here can identify (docs/validation.md says which), from the
  // reference-chip set.
  const ValidationDataset reference =
      loadValidationDataset(config::resolveConfigFile("DATASET", "workloads/validation", "hotchips2026"));
  std::map<std::string, const ValidationPoint*> byId;
  for (const ValidationPoint& p : d.points) byId[p.id] = &p;
  for (const ValidationPoint& p : reference.points) {
    if (byId.emplace(p.id, &p).second) continue;
    ADD_FAILURE() << p.id << " is in both datasets";
  }
  std::set<std::pair<std::string, std::string>> fittedOnReference;  // profile, point
  for (const auto& [id, point] : byId) {
    const ValidationPoint& p = *point;
    if (p.stack.empty()) continue;
    SCOPED_TRACE(p.id);
    const SoftwareStackConfig stack = SoftwareStackConfig::schema().parse(
        config::loadConfigFile("software_stack", config::resolveConfigFile("stack", "workloads/stacks", p.stack)));
    EXPECT_NE(stack.hardware.find(p.hardware), std::string::npos) << stack.name << " serves " << stack.hardware;
    EXPECT_EQ(p.framework.rfind(stack.framework, 0), 0u) << stack.name << " is " << stack.framework;
    EXPECT_FALSE(stack.calibratedOn.empty());
    for (const std::string& fittedId : stack.calibratedOn) {
      ASSERT_TRUE(byId.count(fittedId)) << stack.name << " names " << fittedId;
      const ValidationPoint& fitted = *byId.at(fittedId);
      EXPECT_EQ(fitted.stack, p.stack) << fittedId;
      EXPECT_EQ(fitted.framework.rfind(stack.framework, 0), 0u) << fittedId;
      EXPECT_NE(stack.hardware.find(fitted.hardware), std::string::npos) << fittedId;
      const bool here = std::any_of(d.points.begin(), d.points.end(), [&](const auto& q) { return q.id == fittedId; });
      if (!here) fittedOnReference.emplace(stack.name, fittedId);
    }
  }
  // The two such values: trtllm-gb200's kernel launch latency (the calibration set has no
  // lowest-latency point of that stack) and reference-jalapeno's step overhead (no measurement
  // of the reference chip is public beyond the published table).
  EXPECT_EQ(fittedOnReference, (std::set<std::pair<std::string, std::string>>{
                                   {"reference-jalapeno", "gptoss-jalapeno-c1"}, {"trtllm-gb200", "gptoss-gb200-c1"}}));
}

}  // namespace
}  // namespace scoville::workload
