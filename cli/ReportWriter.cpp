#include "cli/ReportWriter.h"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "tlm/config/ConfigError.h"

namespace fs = std::filesystem;

namespace scoville::cli {

void prepareOutputDirectory(const std::string& directory) {
  using config::ConfigError;
  using config::ErrorKind;
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec || !fs::is_directory(directory)) {
    throw ConfigError(ErrorKind::kOutputNotWritable, "--out " + directory,
                      fmt::format("cannot create output directory: {}", ec ? ec.message() : "not a directory"));
  }
  const fs::path probe = fs::path(directory) / fmt::format(".scoville-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    throw ConfigError(ErrorKind::kOutputNotWritable, "--out " + directory,
                      fmt::format("output directory is not writable: {}", std::strerror(errno)));
  }
  ::close(fd);
  fs::remove(probe, ec);
}

void writeFileAtomically(const std::string& path, const std::string& content) {
  const fs::path target(path);
  const fs::path temporary = target.parent_path() / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", temporary.string(), std::strerror(errno)));
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
    throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(ok ? errno : savedErrno)));
  }
}

}  // namespace scoville::cli
