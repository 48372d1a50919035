#pragma once
// The fixture of the command-line tests that run the scoville executable on platform files: a
// temporary directory for the run's outputs, the shipped jalapeno platform as one self-contained
// file with a change, and the bad-input contract (exit 2, a classed and located message, no report).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/Subprocess.h"

namespace scoville::test {

const std::string kJalapeno = std::string(SCOVILLE_SOURCE_DIR) + "/platforms/jalapeno.yaml";
const std::string kJalapenoChip = std::string(SCOVILLE_SOURCE_DIR) + "/platforms/chips/jalapeno.yaml";

class CliFixture : public ::testing::Test {
 protected:
  TempDir dir;
  std::string out() const { return dir.file("out"); }
  std::string report() const { return dir.file("out/report.json"); }

  /// The shipped jalapeno platform with its chip type inlined (in place of the include), as one
  /// self-contained file.
  static std::string inlinedJalapeno() {
    std::string text = readFile(kJalapeno);
    std::istringstream chip(readFile(kJalapenoChip));
    std::string inlined;
    bool first = true;
    for (std::string l; std::getline(chip, l);) {
      if (first && (l.empty() || l[0] == '#')) continue;  // the chip file's header comment
      // The chip's own includes (its timing set) are relative to the chip file.
      const std::string relative = "{include: ../";
      if (const std::size_t i = l.find(relative); i != std::string::npos) {
        const std::string chipFile = kJalapenoChip;
        l.replace(i, relative.size(), "{include: " + chipFile.substr(0, chipFile.rfind('/')) + "/../");
      }
      inlined += (first ? "- " : "  ") + l + "\n";
      first = false;
    }
    const std::string include = "- include: chips/jalapeno.yaml\n";
    const std::size_t at = text.find(include);
    EXPECT_NE(at, std::string::npos) << "jalapeno.yaml no longer includes chips/jalapeno.yaml";
    text.replace(at, include.size(), inlined);
    return text;
  }

  /// The shipped jalapeno platform (chip type inlined) with `from` replaced by `to` (which must
  /// occur once), written to a temporary file; returns its path. `line` receives the 1-based line
  /// of the change.
  std::string platformVariant(const std::string& from, const std::string& to, int* line = nullptr) {
    std::string text = inlinedJalapeno();
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "fixture text '" << from << "' not in jalapeno.yaml + chips/jalapeno.yaml";
    EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "fixture text '" << from << "' is ambiguous";
    if (line != nullptr) *line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    text.replace(at, from.size(), to);
    const std::string path = dir.file("variant.yaml");
    writeFile(path, text);
    return path;
  }

  /// Runs `scoville run ARGS --out DIR` and checks the bad-input contract.
  ProcessResult expectConfigError(std::vector<std::string> args, const std::string& errorClass,
                                  const std::vector<std::string>& mentions) {
    args.insert(args.begin(), "run");
    args.insert(args.end(), {"--out", out()});
    ProcessResult r = runScoville(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("error[" + errorClass + "]"), std::string::npos) << r.err;
    for (const std::string& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << m << " not in: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(report())) << "a failed run must not leave a report";
    EXPECT_TRUE(r.out.empty()) << r.out;
    return r;
  }
};

}  // namespace scoville::test
