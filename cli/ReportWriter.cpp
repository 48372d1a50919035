#include "cli/ReportWriter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "config/ConfigError.h"

namespace fs = std::filesystem;

namespace scoville::cli {

namespace {

/// What is at `path` when it is not a regular file ("" when absent or a regular file); the
/// link itself, not its target.
std::string specialFileKind(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "";
  if (S_ISREG(info.st_mode)) return "";
  if (S_ISLNK(info.st_mode)) return "a symbolic link";
  if (S_ISDIR(info.st_mode)) return "a directory";
  if (S_ISFIFO(info.st_mode)) return "a FIFO";
  if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) return "a device";
  if (S_ISSOCK(info.st_mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void checkOutputTarget(const std::string& option, const std::string& path) {
  if (const std::string kind = specialFileKind(path); !kind.empty()) {
    throw config::ConfigError(config::ErrorKind::kOutputNotWritable, option,
                              fmt::format("'{}' is {}; an output is written only as a new or regular file, so "
                                          "name another path",
                                          path, kind));
  }
}

void checkOutputTargets(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<fs::path> resolved;
  for (const auto& [option, path] : outputs) {
    checkOutputTarget(option, path);
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) canonical = fs::absolute(path).lexically_normal();
    for (std::size_t i = 0; i < resolved.size(); ++i) {
      if (resolved[i] == canonical) {
        throw config::ConfigError(
            config::ErrorKind::kOutputNotWritable, option,
            fmt::format("'{}' is also the file of {}: each output needs a path of its own", path, outputs[i].first));
      }
    }
    resolved.push_back(std::move(canonical));
  }
}

void prepareOutputDirectory(const std::string& directory, const std::string& location) {
  using config::ConfigError;
  using config::ErrorKind;
  const std::string where = location.empty() ? "--out " + directory : location;
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec || !fs::is_directory(directory)) {
    throw ConfigError(
        ErrorKind::kOutputNotWritable, where,
        fmt::format("cannot create output directory {}: {}", directory, ec ? ec.message() : "not a directory"));
  }
  const fs::path probe = fs::path(directory) / fmt::format(".scoville-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    throw ConfigError(ErrorKind::kOutputNotWritable, where,
                      fmt::format("output directory {} is not writable: {}", directory, std::strerror(errno)));
  }
  ::close(fd);
  fs::remove(probe, ec);
}

void startRunOutput(const std::string& directory) {
  prepareOutputDirectory(directory);
  const auto remove = [](const fs::path& path) {
    std::error_code removeError;
    fs::remove(path, removeError);
    if (removeError) throw OutputError(fmt::format("cannot remove {}: {}", path.string(), removeError.message()));
  };
  // The earlier report first: it is written last and stands for a whole set of outputs, so a run
  // killed while it clears the others leaves none that claims to be whole.
  remove(fs::path(directory) / "report.json");
  // Fault injection for the crash-safety tests: die as kill -9 would, with the others still there.
  if (const char* fault = std::getenv("SCOVILLE_FAULT_KILL_AFTER"); fault != nullptr && std::string(fault) == "clear") {
    ::raise(SIGKILL);
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    // writeFileAtomically's temporaries: .NAME.tmp-PID
    const bool output = name == "requests.csv" || name == "power.csv";
    if (output || (name.size() > 1 && name[0] == '.' && name.find(".tmp-") != std::string::npos)) remove(entry.path());
  }
}

void writeFileAtomically(const std::string& path, const std::string& content) {
  const fs::path target(path);
  if (const std::string kind = specialFileKind(path); !kind.empty()) {
    throw OutputError(fmt::format("cannot write {}: it is {}, which is never replaced", path, kind));
  }
  const fs::path temporary = target.parent_path() / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw OutputError(fmt::format("cannot write {}: {}", temporary.string(), std::strerror(errno)));
  std::size_t written = 0;
  bool ok = true;
  while (ok && written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  const int savedErrno = errno;
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || std::rename(temporary.c_str(), target.c_str()) != 0) {
    std::error_code ec;
    fs::remove(temporary, ec);
    throw OutputError(fmt::format("cannot write {}: {}", path, std::strerror(ok ? errno : savedErrno)));
  }
  // Fault injection for the crash-safety tests (docs/testing.md): die as kill -9 would, right
  // after this file is in place.
  if (const char* fault = std::getenv("SCOVILLE_FAULT_KILL_AFTER"); fault != nullptr && target.filename() == fault) {
    ::raise(SIGKILL);
  }
}

}  // namespace scoville::cli
