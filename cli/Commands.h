#pragma once
// The subcommands of the `scoville` executable. Each parses its own arguments (argv after the
// subcommand name), prints --help, and returns an exit code; bad input is thrown as
// config::ConfigError or boost::program_options::error and mapped to exit 2 by runMain().

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace scoville::cli {

/// Exit codes of the executable.
inline constexpr int kExitOk = 0;
inline constexpr int kExitSimulationError = 1;
inline constexpr int kExitUsageOrConfigError = 2;

/// A failure of the simulation itself (a target's error response, an unfinished run).
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Args = std::vector<std::string>;

int runCommand(const Args& args, std::ostream& out);
int platformShowCommand(const Args& args, std::ostream& out);
int configDocsCommand(const Args& args, std::ostream& out);
int sweepCommand(const Args& args, std::ostream& out);
int mergeCommand(const Args& args, std::ostream& out);
int reportCommand(const Args& args, std::ostream& out);
int validateCommand(const Args& args, std::ostream& out);
int kernelsCommand(const Args& args, std::ostream& out);
int calibratePowerCommand(const Args& args, std::ostream& out);
int memoryCommand(const Args& args, std::ostream& out);

/// Entry point: dispatches argv[1] to a subcommand and maps exceptions to exit codes.
int runMain(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace scoville::cli
