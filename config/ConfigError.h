#pragma once
// The one exception type for bad input. Every error names its class (machine-checkable), where it
// happened (file:line:column, or the command-line option) and what was expected.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace scoville::config {

/// The classes of bad input. The CLI maps all of them to exit code 2.
enum class ErrorKind {
  kUnknownKey,           ///< a key no schema declares (typo, misplaced key)
  kWrongType,            ///< a map where a scalar belongs, text where a number belongs, ...
  kBadUnit,              ///< malformed quantity, missing or wrong unit
  kOutOfRange,           ///< zero/negative/too large value, or a value outside an enumeration
  kMissingKey,           ///< a required key is absent
  kDuplicateKey,         ///< the same key twice in one map
  kFileNotFound,         ///< a file or a shipped name that does not exist
  kEmptyFile,            ///< a configuration file with no content
  kYamlSyntax,           ///< the YAML parser rejected the file
  kUnknownName,          ///< --platform/--model/--scenario NAME that is not shipped
  kConflictingOverride,  ///< two --set options give one key different values
  kBadOverride,          ///< a --set option that is not root.key=value
  kOutputNotWritable,    ///< --out cannot be created or written
  kInvalidConfig,        ///< a cross-key rule is violated (e.g. heads not divisible)
  kDoesNotFit,           ///< the model and its KV cache exceed the memory they are placed in
};

/// Stable short name of an error class, as printed in "error[NAME]".
std::string_view errorKindName(ErrorKind kind);

class ConfigError : public std::runtime_error {
 public:
  /// location: "file:line:column", "file", or "--set key=value"; may be empty.
  ConfigError(ErrorKind kind, std::string location, std::string message);

  ErrorKind kind() const { return m_kind; }
  const std::string& location() const { return m_location; }
  const std::string& message() const { return m_message; }

 private:
  ErrorKind m_kind;
  std::string m_location;
  std::string m_message;
};

/// The candidate closest to `word` by edit distance (a swapped pair of letters counts as one
/// edit), or "" if none is close enough to be a plausible typo (distance at most max(2, |word|/3)).
/// Candidates equally close come joined by "' or '", for a message's "did you mean '{}'?".
std::string nearestMatch(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace scoville::config
