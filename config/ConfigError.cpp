#include "config/ConfigError.h"

#include <fmt/format.h>
#include <algorithm>

namespace scoville::config {

std::string_view errorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUnknownKey: return "unknown-key";
    case ErrorKind::kWrongType: return "wrong-type";
    case ErrorKind::kBadUnit: return "bad-unit";
    case ErrorKind::kOutOfRange: return "out-of-range";
    case ErrorKind::kMissingKey: return "missing-key";
    case ErrorKind::kDuplicateKey: return "duplicate-key";
    case ErrorKind::kFileNotFound: return "file-not-found";
    case ErrorKind::kEmptyFile: return "empty-file";
    case ErrorKind::kYamlSyntax: return "yaml-syntax";
    case ErrorKind::kUnknownName: return "unknown-name";
    case ErrorKind::kConflictingOverride: return "conflicting-override";
    case ErrorKind::kBadOverride: return "bad-override";
    case ErrorKind::kOutputNotWritable: return "output-not-writable";
    case ErrorKind::kInvalidConfig: return "invalid-config";
    case ErrorKind::kDoesNotFit: return "does-not-fit";
  }
  return "config";
}

namespace {
std::string formatWhat(ErrorKind kind, const std::string& location, const std::string& message) {
  if (location.empty()) return fmt::format("error[{}]: {}", errorKindName(kind), message);
  return fmt::format("error[{}]: {}: {}", errorKindName(kind), location, message);
}

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace

ConfigError::ConfigError(ErrorKind kind, std::string location, std::string message)
    : std::runtime_error(formatWhat(kind, location, message)),
      m_kind(kind),
      m_location(std::move(location)),
      m_message(std::move(message)) {}

std::string nearestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t bestDistance = limit + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t d = editDistance(word, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace scoville::config
