#pragma once
// Expecting a configuration error: the one idiom of every "bad input" test, "this must be refused
// with a config::ConfigError, and the error must name the key (file, option) at fault".

#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "config/ConfigError.h"

namespace scoville::test {

/// The config::ConfigError that `f()` throws; nullopt, with a test failure naming `what` (the input
/// that should have been refused), when `f()` returns. Any other exception propagates.
template <class F>
std::optional<config::ConfigError> configErrorOf(F&& f, std::string_view what = "the input") {
  try {
    f();
  } catch (const config::ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << what;
  return std::nullopt;
}

/// Passes when `error` holds an error whose location or message contains every one of `parts`;
/// the failure prints the error whole.
inline ::testing::AssertionResult mentions(const std::optional<config::ConfigError>& error,
                                           std::initializer_list<std::string_view> parts) {
  if (!error) return ::testing::AssertionFailure() << "no ConfigError";
  const std::string all = error->location() + " " + error->message();
  for (const std::string_view part : parts) {
    if (all.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << part << "' not in: " << error->what();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace scoville::test
