#pragma once
// The fixture of the serving CLI tests: runs the scoville executable on a shrunk serving scenario
// in a temporary directory and returns the report's results (checking the roofline on the way).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/support/Subprocess.h"

namespace scoville::test {

class ServingCliFixture : public ::testing::Test {
 protected:
  TempDir dir;

  /// Runs the inferencex-8k1k scenario shrunk by `sets` into `name`/; returns its results.
  nlohmann::json serve(const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> full{"run", "-q", "-s", "inferencex-8k1k", "--out", dir.file(name)};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult r = runScoville(full);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    if (r.exitCode != 0) return nlohmann::json::object();
    const nlohmann::json report = nlohmann::json::parse(readFile(dir.file(name + "/report.json")));
    EXPECT_EQ(report["results"]["roofline_check"]["violations"], 0) << "a step beat a chip's roofline";
    EXPECT_GE(report["results"]["roofline_check"]["tightest_step_time_over_bound"].get<double>(), 1.0);
    return report["results"];
  }

  /// A small closed-loop load: `users` users, `measured` measured requests of fixed lengths.
  static std::vector<std::string> smallLoad(int users, int measured, int input, int output) {
    return {"--set", "scenario.load.concurrency=" + std::to_string(users),
            "--set", "scenario.requests=" + std::to_string(measured),
            "--set", "scenario.input_tokens=" + std::to_string(input),
            "--set", "scenario.output_tokens=" + std::to_string(output),
            "--set", "scenario.random_range_ratio=1"};
  }

  static std::vector<std::string> join(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  /// Writes a scenario file into the temp dir and returns its path.
  std::string scenarioFile(const std::string& name, const std::string& text) {
    const std::string path = dir.file(name);
    writeFile(path, text);
    return path;
  }
};

}  // namespace scoville::test
