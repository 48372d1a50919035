// The pure logic of sweeps and merged results: grid expansion and point ids, --vary parsing,
// reuse of stored reports, Pareto frontiers, interpolation at equal interactivity, series and
// ratios, and the CSV view.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/BuildId.h"
#include "cli/Inputs.h"
#include "cli/ReportWriter.h"
#include "cli/Sweep.h"
#include "cli/SweepResults.h"
#include "config/ConfigError.h"
#include "test/support/ConfigErrors.h"
#include "test/support/Subprocess.h"

namespace scoville::test {
namespace {

using cli::results::CurvePoint;
using cli::results::interpolateAt;
using cli::results::paretoFrontier;
using Json = nlohmann::ordered_json;

TEST(ParetoFrontier, KeepsThePointsNoOtherBeatsOnBothAxesByDecreasingInteractivity) {
  // A typical curve: more users, less interactivity, more throughput, until throughput falls.
  const std::vector<CurvePoint> curve{{200, 10}, {150, 30}, {100, 25}, {90, 50}, {40, 45}, {120, 30}};
  // {100, 25} loses to {150, 30}; {40, 45} to {90, 50}; {120, 30} ties {150, 30} on y with less x.
  EXPECT_EQ(paretoFrontier(curve), (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_TRUE(paretoFrontier({}).empty());
  // Two identical points: the first stands for both.
  EXPECT_EQ(paretoFrontier({{5, 5}, {5, 5}}), (std::vector<std::size_t>{0}));
  // Equal x: only the higher y is on the frontier.
  EXPECT_EQ(paretoFrontier({{5, 1}, {5, 3}}), (std::vector<std::size_t>{1}));
}

TEST(ParetoFrontier, InterpolatesLinearlyBetweenTheTwoFrontierPointsAroundTheTarget) {
  const std::vector<CurvePoint> frontier{{200, 10}, {150, 30}, {90, 50}};
  EXPECT_DOUBLE_EQ(*interpolateAt(frontier, 150), 30);
  EXPECT_DOUBLE_EQ(*interpolateAt(frontier, 175), 20);
  EXPECT_DOUBLE_EQ(*interpolateAt(frontier, 120), 40);
  EXPECT_DOUBLE_EQ(*interpolateAt(frontier, 200), 10);
  EXPECT_FALSE(interpolateAt(frontier, 201).has_value()) << "beyond the frontier: no extrapolation";
  EXPECT_FALSE(interpolateAt(frontier, 89).has_value());
  EXPECT_FALSE(interpolateAt({}, 100).has_value());
}

TEST(SweepAxis, ParsesKeyAndValuesAndRejectsWhatIsNotAnAxis) {
  const cli::sweep::Axis axis = cli::sweep::parseAxis(" chip.hbm.bandwidth = 4 TB/s, 8 TB/s ");
  EXPECT_EQ(axis.name, "chip.hbm.bandwidth");
  EXPECT_EQ(axis.values, (std::vector<std::string>{"4 TB/s", "8 TB/s"}));
  for (const char* bad : {"chip.hbm.bandwidth", "=1,2", "concurrency=1,,2", "concurrency=", "concurrency=1,2,1",
                          "hbm.bandwidth=1", "chip.=1", "platforms.x=1"}) {
    const std::optional<config::ConfigError> e = test::configErrorOf([&] { cli::sweep::parseAxis(bad); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), config::ErrorKind::kBadOverride) << bad;
    EXPECT_NE(e->location().find(bad), std::string::npos) << "the error names the option: " << e->location();
  }
}

TEST(SweepAxis, AliasesExpandToEveryChipTypeAndToTheClosedLoopConcurrency) {
  EXPECT_EQ(cli::sweep::axisSets("concurrency", "8", 1), (std::vector<std::string>{"scenario.load.concurrency=8"}));
  EXPECT_EQ(cli::sweep::axisSets("chip.hbm.bandwidth", "4 TB/s", 2),
            (std::vector<std::string>{"platform.chip_types[0].hbm.bandwidth=4 TB/s",
                                      "platform.chip_types[1].hbm.bandwidth=4 TB/s"}));
  EXPECT_EQ(cli::sweep::axisSets("model.layers", "4", 3), (std::vector<std::string>{"model.layers=4"}));
}

cli::sweep::Spec twoByTwo() {
  cli::sweep::Spec spec;
  spec.platforms = {"jalapeno", "platforms/h100-hgx8.yaml"};
  spec.model = "tiny-dense";
  spec.scenario = "inferencex-1k1k";
  spec.sets = {"scenario.requests=8"};
  spec.axes = {cli::sweep::parseAxis("chip.hbm.bandwidth=4 TB/s,8 TB/s"), cli::sweep::parseAxis("concurrency=1,2")};
  return spec;
}

TEST(SweepGrid, PlatformsOutermostLastAxisFastestAndIdsUniqueAndStable) {
  const cli::sweep::Spec spec = twoByTwo();
  const auto chipTypes = [](const std::string& platform) { return platform == "jalapeno" ? 1u : 2u; };
  const std::vector<cli::sweep::Point> points = cli::sweep::expandGrid(spec, chipTypes);
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(points[0].platform, "jalapeno");
  EXPECT_EQ(points[4].platform, "platforms/h100-hgx8.yaml");
  EXPECT_EQ(points[1].coordinates[1], (std::pair<std::string, std::string>{"concurrency", "2"}));
  EXPECT_EQ(points[2].coordinates[0], (std::pair<std::string, std::string>{"chip.hbm.bandwidth", "8 TB/s"}));
  EXPECT_EQ(points[0].sets,
            (std::vector<std::string>{"scenario.requests=8", "platform.chip_types[0].hbm.bandwidth=4 TB/s",
                                      "scenario.load.concurrency=1"}));
  EXPECT_EQ(points[4].sets.size(), 4u) << "two chip types: the chip alias sets both";
  std::set<std::string> ids;
  for (const auto& p : points) {
    ids.insert(p.id);
    EXPECT_EQ(p.id.find('/'), std::string::npos) << p.id;
    EXPECT_EQ(p.id.find(' '), std::string::npos) << p.id;
  }
  EXPECT_EQ(ids.size(), points.size());
  EXPECT_EQ(points[5].id.rfind("h100-hgx8_bandwidth=4_TB_s_concurrency=2_", 0), 0u) << points[5].id;
  // The same inputs give the same ids (a restarted sweep finds its points); another seed does not.
  EXPECT_EQ(cli::sweep::expandGrid(spec, chipTypes)[3].id, points[3].id);
  cli::sweep::Spec reseeded = spec;
  reseeded.seed = 2;
  EXPECT_NE(cli::sweep::expandGrid(reseeded, chipTypes)[3].id, points[3].id);
}

TEST(SweepReuse, AStoredReportStandsForItsPointOnlyWithTheSameInputs) {
  TempDir dir;
  cli::sweep::Spec spec = twoByTwo();
  const cli::sweep::Point point = cli::sweep::expandGrid(spec, [](const std::string&) { return 1u; })[1];
  const std::string path = dir.file("report.json");
  EXPECT_EQ(cli::sweep::staleReason(spec, point, path), "no report yet");

  std::vector<std::string> overrides = point.sets;
  std::sort(overrides.begin(), overrides.end());
  const std::string digest = cli::loadInputs(cli::sweep::runRequest(spec, point, "").inputs, true).digest;
  Json report = {{"schema_version", cli::kReportSchemaVersion},
                 {"generator", {{"name", "scoville"}, {"version", SCOVILLE_VERSION}, {"build", cli::buildId()}}},
                 {"inputs",
                  {{"platform", {{"name", "jalapeno"}, {"given_as", "jalapeno"}}},
                   {"model", {{"name", "tiny-dense"}, {"given_as", "tiny-dense"}}},
                   {"scenario", {{"name", "inferencex-1k1k"}, {"given_as", "inferencex-1k1k"}}},
                   {"overrides", overrides},
                   {"timing", "lt"},
                   {"seed", 1},
                   {"digest", digest}}},
                 {"results", {{"kind", "serving"}}}};
  writeFile(path, report.dump());
  EXPECT_EQ(cli::sweep::staleReason(spec, point, path), "");
  writeFile(path, report.dump().substr(0, 100));
  EXPECT_NE(cli::sweep::staleReason(spec, point, path).find("does not parse"), std::string::npos);

  Json other = report;
  other["inputs"]["overrides"] = Json::array({"scenario.requests=8"});
  writeFile(path, other.dump());
  EXPECT_EQ(cli::sweep::staleReason(spec, point, path), "other overrides");
  other = report;
  other["inputs"]["seed"] = 7;
  writeFile(path, other.dump());
  EXPECT_EQ(cli::sweep::staleReason(spec, point, path), "another seed");
  other = report;
  other["generator"]["version"] = "0.0.0";
  writeFile(path, other.dump());
  EXPECT_EQ(cli::sweep::staleReason(spec, point, path), "its report is from scoville 0.0.0");
  other = report;
  other["generator"]["build"] = "0123";
  writeFile(path, other.dump());
  EXPECT_EQ(cli::sweep::staleReason(spec, point, path), "its report is from another build of scoville");
  other = report;
  other["inputs"]["digest"] = "0000000000000000";
  writeFile(path, other.dump());
  EXPECT_EQ(cli::sweep::staleReason(spec, point, path), "its input files changed");
  other = report;
  other.erase("results");
  writeFile(path, other.dump());
  EXPECT_NE(cli::sweep::staleReason(spec, point, path).find("incomplete"), std::string::npos);
}

/// A row as rowOf makes it, with only what combine and the CSV read.
cli::results::Row row(const std::string& platform, int concurrency, double interactivity, double perChip, double perKw,
                      const std::string& bandwidth = "") {
  cli::results::Row r;
  r.id = platform + "-" + std::to_string(concurrency) + bandwidth;
  r.source = r.id + "/report.json";
  r.coordinates["concurrency"] = std::to_string(concurrency);
  if (!bandwidth.empty()) r.coordinates["chip.hbm.bandwidth"] = bandwidth;
  const Json latency = {{"mean", 1.0}, {"median", 1.0}, {"p90", 1.0}, {"p99", 1.0}};
  r.summary = {{"platform", platform},
               {"model", "m"},
               {"scenario", "s"},
               {"kind", "serving"},
               {"overrides", Json::array({"a=1,b"})},
               {"seed", 1},
               {"chips", 8},
               {"concurrency", concurrency},
               {"interactivity_tok_per_s_per_user", interactivity},
               {"ttft_s", latency},
               {"tpot_s", latency},
               {"itl_s", latency},
               {"e2el_s", latency},
               {"throughput_tok_per_s", {{"input", 1.0}, {"output", 1.0}, {"total", 2.0}}},
               {"throughput_per_chip_tok_per_s", {{"input", 0.0}, {"output", perChip / 2}, {"total", perChip}}},
               {"throughput_per_kw_rated_tok_per_s", {{"input", 0.0}, {"output", perKw / 2}, {"total", perKw}}},
               {"throughput_per_kw_average_tok_per_s", {{"output", 1.0}, {"total", 2.0}}},
               {"power",
                {{"rated_w_per_chip", 700.0},
                 {"average_w_per_chip", 400.0},
                 {"sustained_w_per_chip", Json::array({{{"window_s", 0.01}, {"max_w", 450.0}}})},
                 {"energy_per_output_token_j", 0.5}}}};
  return r;
}

TEST(MergedResults, SeriesPerPlatformAndFixedKeysWithFrontiersAndRatiosAtEqualInteractivity) {
  const std::vector<cli::results::Row> rows{row("a", 4, 100, 2000, 3000), row("b", 1, 400, 500, 800),
                                            row("a", 1, 300, 600, 900),   row("b", 4, 100, 1000, 1500),
                                            row("a", 2, 200, 1200, 1800), row("b", 2, 200, 700, 1000),
                                            row("a", 8, 60, 1900, 2800)};  // past the peak: off the frontier
  const Json r = cli::results::combine(rows, {{"a-16", "no report"}}, {169.0, ""});
  ASSERT_EQ(r["series"].size(), 2u);
  const Json& a = r["series"][0];
  EXPECT_EQ(a["label"], "a");
  EXPECT_EQ(a["points"], Json::array({2, 4, 0, 6})) << "in load order";
  EXPECT_EQ(a["frontier_per_kw"], Json::array({2, 4, 0}));
  EXPECT_DOUBLE_EQ(a["peak_throughput_per_kw_rated_tok_per_s"].get<double>(), 3000);
  // 169 lies between a's 200 (1800/kW) and 100 (3000/kW): 1800 + 1200 * 31 / 100.
  EXPECT_DOUBLE_EQ(a["at_iso_interactivity"]["throughput_per_kw_rated_tok_per_s"].get<double>(), 1800 + 1200 * 0.31);
  const Json& ratios = r["comparison"]["ratios"];
  EXPECT_EQ(r["comparison"]["baseline"], "a");
  EXPECT_DOUBLE_EQ(ratios[1]["peak_throughput_per_kw_rated_ratio"].get<double>(), 1500.0 / 3000.0);
  EXPECT_DOUBLE_EQ(ratios[1]["at_iso_interactivity_per_kw_rated_ratio"].get<double>(),
                   (1000 + 500 * 0.31) / (1800 + 1200 * 0.31));
  EXPECT_EQ(r["missing"][0]["id"], "a-16");

  const Json againstB = cli::results::combine(rows, {}, {169.0, "b"});
  EXPECT_DOUBLE_EQ(againstB["comparison"]["ratios"][0]["peak_throughput_per_kw_rated_ratio"].get<double>(), 2.0);
  EXPECT_THROW(cli::results::combine(rows, {}, {169.0, "c"}), config::ConfigError);
  // Out of every frontier's range: no value and no ratio, and a note says why.
  const Json far = cli::results::combine(rows, {}, {1000.0, ""});
  EXPECT_TRUE(far["series"][0]["at_iso_interactivity"]["throughput_per_kw_rated_tok_per_s"].is_null());
  EXPECT_NE(far["series"][0]["at_iso_interactivity"]["note"].get<std::string>().find("100 to 300"), std::string::npos);
  EXPECT_TRUE(far["comparison"]["ratios"][1]["at_iso_interactivity_per_kw_rated_ratio"].is_null());
}

TEST(MergedResults, AVariedKeyOtherThanConcurrencyMakesCurvesOfItsOwn) {
  const std::vector<cli::results::Row> rows{row("a", 1, 300, 600, 900, "4 TB/s"), row("a", 2, 200, 700, 1000, "4 TB/s"),
                                            row("a", 1, 350, 650, 950, "8 TB/s"),
                                            row("a", 2, 250, 800, 1100, "8 TB/s")};
  const Json r = cli::results::combine(rows, {}, {169.0, ""});
  ASSERT_EQ(r["series"].size(), 2u);
  EXPECT_EQ(r["series"][0]["label"], "a (chip.hbm.bandwidth=4 TB/s)");
  EXPECT_EQ(r["series"][1]["coordinates"]["chip.hbm.bandwidth"], "8 TB/s");
}

TEST(MergedResults, PointsCsvHasAHeaderALinePerPointAndQuotesFieldsWithCommas) {
  const Json r =
      cli::results::combine({row("a", 1, 300, 600, 900, "x,y"), row("a", 2, 200, 700, 1000, "x,y")}, {}, {169.0, ""});
  const std::string csv = cli::results::pointsCsv(r);
  std::vector<std::string> lines;
  std::stringstream in(csv);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("id,platform,model,scenario,kind,chip.hbm.bandwidth,chips,concurrency,interactivity", 0), 0u)
      << lines[0] << " (the concurrency has a column of its own)";
  EXPECT_NE(lines[1].find(",\"x,y\","), std::string::npos) << lines[1];
  EXPECT_NE(lines[0].find("sustained_0.01s_max_w_per_chip"), std::string::npos);
  EXPECT_NE(lines[1].find(",300,"), std::string::npos);
  EXPECT_NE(lines[1].find(",450,"), std::string::npos) << "sustained power";
  EXPECT_EQ(lines[2].substr(lines[2].size() - 4), ",1,1") << "on both frontiers";
}

/// The smallest serving report rowOf takes: every field it reads, one chip, one power window.
nlohmann::json servingReport() {
  const nlohmann::json stats = {{"mean", 0.5}, {"median", 0.5}, {"p90", 0.6}, {"p99", 0.7}};
  const nlohmann::json triple = {{"input", 10.0}, {"output", 5.0}, {"total", 15.0}};
  return {{"inputs",
           {{"platform", {{"name", "p"}}},
            {"model", {{"name", "m"}}},
            {"scenario", {{"name", "s"}}},
            {"overrides", nlohmann::json::array({"scenario.load.concurrency=4"})},
            {"seed", 1}}},
          {"results",
           {{"kind", "serving"},
            {"load", {{"concurrency", 4}}},
            {"metrics",
             {{"chips", 2},
              {"rated_power_w", 1400.0},
              {"interactivity_tok_per_s_per_user", 100.0},
              {"ttft_s", stats},
              {"tpot_s", stats},
              {"itl_s", stats},
              {"e2el_s", stats},
              {"throughput_tok_per_s", triple},
              {"throughput_per_chip_tok_per_s", triple},
              {"throughput_per_kw_tok_per_s", triple}}}}},
          {"power",
           {{"chips",
             nlohmann::json::array({{{"sustained", nlohmann::json::array({{{"window_s", 0.01}, {"max_w", 450.0}}})}}})},
            {"serving",
             {{"throughput_per_kw_average_tok_per_s", {{"output", 1.0}, {"total", 2.0}}},
              {"average_power_per_chip_w", 400.0},
              {"tokens_per_joule", {{"output", 4.0}}}}}}}};
}

/// rowOf's refusal of `report`, "" when it takes it.
std::string refusal(const nlohmann::json& report) {
  try {
    cli::results::rowOf(report, "r.json");
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(MergedResults, ARowTakesOnlyAReportWhoseFieldsHaveTheirTypesAndSaysWhichDoesNot) {
  const cli::results::Row row = cli::results::rowOf(servingReport(), "r.json");
  EXPECT_EQ(row.summary["platform"], "p");
  EXPECT_DOUBLE_EQ(row.summary["power"]["rated_w_per_chip"].get<double>(), 700.0);
  EXPECT_DOUBLE_EQ(row.summary["power"]["energy_per_output_token_j"].get<double>(), 0.25);
  EXPECT_EQ(row.summary["power"]["sustained_w_per_chip"][0]["max_w"], 450.0);
  // A statistic of no samples is null: still a row.
  nlohmann::json report = servingReport();
  report["results"]["metrics"]["ttft_s"]["p99"] = nullptr;
  EXPECT_EQ(refusal(report), "");
  // What combine and pointsCsv would fail on (found by the fuzzer): refused, naming the field.
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> cases{
      {"/results/metrics/interactivity_tok_per_s_per_user is null, not a finite number",
       [](nlohmann::json& r) { r["results"]["metrics"]["interactivity_tok_per_s_per_user"] = nullptr; }},
      {"/inputs/model/name is a number, not a string", [](nlohmann::json& r) { r["inputs"]["model"]["name"] = 3; }},
      {"/results/metrics/throughput_tok_per_s/total is missing",
       [](nlohmann::json& r) { r["results"]["metrics"]["throughput_tok_per_s"].erase("total"); }},
      {"/results/metrics/chips is 0, not a positive number",
       [](nlohmann::json& r) { r["results"]["metrics"]["chips"] = 0; }},
      {"/inputs/overrides/0 is a number, not a string", [](nlohmann::json& r) { r["inputs"]["overrides"][0] = 1; }},
      {"/inputs/seed is -1, not a seed (an integer >= 0)", [](nlohmann::json& r) { r["inputs"]["seed"] = -1; }},
      {"/power/chips/0/sustained/0/max_w is a string, not a finite number or null",
       [](nlohmann::json& r) { r["power"]["chips"][0]["sustained"][0]["max_w"] = "450"; }},
      {"/results/kind is 'serve', not serving or decode_step",
       [](nlohmann::json& r) { r["results"]["kind"] = "serve"; }},
      {"/results/metrics is missing", [](nlohmann::json& r) { r["results"].erase("metrics"); }},
  };
  for (const auto& [expected, edit] : cases) {
    report = servingReport();
    edit(report);
    EXPECT_EQ(refusal(report), "r.json: not a complete scoville report (" + expected + ")");
  }
  EXPECT_EQ(refusal(nlohmann::json::array()), "r.json: not a complete scoville report (/results is missing)");
}

TEST(MergedResults, AMalformedSweepManifestIsRefusedNamingTheFieldNeverWithTheJsonLibrarysError) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("p"));
  writeFile(dir.file("p/report.json"), servingReport().dump());
  const auto refusalOf = [&](const std::string& manifest) -> std::string {
    writeFile(dir.file("sweep.json"), manifest);
    std::vector<std::pair<std::string, std::string>> missing;
    try {
      const std::vector<cli::results::Row> rows = cli::results::loadRows({dir.path()}, missing);
      return rows.size() == 1 && rows[0].coordinates["concurrency"] == "4" ? "" : "wrong rows";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  };
  EXPECT_EQ(refusalOf(R"({"points": [{"id": "c4", "dir": "p", "coordinates": {"concurrency": "4"}}]})"), "");
  const std::string file = dir.file("sweep.json");
  EXPECT_EQ(refusalOf("{}"), file + ": not a sweep manifest (expected an object whose `points` is an array)");
  EXPECT_EQ(refusalOf(R"({"points": {}})"),
            file + ": not a sweep manifest (expected an object whose `points` is an array)");
  EXPECT_EQ(refusalOf(R"({"points": [{"id": "c4", "coordinates": {}}]})"),
            file + ": not a sweep manifest (points[0].dir: expected a string)");
  EXPECT_EQ(refusalOf(R"({"points": [{"id": 4, "dir": "p", "coordinates": {}}]})"),
            file + ": not a sweep manifest (points[0].id: expected a string)");
  EXPECT_EQ(refusalOf(R"({"points": [{"id": "c4", "dir": "p", "coordinates": {"concurrency": 4}}]})"),
            file + ": not a sweep manifest (points[0].coordinates.concurrency: expected a string)");
  EXPECT_EQ(refusalOf(R"({"points": [7]})"), file + ": not a sweep manifest (points[0].id: expected a string)");
}

TEST(MergedResults, PointsCsvReadsNoKeyThatIsNotThereAndLeavesItsFieldEmpty) {
  Json results = cli::results::combine({row("a", 1, 300, 600, 900)}, {}, {169.0, ""});
  results["points"][0].erase("ttft_s");
  results["points"][0]["power"].erase("sustained_w_per_chip");
  results["points"][0]["throughput_tok_per_s"] = 5;  // not an object
  results["series"][0]["frontier_per_chip"] = "x";
  const std::string csv = cli::results::pointsCsv(results);
  std::stringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  std::getline(in, line);
  EXPECT_NE(line.find("a-1,a,m,s,serving,8,1,300,,,1,"), std::string::npos) << line;
  EXPECT_EQ(line.substr(line.size() - 4), ",0,1") << "not on the per-chip frontier as given";
  const std::string empty = cli::results::pointsCsv(Json::object());
  EXPECT_EQ(std::count(empty.begin(), empty.end(), '\n'), 1) << "no points: only the header";
  EXPECT_EQ(empty.find("sustained_"), std::string::npos) << "and no sustained-power columns";
}

}  // namespace
}  // namespace scoville::test
