// docs/config.md is generated from the schema tables; it must match what the binary prints.
#include <gtest/gtest.h>

#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

TEST(Golden, ConfigReferenceIsUpToDate) {
  const ProcessResult r = runScoville({"config-docs"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(readFile(std::string(SCOVILLE_SOURCE_DIR) + "/docs/config.md"), r.out)
      << "regenerate with: build/scoville config-docs > docs/config.md";
}

}  // namespace
}  // namespace scoville::test
