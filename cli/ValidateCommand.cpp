// `scoville validate DATASET.yaml`: runs every point of a validation dataset as its own
// `scoville run` (SystemC elaborates once per process), compares each measured metric with the
// simulated one, and prints and writes (validation.json) the signed errors and the MAPE per
// metric. Skipped points are listed with their reason; points that fail to run are listed with
// the run's error. Format: docs/validation.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "cli/Commands.h"
#include "cli/Inputs.h"
#include "cli/ReportWriter.h"
#include "cli/Sweep.h"
#include "cli/ValidationRun.h"
#include "config/ConfigError.h"
#include "config/Loader.h"
#include "workloads/Validation.h"

namespace scoville::cli {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using config::ConfigError;
using config::ErrorKind;
using Json = nlohmann::ordered_json;

namespace {

struct PointOutcome {
  std::string status;  // "compared", "skipped", "failed"
  std::string reason;
  std::vector<workload::MetricComparison> comparisons;
  double wallS = 0.0;
};

/// "fitted" when the point's software-stack profile names it in calibrated_on or the point says
/// what else was fitted to it (`fitted`), else "predicted" (a point without a profile runs the
/// hardware alone, fitted to nothing).
std::string roleOf(const workload::ValidationPoint& p) {
  if (!p.skip.empty()) return "predicted";
  if (!p.fitted.empty()) return "fitted";
  if (p.stack.empty()) return "predicted";
  const workload::SoftwareStackConfig stack = loadSoftwareStack("points[" + p.id + "].stack", p.stack);
  const auto& fitted = stack.calibratedOn;
  return std::find(fitted.begin(), fitted.end(), p.id) != fitted.end() ? "fitted" : "predicted";
}

std::string formatPercent(double v) {
  return fmt::format("{:+.1f}%", v);
}

std::string formatNumber(double v) {
  const double a = std::abs(v);
  if (a != 0.0 && (a < 1e-2 || a >= 1e6)) return fmt::format("{:.3g}", v);
  return fmt::format("{:.4g}", v);
}

/// Compares `report` with the point's measurements; fills `outcome` (failed when a metric is
/// missing). With a `baseline` report, each metric is compared as its ratio to the baseline's
/// ("<metric>_over_baseline").
void compareWithReport(const workload::ValidationPoint& point, const RunReport& report, const RunReport* baseline,
                       PointOutcome& outcome) {
  for (const workload::MeasuredMetric& m : point.metrics) {
    std::optional<double> simulated = simulatedMetric(report, m, point.throughput);
    std::string name = workload::validationMetricName(m.metric);
    if (simulated && baseline != nullptr) {
      const std::optional<double> base = simulatedMetric(*baseline, m, point.throughput);
      simulated = base && *base > 0.0 ? std::optional<double>(*simulated / *base) : std::nullopt;
    }
    if (!simulated) {
      outcome.status = "failed";
      outcome.reason = fmt::format("the run's report has no {} (a power model is needed for power)", name);
      outcome.comparisons.clear();
      return;
    }
    const double measured = baseline != nullptr ? m.value / m.baselineValue : m.si();
    if (baseline != nullptr) name += "_over_baseline";
    outcome.comparisons.push_back(workload::MetricComparison{
        point.id, name, measured, *simulated, (*simulated - measured) / measured * 100.0, m.notComparable});
  }
  outcome.status = "compared";
}

}  // namespace

int validateCommand(const Args& args, std::ostream& out) {
  std::string datasetFile, outDir, only;
  unsigned jobs = 1;
  bool quiet = false;
  po::options_description description("scoville validate: run a validation dataset and compare with its measurements");
  description.add_options()("help,h", "show this help")(
      "out,o", po::value(&outDir), "results directory: validation.json and points/ID/ (default validation-NAME)")(
      "jobs,j", unsignedValue(jobs, "--jobs"), "points run at once")(
      "only", po::value(&only), "comma-separated point ids to run (the others are listed as not selected)")(
      "quiet,q", po::bool_switch(&quiet), "print only the summary");
  const po::variables_map vm = parseWithPositional(args, description, datasetFile);
  if (datasetFile.empty() && !vm.count("help")) {
    throw po::error("give a DATASET (a workloads/validation/ name or a file)");
  }
  if (vm.count("help")) {
    out << "usage: scoville validate DATASET.yaml [--out DIR] [--jobs N] [--only ID,...]\n"
        << "Datasets ship in workloads/validation/ (docs/validation.md).\n"
        << description << "\n";
    return kExitOk;
  }
  if (jobs == 0) throw ConfigError(ErrorKind::kOutOfRange, "--jobs", "--jobs must be at least 1");
  const std::string file = config::resolveConfigFile("dataset", "DATASET", "workloads/validation", datasetFile);
  const workload::ValidationDataset dataset = workload::loadValidationDataset(file);
  std::vector<std::string> ids;
  for (const workload::ValidationPoint& p : dataset.points) ids.push_back(p.id);
  if (vm.count("only") && only.empty()) {
    throw ConfigError(ErrorKind::kBadOverride, "--only", "an empty list (to run everything, leave --only out)");
  }
  const std::set<std::string> selected = selectedIds(only, ids, "point", file);
  if (outDir.empty()) outDir = "validation-" + dataset.name;
  prepareOutputDirectory(outDir);

  // Run the points, `jobs` at a time: each one's run, and its baseline's (in points/ID/baseline).
  std::vector<PointOutcome> outcomes(dataset.points.size());
  std::vector<std::pair<std::size_t, bool>> todo;  // point, baseline run
  std::vector<int> runsLeft(dataset.points.size(), 0);
  std::vector<std::string> failures(dataset.points.size());
  for (std::size_t i = 0; i < dataset.points.size(); ++i) {
    const workload::ValidationPoint& p = dataset.points[i];
    if (!p.skip.empty()) {
      outcomes[i] = PointOutcome{"skipped", p.skip, {}, 0.0};
    } else if (!selected.empty() && selected.count(p.id) == 0) {
      outcomes[i] = PointOutcome{"not_selected", "not in --only", {}, 0.0};
    } else {
      todo.emplace_back(i, false);
      if (p.baseline) todo.emplace_back(i, true);
      runsLeft[i] = p.baseline ? 2 : 1;
    }
  }
  const auto runDir = [&](std::size_t i, bool baseline) {
    const fs::path dir = fs::path(outDir) / "points" / dataset.points[i].id;
    return baseline ? dir / "baseline" : dir;
  };
  const std::string self = sweep::selfExecutable();
  ::setenv("SCOVILLE_SWEEP_PID", std::to_string(::getpid()).c_str(), 1);  // the runs die with this process
  sweep::ProcessPool pool;
  struct Running {
    std::size_t point;
    bool baseline;
    std::chrono::steady_clock::time_point started;
  };
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  while (next < todo.size() || pool.running() > 0) {
    while (next < todo.size() && pool.running() < jobs) {
      const auto [index, baseline] = todo[next];
      const workload::ValidationPoint& p = dataset.points[index];
      const fs::path dir = runDir(index, baseline);
      if (!baseline) fs::remove_all(dir);  // the point's directory holds its baseline's
      fs::create_directories(dir);
      running[pool.spawn(self, validationRunRequest(p, dir.string(), baseline).commandLine(),
                         (dir / "run.log").string())] = {index, baseline, std::chrono::steady_clock::now()};
      ++next;
    }
    const auto ended = pool.waitAny(1.0);
    if (!ended) continue;
    const Running job = running.at(ended->first);
    running.erase(ended->first);
    const std::size_t index = job.point;
    const workload::ValidationPoint& p = dataset.points[index];
    PointOutcome& o = outcomes[index];
    o.wallS += std::chrono::duration<double>(std::chrono::steady_clock::now() - job.started).count();
    if (ended->second != 0 && failures[index].empty()) {
      failures[index] = fmt::format("{}exit code {}: {}", job.baseline ? "baseline run: " : "", ended->second,
                                    sweep::tailOfFile((runDir(index, job.baseline) / "run.log").string(), 3));
    }
    if (--runsLeft[index] > 0) continue;  // its other run is still going
    if (!failures[index].empty()) {
      o.status = "failed";
      o.reason = failures[index];
    } else {
      const RunReport report = RunReport::read((runDir(index, false) / "report.json").string());
      if (p.baseline) {
        const RunReport base = RunReport::read((runDir(index, true) / "report.json").string());
        compareWithReport(p, report, &base, o);
      } else {
        compareWithReport(p, report, nullptr, o);
      }
    }
    if (!quiet) {
      out << fmt::format("{}: {} in {:.1f} s{}\n", p.id, o.status, o.wallS,
                         o.reason.empty() ? "" : " (" + o.reason + ")");
    }
  }

  // The table, the summary, validation.json. Each point is fitted (its profile was fitted to it)
  // or predicted; the summary gives the MAPE of both together and of each apart.
  std::map<std::string, std::vector<workload::MetricComparison>> byRole;
  std::vector<workload::MetricComparison>& all = byRole["all"];
  Json points = Json::array();
  out << fmt::format("\n{:<32} {:<26} {:>12} {:>12} {:>9}  {}\n", "point", "metric", "measured", "simulated", "error",
                     "role");
  for (std::size_t i = 0; i < dataset.points.size(); ++i) {
    const workload::ValidationPoint& p = dataset.points[i];
    const PointOutcome& o = outcomes[i];
    const std::string role = roleOf(p);
    Json metrics = Json::array();
    for (const workload::MetricComparison& c : o.comparisons) {
      all.push_back(c);
      byRole[role].push_back(c);
      out << fmt::format("{:<32} {:<26} {:>12} {:>12} {:>9}  {}\n", p.id, c.metric, formatNumber(c.measured),
                         formatNumber(c.simulated), formatPercent(c.errorPercent),
                         c.notComparable.empty() ? role : "not comparable: " + c.notComparable);
      Json metric = {{"metric", c.metric},
                     {"measured", c.measured},
                     {"simulated", c.simulated},
                     {"error_percent", c.errorPercent}};
      if (!c.notComparable.empty()) metric["not_comparable"] = c.notComparable;
      metrics.push_back(std::move(metric));
    }
    if (o.status == "skipped" || o.status == "failed") out << fmt::format("{:<32} {}: {}\n", p.id, o.status, o.reason);
    points.push_back({{"id", p.id},
                      {"hardware", p.hardware},
                      {"framework", p.framework},
                      {"source", p.source},
                      {"uncertain", p.uncertain},
                      {"status", o.status},
                      {"role", role},
                      {"fitted", p.fitted.empty() ? Json(nullptr) : Json(p.fitted)},
                      {"reason", o.reason.empty() ? Json(nullptr) : Json(o.reason)},
                      {"wall_time_s", o.wallS},
                      {"metrics", metrics}});
  }
  Json summary = Json::object();
  Json summaryByRole = Json::object();
  for (const char* role : {"all", "fitted", "predicted"}) {
    if (byRole[role].empty()) continue;
    out << fmt::format("\n{:<26} {:>6} {:>8} {:>10}  {}\n", std::string(role) == "all" ? "metric" : role, "points",
                       "MAPE", "max |err|", "worst point");
    for (const auto& [metric, s] : workload::summarize(byRole[role])) {
      out << fmt::format("{:<26} {:>6} {:>7.1f}% {:>9.1f}%  {}\n", metric, s.points, s.mape, s.maxAbsErrorPercent,
                         s.worstPoint);
      const Json entry = {{"points", s.points},
                          {"mape_percent", s.mape},
                          {"max_abs_error_percent", s.maxAbsErrorPercent},
                          {"worst_point", s.worstPoint}};
      if (std::string(role) == "all") {
        summary[metric] = entry;
      } else {
        summaryByRole[role][metric] = entry;
      }
    }
  }
  std::map<std::string, std::size_t> byStatus;
  for (const PointOutcome& o : outcomes) ++byStatus[o.status];
  const std::size_t failed = byStatus["failed"];
  out << fmt::format("{} points: {} compared, {} skipped, {} failed\n", dataset.points.size(), byStatus["compared"],
                     byStatus["skipped"], failed);
  const Json result = {
      {"dataset", dataset.name},          {"file", file},    {"description", dataset.description}, {"summary", summary},
      {"summary_by_role", summaryByRole}, {"points", points}};
  writeFileAtomically((fs::path(outDir) / "validation.json").string(), result.dump(2) + "\n");
  out << "validation: " << (fs::path(outDir) / "validation.json").string() << "\n";
  return failed > 0 ? kExitSimulationError : kExitOk;
}

}  // namespace scoville::cli
