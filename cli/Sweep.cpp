#include "cli/Sweep.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "cli/RunReport.h"
#include "config/ConfigError.h"
#include "config/InputDigest.h"
#include "config/Text.h"
#include "config/Units.h"

extern char** environ;

namespace fs = std::filesystem;

namespace scoville::cli::sweep {

namespace {

/// Letters, digits, '.', '-' and '=' kept; anything else (spaces, '/', brackets) becomes '_'.
std::string sanitize(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '=';
    out += keep ? c : '_';
  }
  return out;
}

/// The last dotted component of an axis name ("chip.hbm.bandwidth" -> "bandwidth").
std::string shortName(const std::string& axis) {
  const auto dot = axis.rfind('.');
  return dot == std::string::npos ? axis : axis.substr(dot + 1);
}

std::string platformStem(const std::string& platform) {
  const fs::path path(platform);
  return path.has_extension() ? path.stem().string() : path.filename().string();
}

/// Everything that determines a point's result, in one string.
std::string canonical(const Spec& spec, const Point& point) {
  std::string text = fmt::format("platform={}\nmodel={}\nscenario={}\nseed={}\ntiming={}\n", point.platform, spec.model,
                                 spec.scenario, spec.seed, spec.timing);
  if (spec.exact) text += "exact=1\n";  // (absent when off: the fingerprints of earlier sweeps hold)
  std::vector<std::string> sets = point.sets;
  std::sort(sets.begin(), sets.end());
  for (const std::string& set : sets) text += "set=" + set + "\n";
  return text;
}

}  // namespace

Axis parseAxis(const std::string& option) {
  using config::ConfigError;
  using config::ErrorKind;
  const auto equals = option.find('=');
  Axis axis;
  if (equals == std::string::npos || config::trimBlanks(option.substr(0, equals)).empty()) {
    throw ConfigError(ErrorKind::kBadOverride, "--vary " + option, "expected KEY=VALUE1,VALUE2,...");
  }
  axis.name = std::string(config::trimBlanks(option.substr(0, equals)));
  std::stringstream values(option.substr(equals + 1));
  std::string value;
  while (std::getline(values, value, ',')) {
    value = std::string(config::trimBlanks(value));
    if (value.empty()) {
      throw ConfigError(ErrorKind::kBadOverride, "--vary " + option, "an empty value in the list");
    }
    axis.values.push_back(value);
  }
  if (axis.values.empty()) throw ConfigError(ErrorKind::kBadOverride, "--vary " + option, "no values given");
  // Twice the same text, or the same quantity in other words ("1 TB/s" and "1000 GB/s").
  const auto quantity = [](const std::string& text) -> std::optional<config::Quantity> {
    try {
      return config::parseQuantity(text);
    } catch (const config::UnitError&) {
      return std::nullopt;
    }
  };
  for (std::size_t i = 0; i < axis.values.size(); ++i) {
    const std::optional<config::Quantity> qi = quantity(axis.values[i]);
    for (std::size_t j = 0; j < i; ++j) {
      const std::optional<config::Quantity> qj = quantity(axis.values[j]);
      const bool same =
          axis.values[i] == axis.values[j] || (qi && qj && qi->dimension == qj->dimension && qi->value == qj->value);
      if (same) {
        throw ConfigError(ErrorKind::kBadOverride, "--vary " + option,
                          axis.values[i] == axis.values[j]
                              ? fmt::format("value '{}' is listed twice", axis.values[i])
                              : fmt::format("value '{}' is listed twice (as '{}')", axis.values[i], axis.values[j]));
      }
    }
  }
  const bool rooted =
      axis.name.rfind("platform.", 0) == 0 || axis.name.rfind("model.", 0) == 0 || axis.name.rfind("scenario.", 0) == 0;
  const bool alias = axis.name == "concurrency" || (axis.name.rfind("chip.", 0) == 0 && axis.name.size() > 5);
  if (!rooted && !alias) {
    throw ConfigError(ErrorKind::kBadOverride, "--vary " + option,
                      fmt::format("'{}' is not a key: expected platform.KEY, model.KEY, scenario.KEY, chip.KEY "
                                  "(in every chip type) or concurrency",
                                  axis.name));
  }
  return axis;
}

std::vector<std::string> axisSets(const std::string& axis, const std::string& value, std::size_t chipTypes) {
  if (axis == "concurrency") return {"scenario.load.concurrency=" + value};
  if (axis.rfind("chip.", 0) == 0) {
    std::vector<std::string> sets;
    for (std::size_t i = 0; i < chipTypes; ++i) {
      sets.push_back(fmt::format("platform.chip_types[{}].{}={}", i, axis.substr(5), value));
    }
    return sets;
  }
  return {axis + "=" + value};
}

std::vector<Point> expandGrid(const Spec& spec, const std::function<std::size_t(const std::string&)>& chipTypesOf) {
  std::vector<Point> points;
  for (const std::string& platform : spec.platforms) {
    const std::size_t chipTypes = chipTypesOf(platform);
    // Odometer over the axes, the last one fastest.
    std::vector<std::size_t> at(spec.axes.size(), 0);
    while (true) {
      Point point;
      point.index = points.size();
      point.platform = platform;
      point.sets = spec.sets;
      std::string id = sanitize(platformStem(platform));
      for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        const std::string& value = spec.axes[a].values[at[a]];
        point.coordinates.emplace_back(spec.axes[a].name, value);
        for (std::string& set : axisSets(spec.axes[a].name, value, chipTypes)) point.sets.push_back(std::move(set));
        id += "_" + sanitize(shortName(spec.axes[a].name) + "=" + value);
      }
      point.id = fmt::format("{}_{:08x}", id, config::fnv1a(canonical(spec, point)) & 0xffffffffull);
      points.push_back(std::move(point));
      std::size_t a = spec.axes.size();
      while (a > 0 && ++at[a - 1] == spec.axes[a - 1].values.size()) at[--a] = 0;
      if (a == 0) break;
    }
  }
  return points;
}

RunRequest runRequest(const Spec& spec, const Point& point, const std::string& pointDir) {
  RunRequest request;
  request.inputs = InputOptions{point.platform, spec.model, spec.scenario, point.sets};
  request.seed = spec.seed;
  request.timing = spec.timing;
  request.exact = spec.exact;
  request.out = pointDir;
  request.quiet = true;
  return request;
}

nlohmann::ordered_json manifest(const Spec& spec, const std::vector<Point>& points, const std::string& outDir) {
  nlohmann::ordered_json axes = nlohmann::ordered_json::array();
  for (const Axis& axis : spec.axes) axes.push_back({{"name", axis.name}, {"values", axis.values}});
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Point& point : points) {
    nlohmann::ordered_json coordinates = nlohmann::ordered_json::object();
    for (const auto& [name, value] : point.coordinates) coordinates[name] = value;
    const std::string dir = (fs::path("points") / point.id).string();
    list.push_back({{"index", point.index},
                    {"id", point.id},
                    {"platform", point.platform},
                    {"coordinates", coordinates},
                    {"sets", point.sets},
                    {"dir", dir},
                    {"run_args", runRequest(spec, point, (fs::path(outDir) / dir).string()).commandLine()}});
  }
  return {{"schema_version", kManifestSchemaVersion},
          {"generator", {{"name", "scoville"}, {"version", SCOVILLE_VERSION}}},
          {"platforms", spec.platforms},
          {"model", spec.model},
          {"scenario", spec.scenario},
          {"sets", spec.sets},
          {"axes", axes},
          {"seed", spec.seed},
          {"timing", spec.timing},
          {"exact", spec.exact},
          {"points", list}};
}

std::string staleReason(const Spec& spec, const Point& point, const std::string& reportPath) {
  return reportMismatch(runRequest(spec, point, ""), reportPath, point.digest.empty() ? nullptr : &point.digest);
}

Argv::Argv(const std::string& executable, const std::vector<std::string>& args) : m_strings{executable} {
  m_strings.insert(m_strings.end(), args.begin(), args.end());
  for (std::string& arg : m_strings) m_pointers.push_back(arg.data());
  m_pointers.push_back(nullptr);
}

pid_t ProcessPool::spawn(const std::string& executable, const std::vector<std::string>& args,
                         const std::string& logPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  Argv argv(executable, args);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", executable, std::strerror(rc)));
  m_running.push_back(pid);
  return pid;
}

std::optional<std::pair<pid_t, int>> ProcessPool::waitAny(double timeoutS) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutS);
  while (!m_running.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      const auto it = std::find(m_running.begin(), m_running.end(), pid);
      if (it == m_running.end()) continue;  // not one of ours
      m_running.erase(it);
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      return std::make_pair(pid, code);
    }
    if (pid < 0 && errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

int runAndWait(const std::string& executable, const std::vector<std::string>& args) {
  Argv argv(executable, args);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, executable.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", executable, std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string selfExecutable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the scoville executable (/proc/self/exe): " + ec.message());
  return self.string();
}

std::string tailOfFile(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const std::string& l : last) out += l + "\n";
  return out;
}

}  // namespace scoville::cli::sweep
