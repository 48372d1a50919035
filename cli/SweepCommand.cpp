// `scoville sweep` (run a grid of points, one process each, in parallel and resumably) and
// `scoville merge` (combine finished runs into results.json and points.csv). docs/sweeps.md.

#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/Commands.h"
#include "cli/Inputs.h"
#include "cli/ReportWriter.h"
#include "cli/Sweep.h"
#include "cli/SweepResults.h"
#include "config/ConfigError.h"
#include "config/Loader.h"
#include "config/Units.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace scoville::cli {

namespace {

/// The renderer, relative to the data directory (the source tree unless $SCOVILLE_DATA_DIR).
constexpr const char* kReportScript = "scripts/scoville_report.py";

using config::ConfigError;
using config::ErrorKind;

std::string clock(double seconds) {
  const auto s = static_cast<long>(std::lround(seconds));
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string describePoint(const sweep::Point& point) {
  std::string text = point.platform;
  for (const auto& [name, value] : point.coordinates) text += fmt::format(" {}={}", name, value);
  return text;
}

/// "0,2,5-8" for Slurm's --array.
std::string indexRanges(const std::vector<std::size_t>& indices) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(indices[i]) : fmt::format("{}-{}", indices[i], indices[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// Combines `rows` into results.json and points.csv in `outDir` and prints the table.
/// Each point's `source` is relative to `outDir` (so results.json does not depend on where the
/// sweep ran, and moves with its directory).
void writeResults(const std::string& outDir, std::vector<results::Row> rows,
                  const std::vector<std::pair<std::string, std::string>>& missing, const results::MergeOptions& options,
                  std::ostream& out, bool quiet) {
  const fs::path base = fs::absolute(outDir).lexically_normal();
  for (results::Row& row : rows) {
    row.source = fs::absolute(row.source).lexically_normal().lexically_relative(base).string();
  }
  const Json combined = results::combine(rows, missing, options);
  writeFileAtomically((fs::path(outDir) / "points.csv").string(), results::pointsCsv(combined));
  const std::string path = (fs::path(outDir) / "results.json").string();
  writeFileAtomically(path, combined.dump(2) + "\n");
  if (quiet) return;
  std::size_t width = 6;
  for (const auto& s : combined["series"]) width = std::max(width, s["label"].get<std::string>().size());
  out << fmt::format("{:<{}} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "series", width, "concurrency",
                     "tok/s/user", "tok/s/chip", "tok/s/kW", "TTFT p50", "ITL p50", "E2E p50", "W/chip");
  const auto time = [](const Json& v) {
    return v.is_null() ? std::string("-") : config::formatQuantity(v.get<double>(), config::dim::kTime);
  };
  const auto number = [](const Json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.4g}", v.get<double>());
  };
  for (const auto& s : combined["series"]) {
    std::set<std::size_t> frontier;
    for (const auto& f : s["frontier_per_kw"]) frontier.insert(f.get<std::size_t>());
    for (const auto& r : s["points"]) {
      const Json& p = combined["points"][r.get<std::size_t>()];
      out << fmt::format(
          "{:<{}} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}{}\n", s["label"].get<std::string>(), width,
          p["concurrency"].is_null() ? "-" : p["concurrency"].dump(), number(p["interactivity_tok_per_s_per_user"]),
          number(p["throughput_per_chip_tok_per_s"]["total"]), number(p["throughput_per_kw_rated_tok_per_s"]["total"]),
          time(p["ttft_s"]["median"]), time(p["itl_s"]["median"]), time(p["e2el_s"]["median"]),
          number(p["power"]["average_w_per_chip"]), frontier.count(r.get<std::size_t>()) ? "  *" : "");
    }
  }
  out << "  * on the series' Pareto frontier of tok/s/user vs tok/s per kW (rated)\n";
  const Json& comparison = combined["comparison"];
  if (combined["series"].size() > 1) {
    out << fmt::format("against {} (peak tok/s per kW; at {} tok/s/user):\n", comparison["baseline"].get<std::string>(),
                       comparison["iso_interactivity_tok_per_s_per_user"].get<double>());
    for (const auto& r : comparison["ratios"]) {
      const Json& at = r["at_iso_interactivity_per_kw_rated_ratio"];
      out << fmt::format(
          "  {:<{}} {:>6.2f}x  {}\n", r["series"].get<std::string>(), width,
          r["peak_throughput_per_kw_rated_ratio"].get<double>(),
          at.is_null() ? std::string("(not on both frontiers)") : fmt::format("{:.2f}x", at.get<double>()));
    }
  }
  for (const auto& [id, reason] : missing) out << fmt::format("missing: {}: {}\n", id, reason);
  out << "results: " << path << "\n";
}

/// --iso-interactivity and --baseline: how merged curves are compared (sweep, merge, report).
void addComparisonOptions(po::options_description& description, results::MergeOptions& merge) {
  description.add_options()("iso-interactivity",
                            po::value(&merge.isoInteractivity)->default_value(merge.isoInteractivity),
                            "tok/s/user at which platforms are compared along their frontiers")(
      "baseline", po::value(&merge.baseline), "series label the comparison's ratios are against (default: the first)");
}

void checkComparisonOptions(const results::MergeOptions& merge) {
  if (!(merge.isoInteractivity > 0)) throw po::error("--iso-interactivity must be positive");
}

struct SweepOptions {
  std::vector<std::string> platforms;
  std::string model = kDefaultModel;
  std::string scenario = "inferencex-8k1k";
  std::vector<std::string> sets;
  std::vector<std::string> vary;
  std::string concurrency;
  unsigned jobs = 0;
  std::string out = "scoville-sweep";
  uint64_t seed = 1;
  std::string timing = "lt";
  bool exact = false;
  results::MergeOptions comparison;
  bool emitSlurm = false;
  bool dryRun = false;
  long point = -1;
  bool quiet = false;
};

/// The sweep's spec and points, every point's inputs checked (so a typo fails before any run).
std::pair<sweep::Spec, std::vector<sweep::Point>> planSweep(const SweepOptions& options, bool concurrencyGiven) {
  sweep::Spec spec;
  spec.platforms = options.platforms.empty() ? std::vector<std::string>{kDefaultPlatform} : options.platforms;
  spec.model = options.model;
  spec.scenario = options.scenario;
  spec.sets = options.sets;
  spec.seed = options.seed;
  spec.timing = options.timing;
  spec.exact = options.exact;
  for (const std::string& v : options.vary) spec.axes.push_back(sweep::parseAxis(v));
  // A platform given twice (by name or by file) would run every point twice into one folder.
  std::map<std::string, std::string> platformFiles;  // resolved file -> --platform as given
  for (const std::string& platform : spec.platforms) {
    std::error_code ec;
    const std::string file =
        fs::weakly_canonical(config::resolveConfigFile("platform", "platforms", platform), ec).string();
    if (const auto [it, added] = platformFiles.emplace(file, platform); !added) {
      throw ConfigError(ErrorKind::kBadOverride, "--platform " + platform,
                        fmt::format("the platform file {} is already given as --platform {}", file, it->second));
    }
  }

  std::map<std::string, Inputs> base;  // per platform, with the common --set options only
  for (const std::string& platform : spec.platforms) {
    base.emplace(platform, loadInputs({platform, spec.model, spec.scenario, spec.sets}, true));
  }
  const Inputs& first = base.begin()->second;
  const bool closedLoop = first.scenario.kind == workload::ScenarioKind::kServing &&
                          first.scenario.load.impl == workload::LoadKind::kClosedLoop;
  // A decode step's "concurrency" is its batch: each user gets one token per step.
  const bool decodeStep = first.scenario.kind == workload::ScenarioKind::kDecodeStep;
  const bool concurrencyAxis = std::any_of(spec.axes.begin(), spec.axes.end(), [](const sweep::Axis& a) {
    return a.name == "concurrency" || a.name == "scenario.load.concurrency" || a.name == "scenario.batch";
  });
  if (concurrencyGiven && concurrencyAxis) {
    throw ConfigError(ErrorKind::kConflictingOverride, "--concurrency " + options.concurrency,
                      "the concurrency (or a decode step's batch) is also varied by --vary; give it once");
  }
  const std::string list = concurrencyGiven ? options.concurrency : sweep::kDefaultConcurrencies;
  if ((concurrencyGiven && list != "none") || (!concurrencyGiven && closedLoop && !concurrencyAxis)) {
    if (decodeStep) {
      spec.axes.push_back(sweep::parseAxis("scenario.batch=" + list));
    } else if (!closedLoop) {
      throw ConfigError(ErrorKind::kInvalidConfig, "--concurrency " + list,
                        fmt::format("scenario '{}' is not a closed-loop serving load; its concurrency cannot vary",
                                    first.scenario.name));
    } else {
      spec.axes.push_back(sweep::parseAxis("concurrency=" + list));
    }
  }
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      if (spec.axes[a].name == spec.axes[b].name) {
        throw ConfigError(ErrorKind::kConflictingOverride, "--vary " + spec.axes[a].name, "this key is varied twice");
      }
    }
  }

  std::vector<sweep::Point> points =
      expandGrid(spec, [&](const std::string& platform) { return base.at(platform).platform.chipTypes.size(); });
  for (sweep::Point& point : points) {
    try {
      // Loaded once: the digest serves every later check of the point's report.
      point.digest = loadInputs({point.platform, spec.model, spec.scenario, point.sets}, true).digest;
    } catch (const ConfigError& e) {
      throw ConfigError(e.kind(), e.location(), fmt::format("{} (sweep point {})", e.message(), describePoint(point)));
    }
  }
  return {spec, points};
}

/// A Slurm array job: one task per point still to run; each task runs `scoville sweep --point`.
std::string slurmScript(const std::string& outDir, const std::vector<std::size_t>& todo) {
  const std::string dir = fs::absolute(outDir).lexically_normal().string();
  return fmt::format(
      "#!/bin/bash\n"
      "# A Scoville sweep as a Slurm array job: one task per point (SystemC elaborates once per process).\n"
      "# Written by `scoville sweep --emit-slurm`. Submit with: sbatch {0}/slurm/sweep.sbatch\n"
      "# then combine the points with: {1} merge {0}\n"
      "#SBATCH --job-name=scoville-sweep\n"
      "#SBATCH --array={2}\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --output={0}/slurm/point-%a.out\n"
      "export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1\n"
      "exec {1} sweep --out {3} --point \"$SLURM_ARRAY_TASK_ID\"\n",
      dir, shellQuote(sweep::selfExecutable()), indexRanges(todo), shellQuote(dir));
}

/// Runs point `index` of the sweep in `outDir` (a Slurm array task): skips it when its report is
/// already valid, otherwise replaces this process with its `scoville run`.
int runOnePoint(const std::string& outDir, long index, std::ostream& out) {
  const fs::path manifestPath = fs::path(outDir) / "sweep.json";
  if (!fs::exists(manifestPath)) {
    throw ConfigError(ErrorKind::kFileNotFound, "--out " + outDir,
                      "no sweep.json here: run the sweep with --emit-slurm first");
  }
  nlohmann::json manifest;
  try {
    std::ifstream in(manifestPath);
    manifest = nlohmann::json::parse(in);
    if (manifest.at("schema_version").get<int>() != sweep::kManifestSchemaVersion) {
      throw std::runtime_error("another schema version");
    }
    manifest.at("points").at(0).at("sets");  // (a sweep has at least one point)
  } catch (const std::exception& e) {
    throw ConfigError(ErrorKind::kInvalidConfig, manifestPath.string(),
                      fmt::format("not a sweep manifest of this scoville ({}); emit the sweep again", e.what()));
  }
  const auto& points = manifest.at("points");
  if (index < 0 || static_cast<std::size_t>(index) >= points.size()) {
    throw ConfigError(ErrorKind::kOutOfRange, fmt::format("--point {}", index),
                      fmt::format("the sweep has points 0 to {}", points.size() - 1));
  }
  const auto& point = points[static_cast<std::size_t>(index)];
  const fs::path dir = fs::path(outDir) / point.at("dir").get<std::string>();
  const fs::path report = dir / "report.json";
  // What the point's report must have been made from.
  sweep::Spec spec;
  spec.model = manifest.at("model").get<std::string>();
  spec.scenario = manifest.at("scenario").get<std::string>();
  spec.seed = manifest.at("seed").get<uint64_t>();
  spec.timing = manifest.at("timing").get<std::string>();
  spec.exact = manifest.value("exact", false);
  sweep::Point p;
  p.platform = point.at("platform").get<std::string>();
  p.sets = point.at("sets").get<std::vector<std::string>>();
  const auto args = point.at("run_args").get<std::vector<std::string>>();
  if (sweep::staleReason(spec, p, report.string()).empty()) {
    out << fmt::format("point {} ({}) is already done\n", index, point.at("id").get<std::string>());
    return kExitOk;
  }
  fs::remove_all(dir);
  const std::string self = sweep::selfExecutable();
  sweep::Argv argv(self, args);
  out.flush();
  ::execv(self.c_str(), argv.data());
  throw SimulationError(fmt::format("cannot run {}: {}", self, std::strerror(errno)));
}

class Progress {
 public:
  Progress(std::ostream& out, bool tty, std::size_t total) : m_out(out), m_tty(tty), m_total(total) {}

  void point(std::size_t done, std::size_t failed, const std::string& line) {
    m_done = done;
    m_failed = failed;
    if (m_tty) {
      m_out << "\r\033[K" << line << "\n";
    } else {
      m_out << fmt::format("[{}/{}] {}\n", done, m_total, line) << std::flush;
    }
  }

  /// The bar (a terminal only): points done, running, elapsed and estimated time left.
  void bar(std::size_t running, double elapsed, std::size_t finishedHere, std::size_t leftToRun) {
    if (!m_tty) return;
    constexpr int kWidth = 30;
    const int filled = m_total == 0 ? kWidth : static_cast<int>(kWidth * m_done / m_total);
    const std::string eta =
        finishedHere == 0 ? "--" : clock(elapsed / static_cast<double>(finishedHere) * static_cast<double>(leftToRun));
    m_out << fmt::format("\r\033[K[{}{}] {}/{} points, {} running, {} failed, {} elapsed, ETA {}",
                         std::string(static_cast<std::size_t>(filled), '#'),
                         std::string(static_cast<std::size_t>(kWidth - filled), '.'), m_done, m_total, running,
                         m_failed, clock(elapsed), eta)
          << std::flush;
  }

  void finish() {
    if (m_tty) m_out << "\r\033[K" << std::flush;
  }

 private:
  std::ostream& m_out;
  bool m_tty;
  std::size_t m_total;
  std::size_t m_done = 0;
  std::size_t m_failed = 0;
};

}  // namespace

int sweepCommand(const Args& args, std::ostream& out) {
  SweepOptions options;
  po::options_description description("scoville sweep: run a grid of points, one process each, in parallel");
  description.add_options()("help,h", "show this help")(
      "platform,p", po::value(&options.platforms)->composing(),
      "platform NAME or FILE.yaml; repeat for several (default: jalapeno)")(
      "model,m", po::value(&options.model)->default_value(options.model), "model NAME or FILE.yaml")(
      "scenario,s", po::value(&options.scenario)->default_value(options.scenario), "scenario NAME or FILE.yaml")(
      "set", po::value(&options.sets)->composing(), "override one key in every point (as `scoville run --set`)")(
      "concurrency,c", po::value(&options.concurrency),
      "closed-loop concurrencies, comma-separated (default for a closed-loop scenario: 1,2,4,...,256; "
      "'none': keep the scenario's)")(
      "vary", po::value(&options.vary)->composing(),
      "KEY=V1,V2,...: one more grid axis (repeatable); KEY is platform.*, model.*, scenario.*, "
      "chip.* (in every chip type) or concurrency, e.g. --vary 'chip.hbm.bandwidth=4 TB/s,8 TB/s'")(
      "jobs,j", unsignedValue(options.jobs, "--jobs", false), "points run at once (default: the number of cores)")(
      "out,o", po::value(&options.out)->default_value(options.out),
      "sweep directory: sweep.json, points/ID/ (each run's report and log), results.json, points.csv")(
      "seed", unsignedValue(options.seed, "--seed"), "random seed of every point")(
      "timing", po::value(&options.timing)->default_value(options.timing), "timing mode of every point: lt or at")(
      "exact", po::bool_switch(&options.exact),
      "every point simulates every replica and every step (`scoville run --exact`: no replica classes, no sampled "
      "decode steps)")(
      "emit-slurm", po::bool_switch(&options.emitSlurm),
      "write OUT/slurm/sweep.sbatch (a Slurm array job of the points still to run) instead of running them")(
      "point", po::value(&options.point), "run only point K of OUT/sweep.json (what each Slurm array task does)")(
      "dry-run", po::bool_switch(&options.dryRun), "list the points and whether each must run; run nothing")(
      "quiet,q", po::bool_switch(&options.quiet), "print only errors");
  addComparisonOptions(description, options.comparison);
  po::variables_map vm = parseOptions(args, description);
  if (vm.count("help")) {
    out << "usage: scoville sweep [OPTIONS]\n"
        << "A killed sweep, restarted with the same command, runs only the points without a valid report.\n"
        << description << "\n";
    return kExitOk;
  }
  po::notify(vm);
  if (options.point >= 0 || vm.count("point")) return runOnePoint(options.out, options.point, out);
  if (vm.count("jobs") && options.jobs == 0) throw po::error("--jobs must be at least 1");
  if (options.jobs == 0) options.jobs = std::max(1u, std::thread::hardware_concurrency());
  parseTimingMode(options.timing);  // checked before any point runs
  checkComparisonOptions(options.comparison);

  auto [spec, points] = planSweep(options, vm.count("concurrency") > 0);
  prepareOutputDirectory(options.out);
  fs::create_directories(fs::path(options.out) / "points");
  writeFileAtomically((fs::path(options.out) / "sweep.json").string(),
                      sweep::manifest(spec, points, options.out).dump(2) + "\n");

  std::vector<std::size_t> todo;
  std::vector<std::string> reasons(points.size());
  for (const sweep::Point& point : points) {
    reasons[point.index] =
        sweep::staleReason(spec, point, (fs::path(options.out) / "points" / point.id / "report.json").string());
    if (!reasons[point.index].empty()) todo.push_back(point.index);
  }
  if (options.dryRun) {
    for (const sweep::Point& point : points) {
      out << fmt::format("{:>4} {:<60} {}\n", point.index, describePoint(point),
                         reasons[point.index].empty() ? "done" : "to run: " + reasons[point.index]);
    }
    out << fmt::format("{} points, {} to run\n", points.size(), todo.size());
    return kExitOk;
  }
  if (options.emitSlurm) {
    if (todo.empty()) {
      out << "every point is done; merge with: scoville merge " << options.out << "\n";
      return kExitOk;
    }
    fs::create_directories(fs::path(options.out) / "slurm");
    const std::string script = (fs::path(options.out) / "slurm" / "sweep.sbatch").string();
    writeFileAtomically(script, slurmScript(options.out, todo));
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
    out << fmt::format("{} of {} points to run: sbatch {}\nthen: scoville merge {}\n", todo.size(), points.size(),
                       script, options.out);
    return kExitOk;
  }

  // Run the points still to run, `jobs` at a time.
  const std::string self = sweep::selfExecutable();
  const bool tty = !options.quiet && ::isatty(STDOUT_FILENO) == 1;
  std::ostringstream quietSink;
  std::ostream& log = options.quiet ? quietSink : out;
  Progress progress(log, tty, points.size());
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  sweep::ProcessPool pool;
  ::setenv("SCOVILLE_SWEEP_PID", std::to_string(::getpid()).c_str(), 1);  // the runs die with the sweep
  std::map<pid_t, std::pair<std::size_t, double>> running;                // pid -> (point, start)
  std::size_t next = 0, done = points.size() - todo.size(), finishedHere = 0;
  std::vector<std::size_t> failed;
  if (!options.quiet && done > 0) log << fmt::format("{} of {} points already done\n", done, points.size());
  while (next < todo.size() || pool.running() > 0) {
    while (next < todo.size() && pool.running() < options.jobs) {
      const sweep::Point& point = points[todo[next++]];
      const fs::path dir = fs::path(options.out) / "points" / point.id;
      fs::remove_all(dir);  // leftovers of a killed run
      fs::create_directories(dir);
      const pid_t pid =
          pool.spawn(self, sweep::runRequest(spec, point, dir.string()).commandLine(), (dir / "run.log").string());
      running[pid] = {point.index, elapsed()};
    }
    progress.bar(pool.running(), elapsed(), finishedHere, todo.size() - finishedHere);
    const auto ended = pool.waitAny(1.0);
    if (!ended) continue;
    const auto [index, started] = running.at(ended->first);
    running.erase(ended->first);
    const sweep::Point& point = points[index];
    const fs::path dir = fs::path(options.out) / "points" / point.id;
    ++done;
    ++finishedHere;
    std::string why = ended->second != 0 ? fmt::format("exit code {}", ended->second)
                                         : sweep::staleReason(spec, point, (dir / "report.json").string());
    if (why.empty()) {
      progress.point(done, failed.size(),
                     fmt::format("{}: done in {:.1f} s", describePoint(point), elapsed() - started));
    } else {
      failed.push_back(index);
      progress.point(done, failed.size(),
                     fmt::format("{}: FAILED ({}); {}:\n{}", describePoint(point), why, (dir / "run.log").string(),
                                 sweep::tailOfFile((dir / "run.log").string(), 5)));
    }
  }
  progress.finish();

  std::vector<std::pair<std::string, std::string>> missing;
  std::vector<results::Row> rows = results::loadRows({options.out}, missing);
  if (!options.quiet) {
    log << fmt::format("sweep: {} points ({} run, {} reused, {} failed) in {}\n", points.size(), todo.size(),
                       points.size() - todo.size(), failed.size(), clock(elapsed()));
  }
  writeResults(options.out, rows, missing, options.comparison, log, options.quiet);
  if (!failed.empty()) {
    std::vector<std::string> ids;
    for (const std::size_t i : failed) ids.push_back(points[i].id);
    throw SimulationError(fmt::format("{} of {} points failed (see each one's run.log): {}", failed.size(),
                                      points.size(), fmt::join(ids, ", ")));
  }
  return kExitOk;
}

namespace {

/// Rows from merge-style inputs; an unreadable report is bad input (exit 2), naming it.
std::vector<results::Row> loadInputRows(const std::vector<std::string>& inputs,
                                        std::vector<std::pair<std::string, std::string>>& missing) {
  std::vector<results::Row> rows;
  try {
    rows = results::loadRows(inputs, missing);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConfigError(ErrorKind::kInvalidConfig, "", e.what());
  }
  if (rows.empty()) {
    throw ConfigError(ErrorKind::kFileNotFound, fmt::format("{}", fmt::join(inputs, " ")), "no finished runs found");
  }
  return rows;
}

}  // namespace

namespace {

/// The runs to merge: positional INPUT... (sweep directories, directories of runs, report.json
/// files), with the comparison options; parses `args` into `vm`. False when --help was given.
bool parseMergeInputs(const Args& args, po::options_description& description, std::vector<std::string>& inputs,
                      results::MergeOptions& merge, po::variables_map& vm) {
  description.add_options()("input", po::value(&inputs)->composing(),
                            "sweep directories, directories of runs, or report.json files");
  addComparisonOptions(description, merge);
  po::positional_options_description positional;
  positional.add("input", -1);
  po::store(po::command_line_parser(args).options(description).positional(positional).run(), vm);
  if (vm.count("help")) return false;
  po::notify(vm);
  if (inputs.empty()) throw po::error("give at least one sweep directory, directory of runs or report.json");
  checkComparisonOptions(merge);
  return true;
}

/// Merges `inputs` into `outDir`: results.json and points.csv.
void mergeInto(const std::vector<std::string>& inputs, const std::string& outDir, const results::MergeOptions& merge,
               std::ostream& out, bool quiet) {
  std::vector<std::pair<std::string, std::string>> missing;
  std::vector<results::Row> rows = loadInputRows(inputs, missing);
  prepareOutputDirectory(outDir);
  writeResults(outDir, std::move(rows), missing, merge, out, quiet);
}

}  // namespace

int mergeCommand(const Args& args, std::ostream& out) {
  std::vector<std::string> inputs;
  std::string outDir;
  results::MergeOptions merge;
  bool quiet = false;
  po::options_description description("scoville merge: combine runs into results.json and points.csv");
  description.add_options()("help,h", "show this help")(
      "out,o", po::value(&outDir),
      "where results.json and points.csv go (default: the one sweep directory given, else scoville-merged)")(
      "quiet,q", po::bool_switch(&quiet), "print only errors");
  po::variables_map vm;
  if (!parseMergeInputs(args, description, inputs, merge, vm)) {
    out << "usage: scoville merge INPUT... [--out DIR]\n" << description << "\n";
    return kExitOk;
  }
  if (outDir.empty()) {
    outDir = inputs.size() == 1 && fs::exists(fs::path(inputs[0]) / "sweep.json") ? inputs[0] : "scoville-merged";
  }
  mergeInto(inputs, outDir, merge, out, quiet);
  return kExitOk;
}

int reportCommand(const Args& args, std::ostream& out) {
  std::vector<std::string> inputs;
  std::string outDir = "scoville-report";
  std::string title = "Scoville design review";
  std::vector<std::string> claims;
  results::MergeOptions merge;
  po::options_description description(
      "scoville report: merge runs and render a design-review report (index.html, report.md, figures)");
  description.add_options()("help,h", "show this help")(
      "out,o", po::value(&outDir)->default_value(outDir),
      "report directory: index.html (self-contained), report.md, figures/, results.json, points.csv")(
      "title", po::value(&title)->default_value(title), "the report's title")(
      "claims", po::value(&claims)->composing(),
      "FILE.yaml of published claims (workloads/validation/claims-*.yaml): the report opens with them beside the "
      "simulated values, which are also printed (repeatable; docs/validation.md#the-main-job)");
  po::variables_map vm;
  if (!parseMergeInputs(args, description, inputs, merge, vm)) {
    out << "usage: scoville report INPUT... [--out DIR] [--claims FILE.yaml]...\n"
        << "Plots are drawn by " << kReportScript << " with Debian's python3-matplotlib.\n"
        << description << "\n";
    return kExitOk;
  }
  const std::string script = (fs::path(config::dataDirectory()) / kReportScript).string();
  if (!fs::exists(script)) throw ConfigError(ErrorKind::kFileNotFound, script, "the report renderer is missing");
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  for (const std::string& file : claims) {
    if (!fs::is_regular_file(file)) throw ConfigError(ErrorKind::kFileNotFound, "--claims " + file, "no such file");
  }

  mergeInto(inputs, outDir, merge, out, true);
  out.flush();
  std::vector<std::string> renderArgs{script, (fs::path(outDir) / "results.json").string(), "--out", outDir, "--title",
                                      title};
  for (const std::string& file : claims) renderArgs.insert(renderArgs.end(), {"--claims", file});
  const int code = sweep::runAndWait(python, renderArgs);
  if (code == kExitUsageOrConfigError) return code;  // the renderer said why on stderr
  if (code != 0) throw SimulationError(fmt::format("{} {} failed with exit code {}", python, script, code));
  out << "report: " << (fs::path(outDir) / "index.html").string() << " and report.md\n";
  return kExitOk;
}

}  // namespace scoville::cli
