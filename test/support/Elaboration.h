#pragma once
// SystemC elaborates once per process: a test that builds modules must run alone in its process.
// CTest does that (gtest_discover_tests gives every TEST its own process); this guard turns an
// accidental second elaboration (running the binary without a filter) into a clear failure.

#include <gtest/gtest.h>

namespace scoville::test {

/// Call first in every test that creates SystemC modules.
inline void claimElaboration() {
  static bool claimed = false;
  ASSERT_FALSE(claimed) << "one SystemC scenario per process: run this binary through ctest or with "
                           "--gtest_filter naming a single test";
  claimed = true;
}

}  // namespace scoville::test
