#pragma once
// Declarative configuration schemas: one table per config struct that both parses YAML into the
// struct and generates the reference documentation (docs/config.md), so the two cannot disagree.
//
// A schema is a list of fields (key, member, type, requirement, range, description) plus cross-key
// rules. Parsing is strict: unknown keys (with a "did you mean"), duplicate keys, wrong types,
// missing units, out-of-range values and missing required keys are errors naming the file, line,
// column and dotted key. Defaults are written once, as text in the schema, and parsed by the
// same code path as user input.
//
// Usage:
//   const Schema<HbmConfig>& HbmConfig::schema() {
//     static const auto s = Schema<HbmConfig>("hbm", "HBM memory controller")
//         .quantity("bandwidth", &HbmConfig::bandwidth, dim::kBandwidth, required(), positive(), "...");
//     return s;
//   }

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "config/Node.h"
#include "config/Units.h"

namespace scoville::config {

/// Whether a key must be given, and its default (as YAML text) when it need not.
struct Need {
  bool isRequired = true;
  std::string defaultText;
};
inline Need required() {
  return Need{true, {}};
}
inline Need optional(std::string defaultText) {
  return Need{false, std::move(defaultText)};
}

/// Allowed numeric interval (in SI units for quantities).
struct Range {
  std::optional<double> min;
  bool minExclusive = false;
  std::optional<double> max;

  bool contains(double v) const {
    if (min && (minExclusive ? !(v > *min) : !(v >= *min))) return false;
    if (max && !(v <= *max)) return false;
    return true;
  }
  std::string describe() const;
};
inline Range positive() {
  return Range{0.0, true, std::nullopt};
}
inline Range nonNegative() {
  return Range{0.0, false, std::nullopt};
}
inline Range atLeast(double v) {
  return Range{v, false, std::nullopt};
}
inline Range between(double lo, double hi) {
  return Range{lo, false, hi};
}
inline Range anyValue() {
  return Range{};
}

/// One documented key of a schema.
struct FieldDoc {
  std::string key;
  std::string type;  ///< "bandwidth (e.g. '4.8 TB/s')", "integer", "map: hbm", ...
  bool required = true;
  std::string defaultText;  ///< empty when required
  std::string range;        ///< "> 0", "one of: fcfs, frfcfs", ...
  std::string description;
};

/// Type-independent part of a schema: its title, documentation and children (for docs).
class SchemaBase {
 public:
  SchemaBase(std::string title, std::string description)
      : m_title(std::move(title)), m_description(std::move(description)) {}
  virtual ~SchemaBase() = default;

  const std::string& title() const { return m_title; }
  const std::string& description() const { return m_description; }
  const std::vector<FieldDoc>& fields() const { return m_fieldDocs; }
  const std::vector<std::string>& ruleDescriptions() const { return m_ruleDocs; }
  const std::vector<const SchemaBase*>& children() const { return m_children; }
  std::vector<std::string> keys() const;

 protected:
  std::vector<FieldDoc> m_fieldDocs;
  std::vector<std::string> m_ruleDocs;
  std::vector<const SchemaBase*> m_children;

 private:
  std::string m_title;
  std::string m_description;
};

/// Writes Markdown reference documentation for `roots` and every schema reachable from them.
void writeMarkdown(std::ostream& out, const std::vector<const SchemaBase*>& roots);

// Scalar readers shared by all schemas; each throws ConfigError at the node's location.
double readQuantity(const Node& node, Dimension dimension, const Range& range);
double readNumber(const Node& node, const Range& range);
long long readInteger(const Node& node, const Range& range);
std::vector<int> readIntegerList(const Node& node, const Range& range, bool allowEmpty);
std::vector<double> readQuantityList(const Node& node, Dimension dimension, const Range& range);
std::vector<double> readNumberList(const Node& node, const Range& range);
/// A list (possibly empty) of non-empty texts.
std::vector<std::string> readTextList(const Node& node);
bool readFlag(const Node& node);
std::string readText(const Node& node);
std::string readChoice(const Node& node, const std::vector<std::string>& options);
/// Reads `{impl: NAME}` with NAME one of `names`; any other key is an unknown-key error.
std::string readImplementation(const Node& node, const std::vector<std::string>& names);
/// When `node` is a map whose only key is `include`, loads the YAML file it names (relative to the
/// including file's folder unless absolute) and returns its root map, located in that file and
/// keeping `node`'s key path; else nothing. Throws kFileNotFound, kEmptyFile, kYamlSyntax, and
/// kInvalidConfig for includes nested deeper than 8 (a cycle).
std::optional<Node> resolveInclude(const Node& node);
/// Checks that `node` is a map, that its keys are unique and all in `keys`; throws otherwise.
void checkMapKeys(const Node& node, const std::string& title, const std::vector<std::string>& keys);

template <class T>
class Schema : public SchemaBase {
 public:
  Schema(std::string title, std::string description) : SchemaBase(std::move(title), std::move(description)) {}

  /// A physical quantity with a unit, stored in SI units.
  Schema&& quantity(std::string key, double T::*member, Dimension dimension, Need need, Range range,
                    std::string description) && {
    std::string type = fmt::format("{} (e.g. '{}')", dimensionName(dimension), dimensionExample(dimension));
    std::string rangeText = range.describe();
    if (!rangeText.empty()) rangeText += fmt::format(" ({})", siUnit(dimension));
    add(std::move(key), std::move(type), std::move(need), std::move(rangeText), std::move(description),
        [member, dimension, range](T& out, const Node& n) { out.*member = readQuantity(n, dimension, range); });
    return std::move(*this);
  }

  /// A plain (unitless) real number.
  Schema&& number(std::string key, double T::*member, Need need, Range range, std::string description) && {
    add(std::move(key), "number", std::move(need), range.describe(), std::move(description),
        [member, range](T& out, const Node& n) { out.*member = readNumber(n, range); });
    return std::move(*this);
  }

  /// An integer count.
  template <class I>
  Schema&& integer(std::string key, I T::*member, Need need, Range range, std::string description) && {
    static_assert(std::is_integral_v<I>, "integer() needs an integral member");
    Range r = range;
    if (!r.max || *r.max > static_cast<double>(std::numeric_limits<I>::max())) {
      r.max = static_cast<double>(std::numeric_limits<I>::max());
    }
    add(std::move(key), "integer", std::move(need), range.describe(), std::move(description),
        [member, r](T& out, const Node& n) { out.*member = static_cast<I>(readInteger(n, r)); });
    return std::move(*this);
  }

  Schema&& flag(std::string key, bool T::*member, Need need, std::string description) && {
    add(std::move(key), "boolean (true/false)", std::move(need), "", std::move(description),
        [member](T& out, const Node& n) { out.*member = readFlag(n); });
    return std::move(*this);
  }

  /// Non-empty text. An optional key may default to `~` (null): absent, the member stays empty.
  Schema&& text(std::string key, std::string T::*member, Need need, std::string description) && {
    const bool mayBeEmpty = !need.isRequired && need.defaultText == "~";
    add(std::move(key), "text", std::move(need), "", std::move(description),
        [member, mayBeEmpty](T& out, const Node& n) {
          out.*member = mayBeEmpty && n.yaml().IsNull() ? std::string() : readText(n);
        });
    return std::move(*this);
  }

  /// One of a fixed set of names, mapped to an enum (or any value type).
  template <class E>
  Schema&& choice(std::string key, E T::*member, std::vector<std::pair<std::string, E>> options, Need need,
                  std::string description) && {
    std::vector<std::string> names;
    for (const auto& option : options) names.push_back(option.first);
    std::string rangeText = "one of: " + fmt::format("{}", fmt::join(names, ", "));
    add(std::move(key), "name", std::move(need), std::move(rangeText), std::move(description),
        [member, options, names](T& out, const Node& n) {
          const std::string chosen = readChoice(n, names);
          for (const auto& option : options) {
            if (option.first == chosen) out.*member = option.second;
          }
        });
    return std::move(*this);
  }

  /// A policy implementation chosen by name, written as a map `{impl: NAME}` (Ramulator-style), so
  /// implementation-specific parameters can join the map later without changing its shape.
  Schema&& implementation(std::string key, std::string T::*member, std::vector<std::string> names, Need need,
                          std::string description) && {
    std::string rangeText = "impl: one of " + fmt::format("{}", fmt::join(names, ", "));
    add(std::move(key), "map {impl: name}", std::move(need), std::move(rangeText), std::move(description),
        [member, names](T& out, const Node& n) { out.*member = readImplementation(n, names); });
    return std::move(*this);
  }

  /// A nested map parsed by another schema. optional("{}") means "all of the child's defaults".
  template <class C>
  Schema&& child(std::string key, C T::*member, const Schema<C>& schema, Need need, std::string description) && {
    m_children.push_back(&schema);
    add(std::move(key), fmt::format("map: [{}](#{})", schema.title(), schema.title()), std::move(need), "",
        std::move(description), [member, &schema](T& out, const Node& n) { out.*member = schema.parse(n); });
    return std::move(*this);
  }

  /// A nested map that may be absent (then the member stays empty); checks decide when it is needed.
  template <class C>
  Schema&& optionalChild(std::string key, std::optional<C> T::*member, const Schema<C>& schema,
                         std::string description) && {
    m_children.push_back(&schema);
    add(std::move(key), fmt::format("map: [{}](#{})", schema.title(), schema.title()), Need{false, "~"}, "",
        std::move(description), [member, &schema](T& out, const Node& n) {
          if (n.yaml().IsNull()) {
            out.*member = std::nullopt;
          } else {
            out.*member = schema.parse(n);
          }
        });
    return std::move(*this);
  }

  /// A list of nested maps, each parsed by another schema. An empty list is an error, unless the
  /// key is optional("[]").
  template <class C>
  Schema&& childList(std::string key, std::vector<C> T::*member, const Schema<C>& schema, Need need,
                     std::string description) && {
    m_children.push_back(&schema);
    const bool allowEmpty = !need.isRequired && need.defaultText == "[]";
    add(std::move(key), fmt::format("list of map: [{}](#{})", schema.title(), schema.title()), std::move(need),
        allowEmpty ? "" : "at least one entry", std::move(description),
        [member, &schema, allowEmpty](T& out, const Node& n) {
          if (!n.yaml().IsSequence() || (n.yaml().size() == 0 && !allowEmpty)) {
            n.fail(ErrorKind::kWrongType, fmt::format("key '{}' expects a non-empty list of {} maps, got {}", n.path(),
                                                      schema.title(), describeShape(n.yaml())));
          }
          std::vector<C> items;
          for (std::size_t i = 0; i < n.yaml().size(); ++i) {
            items.push_back(schema.parse(Node(n.yaml()[i], n.source(), fmt::format("{}[{}]", n.path(), i))));
          }
          out.*member = std::move(items);
        });
    return std::move(*this);
  }

  /// A non-empty list of physical quantities, e.g. `[1 ms, 10 ms]`, each within `range`.
  Schema&& quantityList(std::string key, std::vector<double> T::*member, Dimension dimension, Need need, Range range,
                        std::string description) && {
    std::string type = fmt::format("list of {} (e.g. '[{}]')", dimensionName(dimension), dimensionExample(dimension));
    std::string rangeText = range.describe();
    rangeText = rangeText.empty() ? "non-empty" : fmt::format("non-empty, each {} ({})", rangeText, siUnit(dimension));
    add(std::move(key), std::move(type), std::move(need), std::move(rangeText), std::move(description),
        [member, dimension, range](T& out, const Node& n) { out.*member = readQuantityList(n, dimension, range); });
    return std::move(*this);
  }

  /// A list of plain numbers, e.g. `[0.8, 0.6]`, each within `range`; `[]` (or an absent key
  /// whose default is `[]`) gives an empty list.
  Schema&& numberList(std::string key, std::vector<double> T::*member, Need need, Range range,
                      std::string description) && {
    std::string rangeText = range.describe();
    add(std::move(key), "list of plain numbers (e.g. '[0.8, 0.6]')", std::move(need),
        rangeText.empty() ? "" : "each " + rangeText, std::move(description),
        [member, range](T& out, const Node& n) { out.*member = readNumberList(n, range); });
    return std::move(*this);
  }

  /// A list of integers, e.g. `[0, 1, 2, 3]`, each within `range`. `allowEmpty` admits `[]`.
  Schema&& integerList(std::string key, std::vector<int> T::*member, Need need, Range range, bool allowEmpty,
                       std::string description) && {
    Range r = range;
    if (!r.max || *r.max > static_cast<double>(std::numeric_limits<int>::max())) {
      r.max = static_cast<double>(std::numeric_limits<int>::max());
    }
    std::string rangeText = range.describe();
    if (!allowEmpty) rangeText = rangeText.empty() ? "non-empty" : "non-empty, each " + rangeText;
    add(std::move(key), "list of integers", std::move(need), std::move(rangeText), std::move(description),
        [member, r, allowEmpty](T& out, const Node& n) { out.*member = readIntegerList(n, r, allowEmpty); });
    return std::move(*this);
  }

  /// A list of non-empty texts, e.g. `[a, b]`; `[]` is allowed.
  Schema&& textList(std::string key, std::vector<std::string> T::*member, Need need, std::string description) && {
    add(std::move(key), "list of text", std::move(need), "", std::move(description),
        [member](T& out, const Node& n) { out.*member = readTextList(n); });
    return std::move(*this);
  }

  /// A check across keys or into lists that names the offending element itself: `check` is called
  /// with the parsed struct and its node after the rules, and throws through Node::fail (use
  /// Node::at to point into the tree) when the input is wrong.
  Schema&& check(std::string description, std::function<void(const T&, const Node&)> check) && {
    m_ruleDocs.push_back(description);
    m_checks.push_back(std::move(check));
    return std::move(*this);
  }

  /// A cross-key rule checked after all keys are read; reported at `key`'s location.
  Schema&& rule(std::string key, std::string description, std::function<bool(const T&)> holds) && {
    m_ruleDocs.push_back(description);
    m_rules.push_back(RuleEntry{std::move(key), std::move(description), std::move(holds)});
    return std::move(*this);
  }

  /// Parses a map node into T. Throws ConfigError on any problem. A map that is exactly
  /// `{include: FILE}` is replaced by the map FILE holds (see resolveInclude).
  T parse(const Node& node) const {
    if (const std::optional<Node> included = resolveInclude(node)) return parse(*included);
    checkMapKeys(node, title(), keys());
    T out{};
    for (const Entry& entry : m_entries) {
      const YAML::Node value = node.yaml()[entry.key];
      if (value) {
        entry.parse(out, node.child(value, entry.key));
      } else if (entry.isRequired) {
        node.fail(ErrorKind::kMissingKey, fmt::format("missing required key '{}.{}' ({}: {})", node.path(), entry.key,
                                                      entry.type, entry.description));
      } else {
        entry.parse(out, node.child(*entry.defaultNode, entry.key));
      }
    }
    for (const RuleEntry& r : m_rules) {
      if (!r.holds(out)) {
        const YAML::Node at = node.yaml()[r.key];
        const std::string where = at ? node.locationOf(at, node.path() + "." + r.key) : node.location();
        throw ConfigError(ErrorKind::kInvalidConfig, where, fmt::format("in '{}': {}", node.path(), r.description));
      }
    }
    for (const auto& check : m_checks) check(out, node);
    return out;
  }

 private:
  struct Entry {
    std::string key;
    std::string type;
    std::string description;
    bool isRequired;
    std::shared_ptr<YAML::Node> defaultNode;
    std::function<void(T&, const Node&)> parse;
  };
  struct RuleEntry {
    std::string key;
    std::string description;
    std::function<bool(const T&)> holds;
  };

  void add(std::string key, std::string type, Need need, std::string rangeText, std::string description,
           std::function<void(T&, const Node&)> parse) {
    std::shared_ptr<YAML::Node> defaultNode;
    if (!need.isRequired) {
      // The default is parsed by the same reader as user input; a bad default fails at start-up.
      defaultNode = std::make_shared<YAML::Node>(YAML::Load(need.defaultText));
      T probe{};
      auto source = std::make_shared<Source>(Source{fmt::format("<default of {}.{}>", title(), key), {}, {}, {}});
      parse(probe, Node(*defaultNode, source, title() + "." + key));
    }
    m_fieldDocs.push_back(FieldDoc{key, type, need.isRequired, need.defaultText, std::move(rangeText), description});
    m_entries.push_back(Entry{std::move(key), std::move(type), std::move(description), need.isRequired,
                              std::move(defaultNode), std::move(parse)});
  }

  std::vector<Entry> m_entries;
  std::vector<RuleEntry> m_rules;
  std::vector<std::function<void(const T&, const Node&)>> m_checks;
};

}  // namespace scoville::config
