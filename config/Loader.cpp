#include "config/Loader.h"
#include "config/InputDigest.h"
#include "config/Text.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#ifndef SCOVILLE_SOURCE_DIR
#error "SCOVILLE_SOURCE_DIR must be defined by the build"
#endif

namespace fs = std::filesystem;

namespace scoville::config {

void Overrides::add(const std::string& option) {
  const std::string where = "--set " + option;
  const std::size_t eq = option.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(ErrorKind::kBadOverride, where, "expected --set root.key=value (e.g. platform.chip.clock=2GHz)");
  }
  const std::string path = option.substr(0, eq);
  const std::string value = option.substr(eq + 1);
  const std::string root = path.substr(0, path.find('.'));
  if (std::find(m_roots.begin(), m_roots.end(), root) == m_roots.end() || root == path) {
    throw ConfigError(
        ErrorKind::kBadOverride, where,
        fmt::format("'{}' must start with one of: {} followed by a dotted key", path, fmt::join(m_roots, ". ")));
  }
  if (path.find("..") != std::string::npos || path.back() == '.') {
    throw ConfigError(ErrorKind::kBadOverride, where, fmt::format("'{}' has an empty key segment", path));
  }
  const auto [it, inserted] = m_values.emplace(path, value);
  if (!inserted && it->second != value) {
    throw ConfigError(ErrorKind::kConflictingOverride, where,
                      fmt::format("'{}' is set twice with different values: '{}' and '{}'", path, it->second, value));
  }
}

std::vector<std::pair<std::string, std::string>> Overrides::forRoot(const std::string& root) const {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string prefix = root + ".";
  for (const auto& [path, value] : m_values) {
    if (path.rfind(prefix, 0) == 0) out.emplace_back(path.substr(prefix.size()), value);
  }
  return out;
}

std::string dataDirectory() {
  if (const char* env = std::getenv("SCOVILLE_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return SCOVILLE_SOURCE_DIR;
}

std::vector<std::string> shippedNames(const std::string& subdir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(dataDirectory()) / subdir, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolveConfigFile(const std::string& optionName, const std::string& subdir, const std::string& nameOrFile) {
  return resolveConfigFile(optionName, "--" + optionName, subdir, nameOrFile);
}

std::string resolveConfigFile(const std::string& what, const std::string& givenAs, const std::string& subdir,
                              const std::string& nameOrFile) {
  const bool isPath = nameOrFile.find('/') != std::string::npos || fs::path(nameOrFile).extension() == ".yaml" ||
                      fs::path(nameOrFile).extension() == ".yml";
  if (isPath) {
    std::error_code ec;
    if (!fs::is_regular_file(nameOrFile, ec)) {
      const fs::file_status status = fs::status(nameOrFile, ec);
      const char* problem = !fs::exists(status)        ? "not found"
                            : fs::is_directory(status) ? "is a directory, not a file"
                                                       : "is not a regular file (a FIFO, device or socket)";
      throw ConfigError(ErrorKind::kFileNotFound, nameOrFile,
                        fmt::format("{} file {} (from {} {})", what, problem, givenAs, nameOrFile));
    }
    return nameOrFile;
  }
  const fs::path shipped = fs::path(dataDirectory()) / subdir / (nameOrFile + ".yaml");
  std::error_code ec;
  if (fs::is_regular_file(shipped, ec)) return shipped.string();
  const std::vector<std::string> names = shippedNames(subdir);
  const std::string near = nearestMatch(nameOrFile, names);
  throw ConfigError(ErrorKind::kUnknownName, givenAs + " " + nameOrFile,
                    fmt::format("no shipped {} named '{}'{}; shipped: {} (or give a path to a .yaml file)", what,
                                nameOrFile, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                                names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
}

namespace {

// One segment of an override path: "key" or "key[3]" (one index at most).
struct Segment {
  std::string key;
  std::optional<std::size_t> index;
};

Segment parseSegment(const std::string& text, const std::string& where) {
  const std::size_t open = text.find('[');
  if (open == std::string::npos) return Segment{text, std::nullopt};
  const std::string digits = text.substr(open + 1, text.size() - open - 2);
  if (open == 0 || text.back() != ']' || digits.empty() ||
      digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) {
    throw ConfigError(ErrorKind::kBadOverride, where,
                      fmt::format("'{}' is not a key or key[index] (e.g. chip_types[0])", text));
  }
  return Segment{text.substr(0, open), static_cast<std::size_t>(std::stoul(digits))};
}

bool isInclude(const YAML::Node& node) {
  return node.IsMap() && node.size() == 1 && node["include"];
}

// Sets root[a][b][c] = value for the dotted path "a.b.c" (segments may index lists: "a[0].b"),
// creating maps on the way. Below an {include: FILE} map the rest of the path is handed to the
// include (returned as the deferred override) and applied when the include is loaded.
std::optional<Source::Deferred> applyOverride(YAML::Node map, const std::string& dotted, const std::string& done,
                                              const YAML::Node& value, const std::string& valueText,
                                              const std::string& where) {
  const std::size_t dot = dotted.find('.');
  const Segment segment = parseSegment(dotted.substr(0, dot), where);
  const std::string here = done + "." + segment.key;
  if (map.IsDefined() && !map.IsMap() && !map.IsNull()) {
    throw ConfigError(ErrorKind::kBadOverride, where,
                      fmt::format("cannot set '{}': its parent is {}, not a map", here, describeShape(map)));
  }
  if (!segment.index) {
    if (dot == std::string::npos) {
      map[segment.key] = value;
      return std::nullopt;
    }
    const YAML::Node next = map[segment.key];  // creates an empty entry when missing
    if (isInclude(next)) return Source::Deferred{here, dotted.substr(dot + 1), valueText, where};
    return applyOverride(next, dotted.substr(dot + 1), here, value, valueText, where);
  }
  // Note: YAML::Node assignment copies content into the referenced node, so every step below
  // binds a fresh handle instead of reassigning one.
  const YAML::Node list = map[segment.key];
  if (!list.IsSequence() || *segment.index >= list.size()) {
    throw ConfigError(
        ErrorKind::kBadOverride, where,
        fmt::format("cannot set '{}[{}]': '{}' is {}", here, *segment.index, here,
                    list.IsSequence() ? fmt::format("a list of {} entries", list.size()) : describeShape(list)));
  }
  const std::string path = fmt::format("{}[{}]", here, *segment.index);
  YAML::Node element = list[*segment.index];
  if (dot == std::string::npos) {
    element = value;
    return std::nullopt;
  }
  if (isInclude(element)) return Source::Deferred{path, dotted.substr(dot + 1), valueText, where};
  return applyOverride(element, dotted.substr(dot + 1), path, value, valueText, where);
}

struct PendingOverride {
  std::string path;   // below the root
  std::string value;  // YAML text
  std::string where;  // location for errors
};

std::vector<PendingOverride> fromOptions(const std::string& rootKey,
                                         const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<PendingOverride> out;
  for (const auto& [path, value] : overrides) {
    out.push_back(PendingOverride{path, value, fmt::format("--set {}.{}={}", rootKey, path, value)});
  }
  return out;
}

Node finish(const std::string& rootKey, YAML::Node document, std::shared_ptr<Source> source,
            const std::vector<PendingOverride>& overrides) {
  if (!document || document.IsNull()) {
    throw ConfigError(ErrorKind::kEmptyFile, source->file,
                      fmt::format("the file is empty; expected a {} map", rootKey));
  }
  if (!document.IsMap()) {
    throw ConfigError(ErrorKind::kWrongType, source->file,
                      fmt::format("expected the file to hold a {} map, got {}", rootKey, describeShape(document)));
  }
  for (const PendingOverride& override : overrides) {
    const std::string& path = override.path;
    const std::string& text = override.value;
    const std::string fullPath = rootKey + "." + path;
    const std::string& where = override.where;
    YAML::Node value;
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw ConfigError(ErrorKind::kBadOverride, where, fmt::format("value is not valid YAML: {}", e.msg));
    }
    if (auto deferred = applyOverride(document, path, rootKey, value, text, where)) {
      source->deferred.push_back(std::move(*deferred));
    } else {
      source->overrideText[fullPath] = where;
    }
  }
  return Node(document, std::move(source), rootKey);
}

Node parseText(const std::string& rootKey, const std::string& text, const std::string& sourceName,
               const std::vector<PendingOverride>& overrides) {
  auto source = std::make_shared<Source>(Source{sourceName, {}, {}, {}});
  // A second document ('---' at the start of a line after content) would be ignored by
  // YAML::Load. Found by a line scan: yaml-cpp's LoadAll loops for ever on some inputs (a
  // document that starts with ',', test/fuzz/regressions/comma-document-hangs-scenario.yaml).
  {
    std::size_t lineStart = 0;
    int line = 1;
    bool content = false;
    while (lineStart < text.size()) {
      const std::size_t end = std::min(text.find('\n', lineStart), text.size());
      const std::string_view l(text.data() + lineStart, end - lineStart);
      const bool separator = l.rfind("---", 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
      if (separator && content) {
        throw ConfigError(ErrorKind::kYamlSyntax, fmt::format("{}:{}:1", sourceName, line),
                          "a second YAML document ('---'); a configuration file holds one");
      }
      const std::string_view trimmed = trimBlanks(l);
      if (!separator && !trimmed.empty() && trimmed.front() != '#' && trimmed.front() != '%') content = true;
      if (separator && trimBlanks(l.substr(3)).size() > 0 && trimBlanks(l.substr(3)).front() != '#') content = true;
      lineStart = end + 1;
      ++line;
    }
  }
  YAML::Node document;
  try {
    document = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(ErrorKind::kYamlSyntax, fmt::format("{}:{}:{}", sourceName, e.mark.line + 1, e.mark.column + 1),
                      fmt::format("YAML syntax error: {}", e.msg));
  } catch (const YAML::Exception& e) {
    throw ConfigError(ErrorKind::kYamlSyntax, sourceName, fmt::format("YAML error: {}", e.msg));
  }
  return finish(rootKey, std::move(document), std::move(source), overrides);
}

/// Configuration files are small; anything larger is a mistake (or /dev/zero).
constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;

std::string readFile(const std::string& rootKey, const std::string& file) {
  std::error_code ec;
  if (fs::exists(file, ec) && !fs::is_regular_file(file, ec)) {
    throw ConfigError(ErrorKind::kFileNotFound, file, fmt::format("the {} file is not a regular file", rootKey));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(ErrorKind::kFileNotFound, file, fmt::format("cannot open {} file", rootKey));
  if (const std::uintmax_t size = fs::file_size(file, ec); !ec && size > kMaxConfigBytes) {
    throw ConfigError(
        ErrorKind::kInvalidConfig, file,
        fmt::format("the {} file holds {} bytes; configuration files are at most {}", rootKey, size, kMaxConfigBytes));
  }
  std::ostringstream text;
  text << in.rdbuf();
  InputRecorder::note("file", text.str());
  return text.str();
}

}  // namespace

Node loadConfigText(const std::string& rootKey, const std::string& text, const std::string& sourceName,
                    const std::vector<std::pair<std::string, std::string>>& overrides) {
  return parseText(rootKey, text, sourceName, fromOptions(rootKey, overrides));
}

Node loadConfigFile(const std::string& rootKey, const std::string& file,
                    const std::vector<std::pair<std::string, std::string>>& overrides) {
  return parseText(rootKey, readFile(rootKey, file), file, fromOptions(rootKey, overrides));
}

Node loadIncludedFile(const Node& includer, const std::string& file) {
  std::vector<PendingOverride> overrides;
  for (const Source::Deferred& d : includer.source()->deferred) {
    if (d.at == includer.path()) overrides.push_back(PendingOverride{d.path, d.value, d.where});
  }
  Node loaded = parseText(includer.path(), readFile(includer.path(), file), file, overrides);
  auto source = std::const_pointer_cast<Source>(loaded.source());
  source->includedFrom = includer.source()->includedFrom;
  source->includedFrom.push_back(includer.source()->file);
  return loaded;
}

}  // namespace scoville::config
