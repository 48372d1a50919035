#pragma once
// Small text helpers shared by the parsers of YAML values, CSV traces and command-line options.

#include <string_view>

namespace scoville::config {

/// `text` without leading and trailing blanks (spaces, tabs and carriage returns, so that a CSV
/// written on Windows reads the same). The view points into `text`: keep its storage alive.
inline std::string_view trimBlanks(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r";
  const std::size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlanks) - first + 1);
}

}  // namespace scoville::config
