#pragma once
// A YAML node that knows where it came from: the file, its line and column, its dotted key path,
// and whether a --set option put it there. All configuration errors are raised through it so
// every message carries a location.

#include <yaml-cpp/yaml.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/ConfigError.h"

namespace scoville::config {

/// Where a configuration tree was read from, shared by all its nodes.
struct Source {
  std::string file;                                 ///< path as given by the user
  std::map<std::string, std::string> overrideText;  ///< dotted path -> "--set path=value"
  std::vector<std::string> includedFrom;            ///< files that included this one, outermost first
  /// A --set option aimed below an {include: FILE} map, applied when that file is loaded.
  struct Deferred {
    std::string at;     ///< key path of the include map, e.g. "platform.chip_types[0]"
    std::string path;   ///< the rest of the dotted path, below the included map
    std::string value;  ///< value text
    std::string where;  ///< "--set full.path=value", for error locations
  };
  std::vector<Deferred> deferred;
};

class Node {
 public:
  Node(YAML::Node node, std::shared_ptr<const Source> source, std::string path);

  const YAML::Node& yaml() const { return m_node; }
  /// Dotted key path from the root, e.g. "platform.chip.hbm.bandwidth".
  const std::string& path() const { return m_path; }
  /// "file:line:column" for nodes read from a file; "--set key=value" for overridden ones.
  std::string location() const;
  /// Location of an arbitrary node (e.g. a map key) of the same tree.
  std::string locationOf(const YAML::Node& node, const std::string& path) const;

  Node child(const YAML::Node& node, const std::string& key) const;
  /// The node under `key` of this map, or this node itself when the key is absent (so that an
  /// error about a defaulted key points at its parent).
  Node at(const std::string& key) const;
  /// Element `index` of this list, or this node itself when there is no such element.
  Node at(std::size_t index) const;
  const std::shared_ptr<const Source>& source() const { return m_source; }

  /// Throws ConfigError of `kind` at this node's location.
  [[noreturn]] void fail(ErrorKind kind, const std::string& message) const;
  /// For a key that belongs to another variant of this map (another impl or kind): when it is
  /// given, throws kInvalidConfig at it, "'<path>' <why>".
  void rejectIfGiven(const std::string& key, const std::string& why) const;

  /// The scalar text of this node; throws kWrongType naming `expected` for maps, lists and nulls.
  std::string scalar(const std::string& expected) const;

 private:
  YAML::Node m_node;
  std::shared_ptr<const Source> m_source;
  std::string m_path;
};

/// Short description of a node's YAML shape for error messages: "a map", "a list", "nothing".
std::string describeShape(const YAML::Node& node);

}  // namespace scoville::config
