#pragma once
// Writing result files whole or not at all.

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scoville::cli {

/// Version of report.json's layout (docs/report.md). Bump on any incompatible change.
inline constexpr int kReportSchemaVersion = 3;

/// A result file that could not be written (a full disk, a removed directory): "error[output]",
/// exit code 1. Bad output options found before simulating are config::ConfigError instead.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Checks that an output file may be written at `path`, given by `option` (for the message):
/// absent, or a regular file. A symbolic link, a directory, a FIFO, a device or a socket there is
/// refused, never replaced or written through. Throws config::ConfigError(kOutputNotWritable).
void checkOutputTarget(const std::string& option, const std::string& path);

/// Checks every (option, path) output with checkOutputTarget, and that no two of them name the
/// same file (compared after resolving ".", "..", and symbolic links in the folders). Throws
/// config::ConfigError(kOutputNotWritable) naming both options.
void checkOutputTargets(const std::vector<std::pair<std::string, std::string>>& outputs);

/// Creates `directory` if needed and proves it writable by creating and removing a probe file.
/// Throws config::ConfigError(kOutputNotWritable) located at `location` ("--out DIRECTORY" when
/// empty) otherwise. Call before simulating.
void prepareOutputDirectory(const std::string& directory, const std::string& location = "");

/// prepareOutputDirectory for a run, which then removes what an earlier or killed run left
/// there: its outputs (report.json, requests.csv, power.csv) and temporary files of interrupted
/// writes. Every output file found there afterwards is this run's, whole (report.json last).
void startRunOutput(const std::string& directory);

/// Writes `content` to `path` atomically: a temporary file in the same directory, flushed and
/// fsync'ed, then renamed over `path`. On any failure the temporary is removed, `path` is left
/// as it was, and OutputError is thrown; so it is when something other than a regular file is at
/// `path` (checkOutputTarget), which is never replaced.
void writeFileAtomically(const std::string& path, const std::string& content);

}  // namespace scoville::cli
