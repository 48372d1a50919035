#pragma once
// A sweep: the grid of points (platforms x varied keys), where each point's run lives, whether a
// stored result can be reused, and running points as child processes. SystemC elaborates once per
// process, so every point is a `scoville run` of its own (docs/sweeps.md).

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/RunRequest.h"

namespace scoville::cli::sweep {

/// Version of sweep.json's layout. Bump on any incompatible change.
inline constexpr int kManifestSchemaVersion = 1;

/// The InferenceX concurrency list, the default axis of a closed-loop serving sweep.
inline constexpr const char* kDefaultConcurrencies = "1,2,4,8,16,32,64,128,256";

/// One varied key and its values, in the order given. `name` is a --set path (platform.*, model.*,
/// scenario.*) or an alias: `concurrency` (scenario.load.concurrency) or `chip.KEY` (KEY in every
/// chip type of the platform).
struct Axis {
  std::string name;
  std::vector<std::string> values;
};

/// Parses --vary's "KEY=V1,V2,..." (values trimmed; none empty). Throws config::ConfigError
/// (kBadOverride) naming the option.
Axis parseAxis(const std::string& option);

/// What every point shares.
struct Spec {
  std::vector<std::string> platforms;  ///< --platform values as given, in order
  std::string model;
  std::string scenario;
  std::vector<std::string> sets;  ///< --set options common to every point
  std::vector<Axis> axes;         ///< outermost first
  uint64_t seed = 1;
  std::string timing = "lt";
  bool exact = false;  ///< every point simulates every replica and step (`scoville run --exact`)
};

struct Point {
  std::size_t index = 0;  ///< position in the sweep (platforms outermost, then axes in order)
  std::string platform;   ///< --platform as given
  std::vector<std::pair<std::string, std::string>> coordinates;  ///< axis name -> value
  std::vector<std::string> sets;  ///< every --set of its run: the common ones, then its axes' (expanded)
  std::string id;                 ///< its directory under points/: readable, and unique per inputs
  std::string digest;             ///< its Inputs::digest once loaded ("" until then)
};

/// The --set options that give `axis` the value `value`; `chipTypes` is the platform's number of
/// chip types (a `chip.KEY` axis sets KEY in each).
std::vector<std::string> axisSets(const std::string& axis, const std::string& value, std::size_t chipTypes);

/// The grid in sweep order. `chipTypesOf(platform)` gives a platform's number of chip types.
std::vector<Point> expandGrid(const Spec& spec, const std::function<std::size_t(const std::string&)>& chipTypesOf);

/// The `scoville run` that computes `point` into `pointDir` (quiet; its commandLine() is the
/// child's argv after the executable).
RunRequest runRequest(const Spec& spec, const Point& point, const std::string& pointDir);

/// sweep.json: the spec, and every point with its id, coordinates and run arguments.
nlohmann::ordered_json manifest(const Spec& spec, const std::vector<Point>& points, const std::string& outDir);

/// Why the report at `reportPath` cannot stand for `point` ("" when it can): reportMismatch
/// (cli/RunReport.h) against the point's runRequest: missing, unreadable, another schema or
/// version, or other inputs (platform, model, scenario, overrides, seed, timing, the contents of
/// the files they name: `point.digest` where set, else loaded again).
std::string staleReason(const Spec& spec, const Point& point, const std::string& reportPath);

/// Child processes, each with stdout and stderr in a log file and stdin from /dev/null.
class ProcessPool {
 public:
  /// Starts `executable` with `args`. Throws std::runtime_error when it cannot be started.
  pid_t spawn(const std::string& executable, const std::vector<std::string>& args, const std::string& logPath);
  /// Waits up to `timeoutS` for a child to end; returns its pid and exit code (128 + signal if
  /// killed by one), or nothing if none ended.
  std::optional<std::pair<pid_t, int>> waitAny(double timeoutS);
  std::size_t running() const { return m_running.size(); }

 private:
  std::vector<pid_t> m_running;
};

/// An exec-style argument vector: `executable`, then `args`, then a null pointer. Keep it no
/// longer than the strings it points into.
class Argv {
 public:
  Argv(const std::string& executable, const std::vector<std::string>& args);
  Argv(const Argv&) = delete;  // the pointers point into this object's strings
  Argv& operator=(const Argv&) = delete;
  char** data() { return m_pointers.data(); }

 private:
  std::vector<std::string> m_strings;
  std::vector<char*> m_pointers;
};

/// Runs `executable` with `args`, sharing this process's stdin, stdout and stderr, and returns its
/// exit code (128 + signal if killed by one). Throws std::runtime_error when it cannot start.
int runAndWait(const std::string& executable, const std::vector<std::string>& args);

/// The path of the running executable (/proc/self/exe).
std::string selfExecutable();

/// The last `lines` lines of a text file ("" if unreadable).
std::string tailOfFile(const std::string& path, std::size_t lines);

}  // namespace scoville::cli::sweep
