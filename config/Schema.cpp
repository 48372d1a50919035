#include "config/Schema.h"

#include <filesystem>

#include "config/Loader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

namespace scoville::config {

std::string Range::describe() const {
  auto num = [](double v) { return fmt::format("{:g}", v); };
  if (min && max) return fmt::format("{} {} .. {}", minExclusive ? ">" : ">=", num(*min), num(*max));
  if (min) return fmt::format("{} {}", minExclusive ? ">" : ">=", num(*min));
  if (max) return fmt::format("<= {}", num(*max));
  return "";
}

std::vector<std::string> SchemaBase::keys() const {
  std::vector<std::string> out;
  for (const FieldDoc& f : m_fieldDocs) out.push_back(f.key);
  return out;
}

namespace {
void checkRange(const Node& node, double value, const Range& range, const std::string& shown) {
  if (!range.contains(value)) {
    node.fail(ErrorKind::kOutOfRange,
              fmt::format("key '{}' = {} is out of range: must be {}", node.path(), shown, range.describe()));
  }
}
}  // namespace

double readQuantity(const Node& node, Dimension dimension, const Range& range) {
  const std::string text =
      node.scalar(fmt::format("{} such as '{}'", aDimension(dimension), dimensionExample(dimension)));
  double value = 0.0;
  try {
    value = parseQuantityAs(text, dimension);
  } catch (const UnitError& e) {
    node.fail(ErrorKind::kBadUnit, fmt::format("key '{}': {}", node.path(), e.what()));
  }
  if (!range.contains(value)) {
    node.fail(ErrorKind::kOutOfRange, fmt::format("key '{}' = '{}' is out of range: must be {} {}", node.path(), text,
                                                  range.describe(), siUnit(dimension)));
  }
  if (const PlausibleRange p = plausibleRange(dimension); p.max > 0.0 && value != 0.0) {
    const double magnitude = std::fabs(value);
    if (magnitude < p.min || magnitude > p.max) {
      node.fail(ErrorKind::kOutOfRange,
                fmt::format("key '{}' = '{}' is implausible: {} must lie within {} .. {} (docs/config.md#plausible-"
                            "ranges); a unit slip?",
                            node.path(), text, aDimension(dimension),
                            p.min > 0.0 ? formatQuantity(p.min, dimension) : "0", formatQuantity(p.max, dimension)));
    }
  }
  return value;
}

double readNumber(const Node& node, const Range& range) {
  const std::string text = node.scalar("a number");
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value)) {
    node.fail(ErrorKind::kWrongType, fmt::format("key '{}' expects a number, got '{}'", node.path(), text));
  }
  checkRange(node, value, range, text);
  return value;
}

long long readInteger(const Node& node, const Range& range) {
  const std::string text = node.scalar("an integer");
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    node.fail(ErrorKind::kOutOfRange, fmt::format("key '{}' = {} does not fit an integer", node.path(), text));
  }
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    node.fail(ErrorKind::kWrongType, fmt::format("key '{}' expects an integer, got '{}'", node.path(), text));
  }
  checkRange(node, static_cast<double>(value), range, text);
  return value;
}

std::optional<Node> resolveInclude(const Node& node) {
  const YAML::Node& map = node.yaml();
  if (!map.IsMap() || map.size() != 1 || !map["include"]) return std::nullopt;
  const std::string name = node.child(map["include"], "include").scalar("a file name");
  namespace fs = std::filesystem;
  fs::path file(name);
  if (file.is_relative()) file = fs::path(node.source()->file).parent_path() / file;
  file = file.lexically_normal();
  // Cycles are found on canonical paths, so "./b.yaml" and "b.yaml" are one file.
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  const auto same = [&](const std::string& other) {
    std::error_code otherEc;
    return fs::weakly_canonical(other, otherEc) == canonical;
  };
  if (same(node.source()->file)) {
    node.fail(ErrorKind::kInvalidConfig, fmt::format("include '{}' includes the file it is in", name));
  }
  for (const std::string& from : node.source()->includedFrom) {
    if (same(from)) {
      node.fail(ErrorKind::kInvalidConfig,
                fmt::format("include '{}' is a cycle: {} already includes this file", name, from));
    }
  }
  if (node.source()->includedFrom.size() >= 8) {
    node.fail(ErrorKind::kInvalidConfig, fmt::format("include '{}' nests more than 8 files deep", name));
  }
  try {
    return loadIncludedFile(node, file.string());
  } catch (const ConfigError& e) {
    // Name the including key too: the file alone does not say who asked for it.
    throw ConfigError(e.kind(), e.location(),
                      fmt::format("{} (included by '{}' at {})", e.message(), node.path(), node.location()));
  }
}

std::vector<int> readIntegerList(const Node& node, const Range& range, bool allowEmpty) {
  const YAML::Node& list = node.yaml();
  if (!list.IsSequence() || (!allowEmpty && list.size() == 0)) {
    node.fail(ErrorKind::kWrongType, fmt::format("key '{}' expects a {}list of integers, got {}", node.path(),
                                                 allowEmpty ? "" : "non-empty ", describeShape(list)));
  }
  std::vector<int> values;
  for (std::size_t i = 0; i < list.size(); ++i) {
    values.push_back(static_cast<int>(readInteger(node.at(i), range)));
  }
  return values;
}

std::vector<std::string> readTextList(const Node& node) {
  const YAML::Node& list = node.yaml();
  if (!list.IsSequence()) {
    node.fail(ErrorKind::kWrongType,
              fmt::format("key '{}' expects a list of text, got {}", node.path(), describeShape(list)));
  }
  std::vector<std::string> values;
  for (std::size_t i = 0; i < list.size(); ++i) values.push_back(readText(node.at(i)));
  return values;
}

std::vector<double> readQuantityList(const Node& node, Dimension dimension, const Range& range) {
  const YAML::Node& list = node.yaml();
  if (!list.IsSequence() || list.size() == 0) {
    node.fail(ErrorKind::kWrongType,
              fmt::format("key '{}' expects a non-empty list of {} values such as '{}', got {}", node.path(),
                          dimensionName(dimension), dimensionExample(dimension), describeShape(list)));
  }
  std::vector<double> values;
  for (std::size_t i = 0; i < list.size(); ++i) values.push_back(readQuantity(node.at(i), dimension, range));
  return values;
}

std::vector<double> readNumberList(const Node& node, const Range& range) {
  const YAML::Node& list = node.yaml();
  if (!list.IsSequence()) {
    node.fail(ErrorKind::kWrongType,
              fmt::format("key '{}' expects a list of plain numbers such as '[0.8, 0.6]', got {}", node.path(),
                          describeShape(list)));
  }
  std::vector<double> values;
  for (std::size_t i = 0; i < list.size(); ++i) values.push_back(readNumber(node.at(i), range));
  return values;
}

bool readFlag(const Node& node) {
  const std::string text = node.scalar("true or false");
  if (text == "true") return true;
  if (text == "false") return false;
  node.fail(ErrorKind::kWrongType, fmt::format("key '{}' expects true or false, got '{}'", node.path(), text));
}

std::string readText(const Node& node) {
  std::string text = node.scalar("text");
  if (text.empty()) node.fail(ErrorKind::kWrongType, fmt::format("key '{}' expects non-empty text", node.path()));
  return text;
}

std::string readChoice(const Node& node, const std::vector<std::string>& options) {
  const std::string text = node.scalar(fmt::format("one of: {}", fmt::join(options, ", ")));
  if (std::find(options.begin(), options.end(), text) != options.end()) return text;
  const std::string near = nearestMatch(text, options);
  node.fail(ErrorKind::kOutOfRange,
            fmt::format("key '{}' = '{}' is not one of: {}{}", node.path(), text, fmt::join(options, ", "),
                        near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
}

std::string readImplementation(const Node& node, const std::vector<std::string>& names) {
  checkMapKeys(node, "implementation choice", {"impl"});
  const YAML::Node impl = node.yaml()["impl"];
  if (!impl) node.fail(ErrorKind::kMissingKey, fmt::format("missing required key '{}.impl'", node.path()));
  return readChoice(node.child(impl, "impl"), names);
}

void checkMapKeys(const Node& node, const std::string& title, const std::vector<std::string>& keys) {
  if (!node.yaml().IsMap()) {
    node.fail(ErrorKind::kWrongType, fmt::format("key '{}' expects a map of {} keys ({}), got {}", node.path(), title,
                                                 fmt::join(keys, ", "), describeShape(node.yaml())));
  }
  std::set<std::string> seen;
  for (const auto& item : node.yaml()) {
    const YAML::Node& keyNode = item.first;
    if (!keyNode.IsScalar()) {
      throw ConfigError(ErrorKind::kWrongType, node.locationOf(keyNode, node.path()),
                        fmt::format("in '{}': map keys must be plain names", node.path()));
    }
    const std::string key = keyNode.Scalar();
    const std::string keyPath = node.path() + "." + key;
    if (!seen.insert(key).second) {
      throw ConfigError(ErrorKind::kDuplicateKey, node.locationOf(keyNode, keyPath),
                        fmt::format("key '{}' is given twice", keyPath));
    }
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      const std::string near = nearestMatch(key, keys);
      throw ConfigError(
          ErrorKind::kUnknownKey, node.locationOf(keyNode, keyPath),
          fmt::format("unknown key '{}' in '{}' ({}){}; valid keys: {}", key, node.path(), title,
                      near.empty() ? "" : fmt::format("; did you mean '{}'?", near), fmt::join(keys, ", ")));
    }
  }
}

namespace {
void collect(const SchemaBase* schema, std::vector<const SchemaBase*>& order, std::set<std::string>& seen) {
  if (!seen.insert(schema->title()).second) return;
  order.push_back(schema);
  for (const SchemaBase* child : schema->children()) collect(child, order, seen);
}

std::string escapeCell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}
}  // namespace

void writeMarkdown(std::ostream& out, const std::vector<const SchemaBase*>& roots) {
  std::vector<const SchemaBase*> order;
  std::set<std::string> seen;
  for (const SchemaBase* root : roots) collect(root, order, seen);
  for (const SchemaBase* schema : order) {
    out << "## " << schema->title() << "\n\n" << schema->description() << "\n\n";
    out << "| key | type | required | default | allowed | description |\n";
    out << "|---|---|---|---|---|---|\n";
    for (const FieldDoc& f : schema->fields()) {
      out << "| `" << f.key << "` | " << escapeCell(f.type) << " | " << (f.required ? "yes" : "no") << " | "
          << (f.required ? "" : "`" + escapeCell(f.defaultText) + "`") << " | " << escapeCell(f.range) << " | "
          << escapeCell(f.description) << " |\n";
    }
    if (!schema->ruleDescriptions().empty()) {
      out << "\nRules checked after reading:\n\n";
      for (const std::string& r : schema->ruleDescriptions()) out << "- " << r << "\n";
    }
    out << "\n";
  }
}

}  // namespace scoville::config
