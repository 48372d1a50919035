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

/// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: the optimal
/// string alignment distance, so that a transposed pair ("t_rdc" for "t_rcd") counts as one typo.
std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}
}  // namespace

ConfigError::ConfigError(ErrorKind kind, std::string location, std::string message)
    : std::runtime_error(formatWhat(kind, location, message)),
      m_kind(kind),
      m_location(std::move(location)),
      m_message(std::move(message)) {}

std::string nearestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::vector<std::string> best;
  std::size_t bestDistance = limit + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t d = editDistance(word, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best.clear();
    }
    if (d == bestDistance && std::find(best.begin(), best.end(), candidate) == best.end()) best.push_back(candidate);
  }
  return fmt::format("{}", fmt::join(best, "' or '"));
}

}  // namespace scoville::config
