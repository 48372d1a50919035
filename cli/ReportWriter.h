#pragma once
// Writing result files whole or not at all.

#include <string>

namespace scoville::cli {

/// Version of report.json's layout (docs/report.md). Bump on any incompatible change.
inline constexpr int kReportSchemaVersion = 3;

/// Creates `directory` if needed and proves it writable by creating and removing a probe file.
/// Throws config::ConfigError(kOutputNotWritable) otherwise. Call before simulating.
void prepareOutputDirectory(const std::string& directory);

/// prepareOutputDirectory for a run, which then removes what an earlier or killed run left
/// there: its outputs (report.json, requests.csv, power.csv) and temporary files of interrupted
/// writes. Every output file found there afterwards is this run's, whole (report.json last).
void startRunOutput(const std::string& directory);

/// Writes `content` to `path` atomically: a temporary file in the same directory, flushed and
/// fsync'ed, then renamed over `path`. On any failure the temporary is removed, `path` is left
/// as it was, and std::runtime_error is thrown.
void writeFileAtomically(const std::string& path, const std::string& content);

}  // namespace scoville::cli
