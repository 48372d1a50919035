#include "cli/SweepResults.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "cli/ReportWriter.h"
#include "config/ConfigError.h"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace scoville::cli::results {

std::vector<std::size_t> paretoFrontier(const std::vector<CurvePoint>& points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // By decreasing x, then decreasing y, then index (stable: the earlier of two equal points wins).
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].x != points[b].x) return points[a].x > points[b].x;
    return points[a].y > points[b].y;
  });
  std::vector<std::size_t> frontier;
  for (const std::size_t i : order) {
    // Every point kept so far has x >= this one's; this one survives only with a strictly higher y.
    if (frontier.empty() || points[i].y > points[frontier.back()].y) frontier.push_back(i);
  }
  return frontier;
}

std::optional<double> interpolateAt(const std::vector<CurvePoint>& frontier, double target) {
  if (frontier.empty()) return std::nullopt;
  for (std::size_t i = 0; i < frontier.size(); ++i) {
    if (frontier[i].x == target) return frontier[i].y;
    if (i + 1 < frontier.size() && frontier[i].x > target && frontier[i + 1].x < target) {
      const CurvePoint& a = frontier[i];
      const CurvePoint& b = frontier[i + 1];
      return a.y + (b.y - a.y) * (target - a.x) / (b.x - a.x);
    }
  }
  return std::nullopt;
}

namespace {

/// A frontier's interactivity for a note: whole tok/s/user, or three figures below 100.
std::string interactivity(double x) {
  return x >= 100 ? fmt::format("{:.0f}", x) : fmt::format("{:.3g}", x);
}

struct Series {
  std::string label;
  Json key;  // platform, model, scenario, fixed coordinates
  std::vector<std::size_t> rows;
};

/// A coordinate that moves a point along its curve rather than onto another curve: the load
/// (a decode step's batch is its concurrency).
bool alongTheCurve(const std::string& name) {
  return name == "concurrency" || name == "scenario.load.concurrency" || name == "scenario.batch";
}

std::string describeCoordinates(const Json& coordinates) {
  std::string text;
  for (const auto& [name, value] : coordinates.items()) {
    text += fmt::format("{}{}={}", text.empty() ? "" : ", ", name, value.get<std::string>());
  }
  return text;
}

Json orNull(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

double ratioOrZero(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

}  // namespace

Json combine(const std::vector<Row>& rows, const std::vector<std::pair<std::string, std::string>>& missing,
             const MergeOptions& options) {
  Json points = Json::array();
  std::vector<Series> series;
  std::set<std::string> models, scenarios;
  for (const Row& row : rows) {
    models.insert(row.summary["model"].get<std::string>());
    scenarios.insert(row.summary["scenario"].get<std::string>());
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    Json point = {{"id", row.id}, {"source", row.source}, {"coordinates", row.coordinates}};
    for (const auto& [k, v] : row.summary.items()) point[k] = v;
    points.push_back(std::move(point));

    Json fixed = Json::object();
    for (const auto& [name, value] : row.coordinates.items()) {
      if (!alongTheCurve(name)) fixed[name] = value;
    }
    Json key = {{"platform", row.summary["platform"]},
                {"model", row.summary["model"]},
                {"scenario", row.summary["scenario"]},
                {"coordinates", fixed}};
    auto it = std::find_if(series.begin(), series.end(), [&](const Series& s) { return s.key == key; });
    if (it == series.end()) {
      Series s;
      s.key = key;
      s.label = row.summary["platform"].get<std::string>();
      if (models.size() > 1) s.label += " / " + row.summary["model"].get<std::string>();
      if (scenarios.size() > 1) s.label += " / " + row.summary["scenario"].get<std::string>();
      if (!fixed.empty()) s.label += " (" + describeCoordinates(fixed) + ")";
      series.push_back(std::move(s));
      it = std::prev(series.end());
    }
    it->rows.push_back(i);
  }

  const double target = options.isoInteractivity;
  Json seriesJson = Json::array();
  std::vector<std::array<double, 4>> headline;  // peak per chip, peak per kW, at target per chip, at target per kW
  std::vector<std::array<bool, 2>> reached;     // the target lies on the per-chip / per-kW frontier
  for (Series& s : series) {
    // Along the curve in load order (concurrency, then interactivity descending).
    std::stable_sort(s.rows.begin(), s.rows.end(), [&](std::size_t a, std::size_t b) {
      const Json& ca = points[a]["concurrency"];
      const Json& cb = points[b]["concurrency"];
      if (!ca.is_null() && !cb.is_null() && ca != cb) return ca.get<double>() < cb.get<double>();
      return points[a]["interactivity_tok_per_s_per_user"].get<double>() >
             points[b]["interactivity_tok_per_s_per_user"].get<double>();
    });
    Json entry = {{"label", s.label}};
    for (const auto& [k, v] : s.key.items()) entry[k] = v;
    entry["points"] = s.rows;
    std::array<double, 4> values{};
    std::array<bool, 2> found{};
    const char* throughputKeys[2] = {"throughput_per_chip_tok_per_s", "throughput_per_kw_rated_tok_per_s"};
    const char* frontierKeys[2] = {"frontier_per_chip", "frontier_per_kw"};
    Json atTarget = {{"interactivity_tok_per_s_per_user", target}};
    for (int axis = 0; axis < 2; ++axis) {
      std::vector<CurvePoint> curve;
      for (const std::size_t r : s.rows) {
        curve.push_back({points[r]["interactivity_tok_per_s_per_user"].get<double>(),
                         points[r][throughputKeys[axis]]["total"].get<double>()});
      }
      std::vector<std::size_t> frontier = paretoFrontier(curve);
      std::vector<CurvePoint> frontierCurve;
      Json frontierRows = Json::array();
      for (const std::size_t f : frontier) {
        frontierCurve.push_back(curve[f]);
        frontierRows.push_back(s.rows[f]);
      }
      entry[frontierKeys[axis]] = frontierRows;
      double peak = 0.0;
      for (const CurvePoint& c : curve) peak = std::max(peak, c.y);
      const std::optional<double> at = interpolateAt(frontierCurve, target);
      values[axis] = peak;
      values[2 + axis] = at.value_or(0.0);
      found[axis] = at.has_value();
      atTarget[axis == 0 ? "throughput_per_chip_tok_per_s" : "throughput_per_kw_rated_tok_per_s"] = orNull(at);
      if (axis == 0 && !at && !frontierCurve.empty()) {
        atTarget["note"] = fmt::format("the frontier spans {} to {} tok/s/user", interactivity(frontierCurve.back().x),
                                       interactivity(frontierCurve.front().x));
      }
    }
    entry["peak_throughput_per_chip_tok_per_s"] = values[0];
    entry["peak_throughput_per_kw_rated_tok_per_s"] = values[1];
    entry["at_iso_interactivity"] = atTarget;
    headline.push_back(values);
    reached.push_back(found);
    seriesJson.push_back(std::move(entry));
  }

  // Ratios against the baseline series (the first unless named).
  std::size_t baseline = 0;
  if (!options.baseline.empty()) {
    const auto it =
        std::find_if(series.begin(), series.end(), [&](const Series& s) { return s.label == options.baseline; });
    if (it == series.end()) {
      std::vector<std::string> labels;
      for (const Series& s : series) labels.push_back(s.label);
      throw config::ConfigError(config::ErrorKind::kOutOfRange, "--baseline " + options.baseline,
                                fmt::format("no series has this label; the series are: {}", fmt::join(labels, "; ")));
    }
    baseline = static_cast<std::size_t>(it - series.begin());
  }
  Json comparison = Json::object();
  if (!series.empty()) {
    comparison["baseline"] = series[baseline].label;
    comparison["iso_interactivity_tok_per_s_per_user"] = target;
    Json table = Json::array();
    for (std::size_t i = 0; i < series.size(); ++i) {
      const auto& v = headline[i];
      const auto& b = headline[baseline];
      const auto ratioAt = [&](int axis) {
        return reached[i][axis] && reached[baseline][axis] ? Json(ratioOrZero(v[2 + axis], b[2 + axis]))
                                                           : Json(nullptr);
      };
      table.push_back({{"series", series[i].label},
                       {"peak_throughput_per_chip_ratio", ratioOrZero(v[0], b[0])},
                       {"peak_throughput_per_kw_rated_ratio", ratioOrZero(v[1], b[1])},
                       {"at_iso_interactivity_per_chip_ratio", ratioAt(0)},
                       {"at_iso_interactivity_per_kw_rated_ratio", ratioAt(1)}});
    }
    comparison["ratios"] = std::move(table);
  }

  Json missingJson = Json::array();
  for (const auto& [id, reason] : missing) missingJson.push_back({{"id", id}, {"reason", reason}});
  return {{"schema_version", kResultsSchemaVersion},
          {"generator", {{"name", "scoville"}, {"version", SCOVILLE_VERSION}}},
          {"throughput_basis",
           "total tokens (input + output) per second in the measurement window (steady state; InferenceX's "
           "tput_per_gpu counts the same tokens per request)"},
          {"points", std::move(points)},
          {"series", std::move(seriesJson)},
          {"comparison", std::move(comparison)},
          {"missing", std::move(missingJson)}};
}

namespace {

/// The value at `path` below `value`, or null where a key is missing or a step is not an object:
/// pointsCsv never reads past a map, whatever results it is given.
const Json& lookup(const Json& value, std::initializer_list<const char*> path) {
  static const Json kNull;
  const Json* at = &value;
  for (const char* key : path) {
    if (!at->is_object()) return kNull;
    const auto it = at->find(key);
    if (it == at->end()) return kNull;
    at = &*it;
  }
  return *at;
}

std::string csvField(const Json& value) {
  std::string text;
  if (value.is_null()) return "";
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_array()) {
    std::vector<std::string> parts;
    for (const auto& v : value) parts.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    text = fmt::format("{}", fmt::join(parts, " "));
  } else if (value.is_number_float()) {
    text = fmt::format("{}", value.get<double>());
  } else {
    text = value.dump();
  }
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

const std::vector<PointColumn>& pointColumns() {
  static const std::vector<PointColumn> kColumns{
      {"chips", "chips", nullptr},
      {"concurrency", "concurrency", nullptr},
      {"interactivity_tok_per_s_per_user", "interactivity_tok_per_s_per_user", nullptr},
      {"ttft_median_s", "ttft_s", "median"},
      {"ttft_p99_s", "ttft_s", "p99"},
      {"tpot_median_s", "tpot_s", "median"},
      {"itl_median_s", "itl_s", "median"},
      {"itl_p99_s", "itl_s", "p99"},
      {"e2el_median_s", "e2el_s", "median"},
      {"e2el_p99_s", "e2el_s", "p99"},
      {"throughput_total_tok_per_s", "throughput_tok_per_s", "total"},
      {"throughput_output_tok_per_s", "throughput_tok_per_s", "output"},
      {"throughput_per_chip_total_tok_per_s", "throughput_per_chip_tok_per_s", "total"},
      {"throughput_per_chip_output_tok_per_s", "throughput_per_chip_tok_per_s", "output"},
      {"throughput_per_kw_rated_total_tok_per_s", "throughput_per_kw_rated_tok_per_s", "total"},
      {"throughput_per_kw_average_total_tok_per_s", "throughput_per_kw_average_tok_per_s", "total"},
      {"rated_w_per_chip", "power", "rated_w_per_chip"},
      {"average_w_per_chip", "power", "average_w_per_chip"}};
  return kColumns;
}

std::string pointsCsv(const Json& results) {
  static const Json kNoItems = Json::array();
  const auto items = [](const Json& value) -> const Json& { return value.is_array() ? value : kNoItems; };
  const Json& points = items(lookup(results, {"points"}));
  // Coordinate columns: every name any point has, in first-seen order.
  std::vector<std::string> names;
  for (const auto& point : points) {
    const Json& coordinates = lookup(point, {"coordinates"});
    if (!coordinates.is_object()) continue;
    for (const auto& [name, value] : coordinates.items()) {
      if (alongTheCurve(name)) continue;  // the concurrency column
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  std::set<std::size_t> onChip, onKw;
  for (const auto& s : items(lookup(results, {"series"}))) {
    for (const auto& r : items(lookup(s, {"frontier_per_chip"}))) {
      if (r.is_number_unsigned()) onChip.insert(r.get<std::size_t>());
    }
    for (const auto& r : items(lookup(s, {"frontier_per_kw"}))) {
      if (r.is_number_unsigned()) onKw.insert(r.get<std::size_t>());
    }
  }
  // Sustained-power windows: those of the first point (every point of a sweep shares them).
  std::vector<Json> windows;
  if (!points.empty()) {
    for (const auto& w : items(lookup(points[0], {"power", "sustained_w_per_chip"}))) {
      windows.push_back(lookup(w, {"window_s"}));
    }
  }
  std::vector<std::string> header{"id", "platform", "model", "scenario", "kind"};
  header.insert(header.end(), names.begin(), names.end());
  for (const PointColumn& column : pointColumns()) header.emplace_back(column.header);
  for (const Json& w : windows) {
    header.push_back(w.is_number() ? fmt::format("sustained_{}s_max_w_per_chip", w.get<double>())
                                   : "sustained_max_w_per_chip");
  }
  header.insert(header.end(), {"energy_per_output_token_j", "on_frontier_per_chip", "on_frontier_per_kw"});

  std::string csv = fmt::format("{}\n", fmt::join(header, ","));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Json& p = points[i];
    std::vector<std::string> f;
    for (const char* key : {"id", "platform", "model", "scenario", "kind"}) f.push_back(csvField(lookup(p, {key})));
    for (const std::string& name : names) f.push_back(csvField(lookup(p, {"coordinates", name.c_str()})));
    for (const PointColumn& c : pointColumns()) {
      f.push_back(csvField(c.below == nullptr ? lookup(p, {c.key}) : lookup(p, {c.key, c.below})));
    }
    const Json& sustained = items(lookup(p, {"power", "sustained_w_per_chip"}));
    for (std::size_t w = 0; w < windows.size(); ++w) {
      f.push_back(w < sustained.size() ? csvField(lookup(sustained[w], {"max_w"})) : "");
    }
    f.push_back(csvField(lookup(p, {"power", "energy_per_output_token_j"})));
    f.push_back(onChip.count(i) ? "1" : "0");
    f.push_back(onKw.count(i) ? "1" : "0");
    csv += fmt::format("{}\n", fmt::join(f, ","));
  }
  return csv;
}

namespace {

nlohmann::json readJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot be read", path.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not JSON ({})", path.string(), e.what()));
  }
}

/// A point of a sweep.json, checked: `id` and `dir` strings, `coordinates` an object of strings.
struct ManifestPoint {
  std::string id;
  std::string dir;
  Json coordinates = Json::object();
};

std::vector<ManifestPoint> manifestPoints(const fs::path& file) {
  const nlohmann::json manifest = readJson(file);
  const auto malformed = [&](const std::string& what) {
    return std::runtime_error(fmt::format("{}: not a sweep manifest ({})", file.string(), what));
  };
  if (!manifest.is_object() || !manifest.contains("points") || !manifest["points"].is_array()) {
    throw malformed("expected an object whose `points` is an array");
  }
  std::vector<ManifestPoint> points;
  for (std::size_t i = 0; i < manifest["points"].size(); ++i) {
    const nlohmann::json& point = manifest["points"][i];
    const auto string = [&](const char* key) {
      if (!point.is_object() || !point.contains(key) || !point[key].is_string()) {
        throw malformed(fmt::format("points[{}].{}: expected a string", i, key));
      }
      return point[key].get<std::string>();
    };
    ManifestPoint p;
    p.id = string("id");
    p.dir = string("dir");
    if (!point.contains("coordinates") || !point["coordinates"].is_object()) {
      throw malformed(fmt::format("points[{}].coordinates: expected an object", i));
    }
    for (const auto& [name, value] : point["coordinates"].items()) {
      if (!value.is_string()) throw malformed(fmt::format("points[{}].coordinates.{}: expected a string", i, name));
      p.coordinates[name] = value;
    }
    points.push_back(std::move(p));
  }
  return points;
}

/// Rows not from a sweep have no coordinates: give each the overrides whose values differ between
/// them (scenario.load.concurrency as `concurrency`), so that they still form curves.
void deriveCoordinates(std::vector<Row>& rows) {
  std::map<std::string, std::set<std::string>> values;
  std::vector<std::map<std::string, std::string>> parsed(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& o : rows[i].summary["overrides"]) {
      const std::string text = o.get<std::string>();
      const auto eq = text.find('=');
      if (eq == std::string::npos) continue;
      parsed[i][text.substr(0, eq)] = text.substr(eq + 1);
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& [key, value] : parsed[i]) values[key].insert(value);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& entry : values) {
      // Not a structured binding: a lambda below captures the key (C++20; clang 14 refuses it).
      const std::string& key = entry.first;
      const std::set<std::string>& seen = entry.second;
      const auto it = parsed[i].find(key);
      if (seen.size() < 2 && it != parsed[i].end() &&
          std::all_of(parsed.begin(), parsed.end(), [&](const auto& p) { return p.count(key) > 0; })) {
        continue;  // the same in every row: not a coordinate
      }
      const std::string name = key == "scenario.load.concurrency" ? "concurrency" : key;
      rows[i].coordinates[name] = it == parsed[i].end() ? std::string("(as in the file)") : it->second;
    }
  }
}

/// Sweeps merged together may differ in their sweep-wide --set overrides (the same in every point
/// of a sweep, e.g. a serving policy): each such override whose value differs between the sweeps
/// becomes a coordinate of their points (`(as in the file)` where a sweep does not set it), so that
/// the sweeps form separate series instead of one.
void coordinatesAcrossSweeps(std::vector<Row>& rows, const std::vector<std::size_t>& sweepOf, std::size_t sweeps) {
  if (sweeps < 2) return;
  std::vector<std::map<std::string, std::string>> wide(sweeps);
  std::vector<bool> first(sweeps, true);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::map<std::string, std::string> mine;
    for (const auto& o : rows[i].summary["overrides"]) {
      const std::string text = o.get<std::string>();
      const auto eq = text.find('=');
      if (eq != std::string::npos) mine[text.substr(0, eq)] = text.substr(eq + 1);
    }
    std::map<std::string, std::string>& w = wide[sweepOf[i]];
    if (first[sweepOf[i]]) {
      w = mine;
      first[sweepOf[i]] = false;
      continue;
    }
    for (auto it = w.begin(); it != w.end();) {  // keep what every point of the sweep sets alike
      const auto m = mine.find(it->first);
      it = m == mine.end() || m->second != it->second ? w.erase(it) : std::next(it);
    }
  }
  std::set<std::string> keys;
  for (const auto& w : wide) {
    for (const auto& [key, value] : w) keys.insert(key);
  }
  for (const std::string& key : keys) {
    if (alongTheCurve(key)) continue;
    std::set<std::string> values;
    for (const auto& w : wide) values.insert(w.count(key) ? w.at(key) : std::string("(as in the file)"));
    if (values.size() < 2) continue;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& w = wide[sweepOf[i]];
      if (rows[i].coordinates.count(key) == 0) {
        rows[i].coordinates[key] = w.count(key) ? w.at(key) : std::string("(as in the file)");
      }
    }
  }
}

}  // namespace

std::vector<Row> loadRows(const std::vector<std::string>& inputs,
                          std::vector<std::pair<std::string, std::string>>& missing) {
  std::vector<Row> rows;
  std::vector<Row> loose;            // reports that are not points of a sweep
  std::vector<std::size_t> sweepOf;  // per row: the sweep it came from
  std::size_t sweeps = 0;
  for (const std::string& input : inputs) {
    const fs::path path(input);
    if (!fs::exists(path)) {
      throw config::ConfigError(config::ErrorKind::kFileNotFound, input,
                                "no such file or directory (expected a sweep directory, a directory of runs, "
                                "or a report.json)");
    }
    if (fs::is_directory(path) && fs::exists(path / "sweep.json")) {
      for (const ManifestPoint& point : manifestPoints(path / "sweep.json")) {
        const fs::path report = path / point.dir / "report.json";
        if (!fs::exists(report)) {
          missing.emplace_back(point.id, "no report (not run yet, or the run failed: see its run.log)");
          continue;
        }
        Row row = rowOf(readJson(report), report.string());
        row.id = point.id;
        row.coordinates = point.coordinates;
        rows.push_back(std::move(row));
        sweepOf.push_back(sweeps);
      }
      ++sweeps;
    } else if (fs::is_directory(path)) {
      std::vector<fs::path> reports;
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().filename() == "report.json") reports.push_back(entry.path());
      }
      std::sort(reports.begin(), reports.end());
      for (const fs::path& report : reports) {
        Row row = rowOf(readJson(report), report.string());
        row.id = fs::relative(report.parent_path(), path).string();
        loose.push_back(std::move(row));
      }
    } else {
      Row row = rowOf(readJson(path), path.string());
      row.id = fs::absolute(path).parent_path().filename().string();
      loose.push_back(std::move(row));
    }
  }
  coordinatesAcrossSweeps(rows, sweepOf, sweeps);
  deriveCoordinates(loose);
  for (Row& row : loose) rows.push_back(std::move(row));
  return rows;
}

}  // namespace scoville::cli::results
