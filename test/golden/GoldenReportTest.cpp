// End-to-end golden runs: the results of shipped configurations compared with stored reports
// within a tolerance, so any change in modelled timing is a deliberate, reviewed update
// (scripts/update-golden rewrites the stored files).
#include <gtest/gtest.h>
#include <cmath>
#include <nlohmann/json.hpp>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

constexpr double kRelativeTolerance = 1e-3;

void expectClose(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path) {
  ASSERT_EQ(expected.type(), actual.type()) << path;
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      ASSERT_TRUE(actual.contains(key)) << path << "." << key << " missing";
      expectClose(value, actual[key], path + "." + key);
    }
    EXPECT_EQ(expected.size(), actual.size()) << path << " has extra or missing keys";
  } else if (expected.is_number_float()) {
    const double e = expected.get<double>();
    const double a = actual.get<double>();
    EXPECT_LE(std::fabs(a - e), kRelativeTolerance * std::fabs(e) + 1e-15) << path << ": " << a << " vs " << e;
  } else {
    EXPECT_EQ(expected, actual) << path;
  }
}

TEST(Golden, DefaultDecodeStepMatchesItsStoredResults) {
  TempDir dir;
  const ProcessResult r = runScoville({"run", "-q", "--out", dir.path()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto actual = nlohmann::json::parse(readFile(dir.file("report.json")));
  const auto expected =
      nlohmann::json::parse(readFile(std::string(SCOVILLE_SOURCE_DIR) + "/test/golden/default-decode-step.json"));
  expectClose(expected["results"], actual["results"], "results");
  expectClose(expected["platform"], actual["platform"], "platform");
}

// Fidelity against measured hardware: a calibration point whose software-stack profile was fitted
// to it (docs/validation.md) stays within the target of 15% on every metric, so a change
// in modelled timing or power that moves the simulator away from the measurement fails here.
TEST(Golden, ACalibratedValidationPointStaysWithinFifteenPercentOfItsMeasurement) {
  TempDir dir;
  const ProcessResult r =
      runScoville({"validate", "calibration", "--only", "ix828-gptoss-h100-c4", "-q", "--out", dir.path()});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const auto v = nlohmann::json::parse(readFile(dir.file("validation.json")));
  std::size_t compared = 0;
  for (const auto& point : v["points"]) {
    if (point["status"] != "compared") continue;
    ++compared;
    EXPECT_EQ(point["metrics"].size(), 3u) << "throughput, TPOT and power";
    for (const auto& m : point["metrics"]) {
      EXPECT_LE(std::fabs(m["error_percent"].get<double>()), 15.0) << point["id"] << " " << m["metric"];
    }
  }
  EXPECT_EQ(compared, 1u);
}

}  // namespace
}  // namespace scoville::test
