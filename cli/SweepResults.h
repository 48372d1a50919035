#pragma once
// Combining run reports into one result set: a row per point, the latency-throughput series
// (one curve per platform and fixed inputs), their Pareto frontiers, the iso-interactivity
// comparison between platforms, and the CSV views. Written by `scoville sweep` at its end and by
// `scoville merge` (docs/sweeps.md has results.json's layout).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace scoville::cli::results {

/// Version of results.json's layout. Bump on any incompatible change.
inline constexpr int kResultsSchemaVersion = 1;

/// InferenceX's and the published comparison's interactivity target, tok/s/user.
inline constexpr double kDefaultIsoInteractivity = 169.0;

/// One point of a latency-throughput curve: x interactivity (tok/s/user), y a throughput.
struct CurvePoint {
  double x = 0.0;
  double y = 0.0;
};

/// Indices of the points no other point beats on both axes (higher x and higher y are better; a
/// point equal on both to an earlier one is dominated by it), ordered by decreasing x.
std::vector<std::size_t> paretoFrontier(const std::vector<CurvePoint>& points);

/// y at x = `target` along the frontier `frontier` (ordered by decreasing x), interpolated
/// linearly between the two frontier points around it; nothing when `target` lies outside the
/// frontier's x range.
std::optional<double> interpolateAt(const std::vector<CurvePoint>& frontier, double target);

/// A run's report reduced to what comparisons need.
struct Row {
  std::string id;      ///< the sweep point's id, or the report's path relative to its input
  std::string source;  ///< the report.json it came from (results.json: relative to its directory)
  nlohmann::ordered_json coordinates = nlohmann::ordered_json::object();  ///< the sweep's varied keys
  nlohmann::ordered_json summary;  ///< results.json's `points[]` entry (docs/sweeps.md)
};

/// Reduces `report` (a parsed report.json) to a row. Throws std::runtime_error naming `source`
/// when the report lacks what a row needs.
Row rowOf(const nlohmann::json& report, const std::string& source);

struct MergeOptions {
  double isoInteractivity = kDefaultIsoInteractivity;
  std::string baseline;  ///< series label the ratios are against ("": the first series)
};

/// results.json: the rows, the series with their frontiers and iso-interactivity values, the
/// comparison against the baseline, and the points that have no result (`missing`: id, reason).
nlohmann::ordered_json combine(const std::vector<Row>& rows,
                               const std::vector<std::pair<std::string, std::string>>& missing,
                               const MergeOptions& options);

/// A metric column of points.csv: its header, and the key of a results.json point it holds
/// (`below`: the key under that one, or nullptr).
struct PointColumn {
  const char* header;
  const char* key;
  const char* below;
};

/// points.csv's metric columns between the coordinates and the sustained-power windows, in order.
const std::vector<PointColumn>& pointColumns();

/// points.csv: one line per point with its coordinates and headline metrics.
std::string pointsCsv(const nlohmann::ordered_json& results);

/// Reads rows from each input: a sweep directory (its sweep.json lists the points; a point with
/// no valid report goes to `missing`), any other directory (every report.json below it, in path
/// order), or a report.json file. Throws config::ConfigError (kFileNotFound) for an input that
/// does not exist and std::runtime_error for an unreadable report.
std::vector<Row> loadRows(const std::vector<std::string>& inputs,
                          std::vector<std::pair<std::string, std::string>>& missing);

}  // namespace scoville::cli::results
