#pragma once
// Loading configuration files: resolving shipped names, reading YAML with precise errors, and
// applying --set overrides before the schema sees the tree.

#include <map>
#include <string>
#include <vector>

#include "config/Node.h"

namespace scoville::config {

/// The --set options of one run: "root.dotted.key=value", grouped by root ("platform", "model",
/// "scenario"). Giving one key two different values is an error; repeating the same value is not.
class Overrides {
 public:
  explicit Overrides(std::vector<std::string> roots) : m_roots(std::move(roots)) {}

  /// Adds one option; throws kBadOverride or kConflictingOverride.
  void add(const std::string& option);
  /// Overrides for `root`, as dotted paths below it (without the root) and their values.
  std::vector<std::pair<std::string, std::string>> forRoot(const std::string& root) const;

 private:
  std::vector<std::string> m_roots;
  std::map<std::string, std::string> m_values;  // full dotted path -> value text
};

/// Directory holding the shipped platforms/ and workloads/ folders: $SCOVILLE_DATA_DIR if set,
/// else the source tree this binary was built from.
std::string dataDirectory();

/// Resolves `nameOrFile` for the option `optionName`: a value containing '/' or ending in .yaml
/// or .yml is a file path; anything else is a name looked up as <dataDir>/<subdir>/<name>.yaml.
/// Throws kFileNotFound or kUnknownName (listing the shipped names).
std::string resolveConfigFile(const std::string& optionName, const std::string& subdir, const std::string& nameOrFile);

/// As above for a value given other than as `--what`: `what` names the kind of file in messages
/// ("dataset"), `givenAs` where the value came from ("DATASET", "--software-stack",
/// "scenario.software_stack").
std::string resolveConfigFile(const std::string& what, const std::string& givenAs, const std::string& subdir,
                              const std::string& nameOrFile);

/// Names of the .yaml files shipped in <dataDir>/<subdir>, sorted.
std::vector<std::string> shippedNames(const std::string& subdir);

/// Reads `file` as YAML, applies `overrides` (dotted paths below `rootKey`) and returns the root
/// node named `rootKey`. Throws kFileNotFound, kEmptyFile, kYamlSyntax, kWrongType, kBadOverride.
Node loadConfigFile(const std::string& rootKey, const std::string& file,
                    const std::vector<std::pair<std::string, std::string>>& overrides = {});

/// Parses YAML text (for tests and embedded configs) the same way, naming it `sourceName`.
Node loadConfigText(const std::string& rootKey, const std::string& text, const std::string& sourceName,
                    const std::vector<std::pair<std::string, std::string>>& overrides = {});

/// Loads FILE for an `{include: FILE}` map at `includer`: the file's root map keeps includer's key
/// path, and the --set options aimed below the include (Source::deferred) are applied to it.
Node loadIncludedFile(const Node& includer, const std::string& file);

}  // namespace scoville::config
