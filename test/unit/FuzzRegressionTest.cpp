// Replays test/fuzz/regressions/: inputs that once crashed a loader, or probe YAML corners
// (aliases, complex keys, tags, overflow). Each must be accepted or rejected with a ConfigError.
#include <gtest/gtest.h>
#include <filesystem>

#include "test/fuzz/FuzzTargets.h"
#include "test/support/Subprocess.h"
#include "config/ConfigError.h"

namespace scoville::test {
namespace {

TEST(FuzzRegressions, EveryStoredInputIsAnsweredWithAClassedErrorOrAccepted) {
  int replayed = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(SCOVILLE_SOURCE_DIR) + "/test/fuzz/regressions")) {
    if (entry.path().filename() == "README.md") continue;
    const std::string input = readFile(entry.path().string());
    ASSERT_FALSE(input.empty()) << entry.path();
    try {
      parseFuzzInput(static_cast<uint8_t>(input[0]), input.substr(1));
    } catch (const config::ConfigError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": unclassified exception " << e.what();
    }
    ++replayed;
  }
  EXPECT_GE(replayed, 5);
}

}  // namespace
}  // namespace scoville::test
