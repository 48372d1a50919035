#pragma once
// What the fuzzer feeds, shared by the libFuzzer target (ConfigFuzz.cpp) and the unit test that
// replays test/fuzz/regressions/ and test/fuzz/corpus/ (FuzzRegressionTest.cpp).
//
// An input is one selector byte, then the payload of the target it selects:
//
//   selector  target          payload
//   0 .. 6    config          YAML: 0 platform, 1 model, 2 scenario, 3 kv_cache, 4 network,
//                             5 the unit parser (a quantity), 6 validation dataset
//   7         overrides       byte: which shipped file (kOverrideFiles); then --set options, one a line
//   8         run-args        `scoville run` arguments, one a line (RunRequest::fromArgs)
//   9         includes        up to 4 YAML files separated by NUL bytes, written as file0.yaml ..
//                             file3.yaml; file0.yaml is loaded as a platform
//   10        load-trace      a load trace CSV (workload::readLoadTrace)
//   11        routing-trace   3 bytes: experts, topK, the MoE layers among 0..7 (a bit mask); then a
//                             routing trace CSV (workload::makeRoutingModel, impl trace)
//   12        stack           YAML: software-stack profile
//   13        kernels         YAML: kernel dataset
//   14        report          report.json; optionally a NUL byte and a sweep.json whose points'
//                             report.json it is (RunReport, rowOf, combine, reportMismatch, loadRows)
//
// Every reader may accept its input or refuse it the documented way (config::ConfigError; the
// unit parser config::UnitError; run arguments boost::program_options::error; a report row
// std::runtime_error); what it accepts must pass the properties of FuzzChecks.h. Anything else
// is a bug, thrown as FuzzFailure.

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#include <boost/program_options/errors.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/ReportWriter.h"
#include "cli/RunReport.h"
#include "cli/RunRequest.h"
#include "cli/SweepResults.h"
#include "test/fuzz/FuzzChecks.h"

namespace scoville::test::fuzz {

enum class Target { kConfig, kOverrides, kRunArgs, kIncludes, kLoadTrace, kRoutingTrace, kStack, kKernels, kReport };

struct TargetInfo {
  Target target;
  const char* name;  ///< SCOVILLE_FUZZ_TARGET and scripts/fuzz's name for it
  uint8_t first;     ///< its selector bytes: first .. last
  uint8_t last;
};

inline constexpr TargetInfo kTargets[] = {
    {Target::kConfig, "config", 0, 6},          {Target::kOverrides, "overrides", 7, 7},
    {Target::kRunArgs, "run-args", 8, 8},       {Target::kIncludes, "includes", 9, 9},
    {Target::kLoadTrace, "load-trace", 10, 10}, {Target::kRoutingTrace, "routing-trace", 11, 11},
    {Target::kStack, "stack", 12, 12},          {Target::kKernels, "kernels", 13, 13},
    {Target::kReport, "report", 14, 14},
};

/// The target a selector byte picks; nothing above the last one.
inline const TargetInfo* targetOf(uint8_t selector) {
  for (const TargetInfo& t : kTargets) {
    if (selector >= t.first && selector <= t.last) return &t;
  }
  return nullptr;
}

inline const TargetInfo* targetNamed(std::string_view name) {
  for (const TargetInfo& t : kTargets) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

enum class Outcome { kAccepted, kRefused, kNotAnInput };

/// Why the last input was refused (for SCOVILLE_FUZZ_VERBOSE and the unit test's messages).
inline std::string& lastRefusal() {
  static std::string why;
  return why;
}

inline Outcome refused(const std::exception& e) {
  lastRefusal() = e.what();
  return Outcome::kRefused;
}

/// Known open bugs the fuzzer steps around, so that a run goes on to find others (each has an
/// `open-` regression that FuzzRegressions replays with this off and expects to still fail). A
/// step-around reads `if (skipOpenBugs()) ...` at the check it spares; none is open today.
inline bool& skipOpenBugs() {
  static bool skip = true;
  return skip;
}

// ---------------------------------------------------------------------------------------------
// Scratch files: one folder per process, its files rewritten for each input:
// $SCOVILLE_FUZZ_SCRATCH when set (scripts/fuzz: build-fuzz/scratch-TARGET, kept), else a new
// folder in the temporary directory, removed when the process exits normally.

inline const std::filesystem::path& scratchDirectory() {
  struct Scratch {
    std::filesystem::path path;
    bool owned = false;
    Scratch() {
      if (const char* given = std::getenv("SCOVILLE_FUZZ_SCRATCH"); given != nullptr && *given != '\0') {
        path = given;
        std::filesystem::create_directories(path);
        return;
      }
      std::string pattern = (std::filesystem::temp_directory_path() / "scoville-fuzz-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) std::abort();
      path = pattern;
      owned = true;
    }
    ~Scratch() {
      std::error_code ec;
      if (owned) std::filesystem::remove_all(path, ec);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

/// Empties the scratch folder and returns it.
inline std::filesystem::path freshScratch() {
  const std::filesystem::path& dir = scratchDirectory();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) std::filesystem::remove_all(entry.path(), ec);
  return dir;
}

inline std::string writeScratch(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) fail("cannot write the scratch file " + path.string());
  return path.string();
}

inline std::vector<std::string> splitOn(std::string_view text, char separator, std::size_t most) {
  std::vector<std::string> parts;
  while (parts.size() + 1 < most) {
    const std::size_t at = text.find(separator);
    if (at == std::string_view::npos) break;
    parts.emplace_back(text.substr(0, at));
    text.remove_prefix(at + 1);
  }
  parts.emplace_back(text);
  return parts;
}

// ---------------------------------------------------------------------------------------------
// YAML configurations: parse, then every property.

template <class Config>
Outcome parseAndCheck(const config::Node& node) {
  Config parsed;
  try {
    parsed = Config::schema().parse(node);
  } catch (const config::ConfigError& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected(Config::schema().title() + " schema", e);
  }
  checkQuantities(node, Config::schema());
  checkSane(parsed);
  return Outcome::kAccepted;
}

/// Loads `text` (root `root`, named `sourceName`, with `overrides`) and checks it.
template <class Config>
Outcome loadTextAndCheck(const char* root, const std::string& text, const std::string& sourceName,
                         const std::vector<std::pair<std::string, std::string>>& overrides = {}) {
  std::optional<config::Node> node;
  try {
    node = config::loadConfigText(root, text, sourceName, overrides);
  } catch (const config::ConfigError& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected(std::string("loadConfigText (") + root + ")", e);
  }
  return parseAndCheck<Config>(*node);
}

inline Outcome fuzzUnits(const std::string& text) {
  config::Quantity q;
  try {
    q = config::parseQuantity(text);
  } catch (const config::UnitError& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected("parseQuantity", e);
  }
  expect(std::isfinite(q.value), fmt::format("parseQuantity('{}') = {}", text, q.value));
  // formatQuantity is the inverse up to its 4 significant digits.
  const double magnitude = std::fabs(q.value);
  if (config::dimensionName(q.dimension) != "quantity" && magnitude >= 1e-24 && magnitude <= 1e24) {
    const std::string formatted = config::formatQuantity(q.value, q.dimension);
    double again = 0.0;
    try {
      again = config::parseQuantityAs(formatted, q.dimension);
    } catch (const std::exception& e) {
      fail(fmt::format("formatQuantity({}) = '{}' does not parse back: {}", q.value, formatted, e.what()));
    }
    expect(std::fabs(again - q.value) <= 1e-3 * magnitude,
           fmt::format("'{}' = {} formats as '{}' = {}", text, q.value, formatted, again));
  }
  return Outcome::kAccepted;
}

inline Outcome fuzzConfig(uint8_t selector, const std::string& text) {
  switch (selector) {
    case 0: return loadTextAndCheck<platform::PlatformConfig>("platform", text, "fuzz.yaml");
    case 1: return loadTextAndCheck<workload::ModelConfig>("model", text, "fuzz.yaml");
    case 2: return loadTextAndCheck<workload::ScenarioConfig>("scenario", text, "fuzz.yaml");
    case 3: return loadTextAndCheck<hw::KvCacheConfig>("kv_cache", text, "fuzz.yaml");
    case 4: return loadTextAndCheck<hw::NetworkConfig>("network", text, "fuzz.yaml");
    case 5: return fuzzUnits(text);
    default: return loadTextAndCheck<workload::ValidationDataset>("validation", text, "fuzz.yaml");
  }
}

// ---------------------------------------------------------------------------------------------
// --set options on shipped files.

struct OverrideFile {
  const char* root;
  const char* file;  ///< below the data directory
};
inline constexpr OverrideFile kOverrideFiles[] = {
    {"platform", "platforms/jalapeno.yaml"},
    {"platform", "platforms/jalapeno-8.yaml"},
    {"platform", "platforms/h200-hgx8.yaml"},
    {"model", "workloads/models/tiny-dense.yaml"},
    {"model", "workloads/models/tiny-moe.yaml"},
    {"model", "workloads/models/tiny-mla.yaml"},
    {"scenario", "workloads/scenarios/decode-step.yaml"},
    {"scenario", "workloads/scenarios/inferencex-1k1k.yaml"},
    {"scenario", "workloads/scenarios/agent-multiturn.yaml"},
};

inline const std::string& shippedText(const std::string& file) {
  static std::map<std::string, std::string> texts;
  auto found = texts.find(file);
  if (found == texts.end()) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) fail("cannot read the shipped file " + file);
    found = texts.emplace(file, text.str()).first;
  }
  return found->second;
}

inline Outcome fuzzOverrides(std::string_view payload) {
  if (payload.empty()) return Outcome::kNotAnInput;
  const OverrideFile& target =
      kOverrideFiles[static_cast<uint8_t>(payload[0]) % (sizeof(kOverrideFiles) / sizeof(kOverrideFiles[0]))];
  config::Overrides overrides({"platform", "model", "scenario"});
  try {
    for (const std::string& option : splitOn(payload.substr(1), '\n', 64)) {
      if (!option.empty()) overrides.add(option);
    }
  } catch (const config::ConfigError& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected("Overrides::add", e);
  }
  std::vector<std::pair<std::string, std::string>> mine = overrides.forRoot(target.root);
  for (const auto& [path, value] : mine) {
    expect(!path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos,
           fmt::format("Overrides::forRoot gave the path '{}'", path));
  }
  const std::string file = shippedFile(target.file);
  const std::string& text = shippedText(file);
  const std::string root = target.root;
  if (root == "platform") return loadTextAndCheck<platform::PlatformConfig>("platform", text, file, mine);
  if (root == "model") return loadTextAndCheck<workload::ModelConfig>("model", text, file, mine);
  return loadTextAndCheck<workload::ScenarioConfig>("scenario", text, file, mine);
}

// ---------------------------------------------------------------------------------------------
// `scoville run` arguments.

inline Outcome fuzzRunArgs(std::string_view payload) {
  const std::vector<std::string> args = splitOn(payload, '\n', 256);
  cli::RunRequest request;
  try {
    request = cli::RunRequest::fromArgs(args);
  } catch (const config::ConfigError& e) {
    return refused(e);
  } catch (const boost::program_options::error& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected("RunRequest::fromArgs", e);
  }
  // toArgs gives the arguments that fromArgs turns back into the same request (sweeps and
  // validations start their runs with them).
  const std::vector<std::string> again = request.toArgs();
  try {
    const cli::RunRequest reparsed = cli::RunRequest::fromArgs(again);
    expect(reparsed == request,
           fmt::format("fromArgs(toArgs()) is another request: toArgs() = '{}'", fmt::join(again, "' '")));
  } catch (const std::exception& e) {
    fail(fmt::format("fromArgs(toArgs()) throws {}: {} (toArgs() = '{}')", typeName(e), e.what(),
                     fmt::join(again, "' '")));
  }
  const std::vector<std::string> line = request.commandLine();
  expect(!line.empty() && line.front() == cli::kRunCommandName, "commandLine() does not start with 'run'");
  // The --set options as loadInputs takes them.
  try {
    config::Overrides overrides({"platform", "model", "scenario"});
    for (const std::string& set : request.inputs.sets) overrides.add(set);
  } catch (const config::ConfigError&) {
  } catch (const std::exception& e) {
    unexpected("Overrides::add (of run arguments)", e);
  }
  return Outcome::kAccepted;
}

// ---------------------------------------------------------------------------------------------
// Include trees on disk.

inline Outcome fuzzIncludes(std::string_view payload) {
  const std::filesystem::path dir = freshScratch();
  const std::vector<std::string> files = splitOn(payload, '\0', 4);
  for (std::size_t i = 0; i < files.size(); ++i) writeScratch(dir / fmt::format("file{}.yaml", i), files[i]);
  std::optional<config::Node> node;
  try {
    node = config::loadConfigFile("platform", (dir / "file0.yaml").string());
  } catch (const config::ConfigError& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected("loadConfigFile (platform)", e);
  }
  return parseAndCheck<platform::PlatformConfig>(*node);
}

// ---------------------------------------------------------------------------------------------
// Traces.

inline Outcome fuzzLoadTrace(std::string_view payload) {
  const std::string file = writeScratch(freshScratch() / "load.csv", payload);
  std::vector<workload::TraceRequest> rows;
  try {
    rows = workload::readLoadTrace(file);
  } catch (const config::ConfigError& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected("readLoadTrace", e);
  }
  expect(!rows.empty(), "an accepted load trace has no request");
  double last = 0.0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const workload::TraceRequest& r = rows[i];
    expect(std::isfinite(r.arrival) && r.arrival >= last && r.arrival <= config::kMaxSimulatedTimeS,
           fmt::format("request {} arrives at {} s (the one before at {} s)", i, r.arrival, last));
    last = r.arrival;
    expect(r.inputTokens >= 1 && r.outputTokens >= 1, fmt::format("request {} has an empty prompt or output", i));
  }
  // The generator replays it as read.
  workload::ScenarioConfig scenario;
  scenario.kind = workload::ScenarioKind::kServing;
  scenario.load.impl = workload::LoadKind::kTrace;
  try {
    workload::LoadGenerator load(scenario, 1, file);
    std::size_t sent = 0;
    while (const std::optional<workload::Arrival> a = load.nextOpen()) {
      expect(sent < rows.size() && a->time == rows[sent].arrival && a->inputTokens == rows[sent].inputTokens &&
                 a->outputTokens == rows[sent].outputTokens,
             fmt::format("the load generator's request {} is not the trace's", sent));
      ++sent;
    }
    expect(sent == rows.size(),
           fmt::format("the load generator sent {} of the trace's {} requests", sent, rows.size()));
  } catch (const std::exception& e) {
    unexpected("LoadGenerator (trace)", e);
  }
  return Outcome::kAccepted;
}

inline Outcome fuzzRoutingTrace(std::string_view payload) {
  if (payload.size() < 3) return Outcome::kNotAnInput;
  const int experts = 1 + static_cast<uint8_t>(payload[0]) % 32;
  const int topK = 1 + static_cast<uint8_t>(payload[1]) % experts;
  std::vector<uint32_t> moeLayers;
  for (uint32_t layer = 0; layer < 8; ++layer) {
    if (static_cast<uint8_t>(payload[2]) & (1u << layer)) moeLayers.push_back(layer);
  }
  workload::RoutingConfig config;
  config.impl = workload::RoutingImpl::kTrace;
  config.file = writeScratch(freshScratch() / "routing.csv", payload.substr(3));
  std::unique_ptr<workload::RoutingModel> routing;
  try {
    routing = workload::makeRoutingModel(config, experts, topK, 1, moeLayers);
  } catch (const config::ConfigError& e) {
    return refused(e);
  } catch (const std::exception& e) {
    unexpected("makeRoutingModel (trace)", e);
  }
  expect(routing->experts() == experts && routing->topK() == topK, "the trace model changed experts or topK");
  const std::string what = fmt::format("routing trace ({} experts, top {})", experts, topK);
  if (!moeLayers.empty()) {
    for (const uint32_t layer : moeLayers) {
      for (const uint64_t tokens : {uint64_t{1}, uint64_t{3}, uint64_t{1000}, uint64_t{1} << 20}) {
        try {
          checkRoutingCounts(*routing, layer, tokens, what);
        } catch (const std::exception& e) {
          unexpected("RoutingModel::route (a MoE layer of the trace)", e);
        }
      }
    }
  } else {
    // Without MoE layers to check against, a layer without rows throws std::runtime_error.
    for (uint32_t layer = 0; layer < 8; ++layer) {
      try {
        checkRoutingCounts(*routing, layer, 5, what);
      } catch (const std::runtime_error&) {
      } catch (const std::exception& e) {
        unexpected("RoutingModel::route", e);
      }
    }
  }
  return Outcome::kAccepted;
}

// ---------------------------------------------------------------------------------------------
// Reports and sweeps.

inline const nlohmann::json* jsonAt(const nlohmann::json& root, std::initializer_list<const char*> path) {
  const nlohmann::json* node = &root;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

/// RunReport::fromJson reads what is at its documented paths, and nothing else.
inline void checkReportSummary(const cli::RunReport& r, const nlohmann::json& report, const std::string& what) {
  const nlohmann::json* kind = jsonAt(report, {"results", "kind"});
  expect(r.kind == (kind != nullptr && kind->is_string() ? kind->get<std::string>() : std::string()),
         what + ": kind is not results.kind");
  const auto same = [&](const std::optional<double>& value, std::initializer_list<const char*> path, const char* name) {
    const nlohmann::json* at = jsonAt(report, path);
    const bool number = at != nullptr && at->is_number();
    expect(value.has_value() == number && (!number || *value == at->get<double>()),
           fmt::format("{}: {} is not the number at its path", what, name));
  };
  same(r.averageChipPowerW, {"power", "serving", "average_chip_power_w"}, "averageChipPowerW");
  same(r.inferenceX.outputTputPerGpu, {"results", "metrics", "inferencex", "output_tput_per_gpu"}, "outputTputPerGpu");
  same(r.inferenceX.tputPerGpu, {"results", "metrics", "inferencex", "tput_per_gpu"}, "tputPerGpu");
  same(r.inferenceX.ttft.mean, {"results", "metrics", "inferencex", "mean_ttft"}, "ttft.mean");
  same(r.inferenceX.ttft.median, {"results", "metrics", "inferencex", "median_ttft"}, "ttft.median");
  same(r.inferenceX.tpot.mean, {"results", "metrics", "inferencex", "mean_tpot"}, "tpot.mean");
  same(r.inferenceX.e2el.median, {"results", "metrics", "inferencex", "median_e2el"}, "e2el.median");
  same(r.inferenceX.intvty.mean, {"results", "metrics", "inferencex", "mean_intvty"}, "intvty.mean");
}

/// Whether combine's `results` hold every key pointsCsv writes a column of (pointColumns(), the
/// ids and names, the frontiers and the sustained-power windows): where one is missing the CSV
/// field would be silently empty.
inline bool pointsCsvKeysPresent(const nlohmann::ordered_json& results) {
  const auto has = [](const nlohmann::ordered_json& at, std::initializer_list<const char*> path) {
    const nlohmann::ordered_json* node = &at;
    for (const char* key : path) {
      if (!node->is_object() || !node->contains(key)) return false;
      node = &(*node)[key];
    }
    return true;
  };
  if (!has(results, {"points"}) || !has(results, {"series"})) return false;
  for (const auto& series : results["series"]) {
    if (!has(series, {"frontier_per_chip"}) || !has(series, {"frontier_per_kw"})) return false;
  }
  for (const auto& p : results["points"]) {
    for (const char* key : {"id", "platform", "model", "scenario", "kind", "coordinates"}) {
      if (!has(p, {key})) return false;
    }
    for (const cli::results::PointColumn& c : cli::results::pointColumns()) {
      if (!(c.below == nullptr ? has(p, {c.key}) : has(p, {c.key, c.below}))) return false;
    }
    if (!has(p, {"power", "sustained_w_per_chip"}) || !has(p, {"power", "energy_per_output_token_j"})) return false;
    if (p["power"]["sustained_w_per_chip"].is_array()) {
      for (const auto& w : p["power"]["sustained_w_per_chip"]) {
        if (!has(w, {"window_s"}) || !has(w, {"max_w"})) return false;
      }
    }
  }
  return true;
}

/// combine() and pointsCsv() over rows that rowOf or loadRows accepted: they document no error.
inline void checkCombine(const std::vector<cli::results::Row>& rows,
                         const std::vector<std::pair<std::string, std::string>>& missing) {
  try {
    const nlohmann::ordered_json results = cli::results::combine(rows, missing, {});
    // pointsCsv reads these keys of every point: combine must give them all.
    if (!pointsCsvKeysPresent(results)) fail("combine's results lack a key that pointsCsv reads");
    (void)cli::results::pointsCsv(results);
    (void)results.dump();
  } catch (const std::exception& e) {
    unexpected("combine / pointsCsv (of accepted rows)", e);
  }
}

inline Outcome fuzzReport(std::string_view payload) {
  const std::vector<std::string> parts = splitOn(payload, '\0', 2);
  const std::string& text = parts[0];
  const std::filesystem::path dir = freshScratch();
  const std::string file = writeScratch(dir / "report.json", text);
  const nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
  // RunReport: reading never throws, and finds what is at its paths.
  try {
    checkReportSummary(cli::RunReport::fromJson(report), report, "RunReport::fromJson");
    checkReportSummary(cli::RunReport::read(file), report, "RunReport::read");
  } catch (const std::exception& e) {
    unexpected("RunReport::fromJson / read (documented never to throw)", e);
  }
  // reportMismatch: a reason, never an exception; "" only for a report of this schema.
  try {
    const std::string why = cli::reportMismatch(cli::RunRequest{}, file);
    const nlohmann::json* version = jsonAt(report, {"schema_version"});
    expect(!why.empty() || (version != nullptr && *version == cli::kReportSchemaVersion),
           "reportMismatch accepted a report of another schema");
  } catch (const std::exception& e) {
    unexpected("reportMismatch", e);
  }
  // A row for results.json: refused with std::runtime_error, or combined without error.
  Outcome outcome = Outcome::kRefused;
  if (!report.is_discarded()) {
    std::optional<cli::results::Row> row;
    try {
      row = cli::results::rowOf(report, "fuzz/report.json");
    } catch (const std::runtime_error& e) {
      lastRefusal() = e.what();
    } catch (const std::exception& e) {
      unexpected("results::rowOf", e);
    }
    if (row) {
      outcome = Outcome::kAccepted;
      checkCombine({*row}, {});
    }
  }
  // A sweep: its manifest, and this report as the report of every point whose dir is "p".
  if (parts.size() > 1) {
    const std::filesystem::path sweep = dir / "sweep";
    writeScratch(sweep / "sweep.json", parts[1]);
    writeScratch(sweep / "p" / "report.json", text);
    std::vector<cli::results::Row> rows;
    std::vector<std::pair<std::string, std::string>> missing;
    bool loaded = false;
    try {
      rows = cli::results::loadRows({sweep.string()}, missing);
      loaded = true;
    } catch (const config::ConfigError&) {
    } catch (const std::runtime_error&) {
    } catch (const std::exception& e) {
      unexpected("results::loadRows", e);
    }
    if (loaded) {
      outcome = Outcome::kAccepted;
      checkCombine(rows, missing);
    }
  }
  return outcome;
}

// ---------------------------------------------------------------------------------------------

/// Runs the target `selector` picks on `payload`. Throws FuzzFailure for a bug.
inline Outcome runFuzzInput(uint8_t selector, std::string_view payload) {
  const TargetInfo* target = targetOf(selector);
  if (target == nullptr) return Outcome::kNotAnInput;
  lastRefusal().clear();
  const std::string text(payload);
  switch (target->target) {
    case Target::kConfig: return fuzzConfig(selector, text);
    case Target::kOverrides: return fuzzOverrides(payload);
    case Target::kRunArgs: return fuzzRunArgs(payload);
    case Target::kIncludes: return fuzzIncludes(payload);
    case Target::kLoadTrace: return fuzzLoadTrace(payload);
    case Target::kRoutingTrace: return fuzzRoutingTrace(payload);
    case Target::kStack: return loadTextAndCheck<workload::SoftwareStackConfig>("software_stack", text, "fuzz.yaml");
    case Target::kKernels: return loadTextAndCheck<workload::KernelDataset>("kernels", text, "fuzz.yaml");
    case Target::kReport: return fuzzReport(payload);
  }
  return Outcome::kNotAnInput;
}

}  // namespace scoville::test::fuzz
