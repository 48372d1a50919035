#include "config/Node.h"

#include <algorithm>

#include <fmt/format.h>

namespace scoville::config {

Node::Node(YAML::Node node, std::shared_ptr<const Source> source, std::string path)
    : m_node(std::move(node)), m_source(std::move(source)), m_path(std::move(path)) {}

std::string Node::location() const {
  return locationOf(m_node, m_path);
}

std::string Node::locationOf(const YAML::Node& node, const std::string& path) const {
  // An override replaces a whole subtree: find the longest overridden prefix of this path, whose
  // segments end at a '.' or at a list index ("chips[0].count" lies under "chips").
  for (std::string prefix = path;;) {
    if (auto it = m_source->overrideText.find(prefix); it != m_source->overrideText.end()) return it->second;
    const std::size_t end = prefix.find_last_of(".[");
    if (end == std::string::npos || end == 0) break;
    prefix.resize(end);
  }
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) {
    // A map an override created to hold its key: point at that override.
    const auto it = m_source->overrideText.lower_bound(path + ".");
    if (it != m_source->overrideText.end() && it->first.rfind(path + ".", 0) == 0) return it->second;
    return m_source->file;
  }
  return fmt::format("{}:{}:{}", m_source->file, mark.line + 1, mark.column + 1);
}

Node Node::child(const YAML::Node& node, const std::string& key) const {
  return Node(node, m_source, m_path.empty() ? key : m_path + "." + key);
}

Node Node::at(const std::string& key) const {
  if (!m_node.IsMap()) return *this;
  const YAML::Node value = m_node[key];
  return value ? child(value, key) : *this;
}

void Node::rejectIfGiven(const std::string& key, const std::string& why) const {
  if (!m_node.IsMap() || !m_node[key]) return;
  const Node given = at(key);
  given.fail(ErrorKind::kInvalidConfig, fmt::format("'{}' {}", given.path(), why));
}

Node Node::at(std::size_t index) const {
  if (!m_node.IsSequence() || index >= m_node.size()) return *this;
  return Node(m_node[index], m_source, fmt::format("{}[{}]", m_path, index));
}

void Node::fail(ErrorKind kind, const std::string& message) const {
  throw ConfigError(kind, location(), message);
}

std::string Node::scalar(const std::string& expected) const {
  if (!m_node.IsScalar()) {
    fail(ErrorKind::kWrongType, fmt::format("key '{}' expects {}, got {}", m_path, expected, describeShape(m_node)));
  }
  return m_node.Scalar();
}

std::string describeShape(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: {
      // The first line, and at most 60 characters of it: a file that is not YAML (or not meant to
      // be shown) is not echoed whole.
      const std::string& text = node.Scalar();
      const std::size_t end = std::min<std::size_t>(text.find_first_of("\r\n"), 60);
      return end >= text.size() ? fmt::format("'{}'", text) : fmt::format("'{}...' (shortened)", text.substr(0, end));
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "something else";
}

}  // namespace scoville::config
