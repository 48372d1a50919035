#pragma once
// A `scoville run` as a value: every option of the run command, defined once. The run command
// parses its arguments into a RunRequest (addOptions); a command that starts runs in child
// processes (sweep, validate: SystemC elaborates once per process) builds a RunRequest and passes
// the child commandLine(), so its argument list comes from the same option definitions.

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/Inputs.h"

namespace scoville::cli {

/// The name of the run subcommand (argv[1]).
inline constexpr const char* kRunCommandName = "run";

/// The options of one `scoville run`, with the run command's defaults.
struct RunRequest {
  InputOptions inputs;  ///< --platform, --model, --scenario, --set
  std::string out = "scoville-out";
  uint64_t seed = 1;
  std::string timing = "lt";  ///< lt or at (checked by parseTimingMode when the run starts)
  bool quiet = false;
  bool verbose = false;
  bool exact = false;                  ///< simulate every replica (no replica classes)
  bool exactAllChips = false;          ///< and every chip (no mirrored ranks either); implies exact
  int samplePeriod = 16;               ///< steps of a steady decode run per detailed one (1: every step)
  bool dryRun = false;                 ///< print the run's predicted cost (CostModel.h) and run nothing
  std::string trace;                   ///< Perfetto / Chrome trace file ("": none)
  std::string traceStart = "0 s";      ///< its window's start
  std::string traceDuration = "1 ms";  ///< and length
  std::string vcd;                     ///< VCD waveform file ("": none)
  std::string rtlVcd;                  ///< VCD of the RTL blocks' pins and registers ("": none)
  std::string vcdInterval = "1 us";    ///< its sample interval
  std::string maxSimTime = "1e6 s";    ///< simulated time after which the run fails (tlm::kMaxSimulatedTimeS at most)
  std::string timeout;                 ///< wall-clock time after which the run fails ("": none)
  std::string maxMemory = "auto";      ///< memory the run may need ("auto": the machine's available)

  /// Adds every option of `scoville run` (not --help) to `description`, each stored into this
  /// request's field when the parsed options are notified. The request must outlive `description`'s use.
  void addOptions(boost::program_options::options_description& description);

  /// The request that `args` (argv after "run", without --help) give. Throws
  /// boost::program_options::error for an unknown option, a bad value, or --quiet with --verbose.
  static RunRequest fromArgs(const std::vector<std::string>& args);

  /// The arguments (after "run") that fromArgs turns back into this request: inputs, seed, timing
  /// and output directory always; flags when set; trace and waveform options when they differ from
  /// their defaults; the --set overrides last, in order.
  std::vector<std::string> toArgs() const;

  /// argv after the executable: kRunCommandName, then toArgs().
  std::vector<std::string> commandLine() const;

  /// Throws boost::program_options::error for options that exclude each other.
  void check() const;

  bool operator==(const RunRequest& other) const;
  bool operator!=(const RunRequest& other) const { return !(*this == other); }
};

/// Whether a serving run samples its decode steps: the period (0: it does not) and why not.
struct SamplingRequest {
  int period = 0;
  std::string off;
};

/// Sampled decode steps (runtime/StepSampler.h) at `options`' period, unless every step must be
/// simulated: asked for, or a trace or waveforms (`traced`) or the RTL co-simulation (`cosim`) want
/// every transaction.
SamplingRequest samplingRequest(const RunRequest& options, bool traced, bool cosim);

}  // namespace scoville::cli
