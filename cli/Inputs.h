#pragma once
// Options shared by the subcommands that read configuration, and the loading of those inputs.

#include <boost/program_options.hpp>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "platforms/PlatformConfig.h"
#include "tlm/TimingMode.h"
#include "workloads/ModelConfig.h"
#include "workloads/ScenarioConfig.h"
#include "workloads/ScenarioFiles.h"
#include "workloads/SoftwareStack.h"

namespace scoville::cli {

/// Built-in choices when an option is not given (the README's "default platform").
inline constexpr const char* kDefaultPlatform = "jalapeno";
inline constexpr const char* kDefaultModel = "llama-3.1-70b";
inline constexpr const char* kDefaultScenario = "decode-step";

struct InputOptions {
  std::string platform = kDefaultPlatform;
  std::string model = kDefaultModel;
  std::string scenario = kDefaultScenario;
  std::vector<std::string> sets;
};

/// Adds --platform, --model, --scenario (as requested) and --set to `description`.
void addInputOptions(boost::program_options::options_description& description, InputOptions& options,
                     bool withWorkload);

/// Appends option `name` with `value` to `args` so that boost's parser reads them back as one:
/// two words, or `name=value` where the value would pass for an option of its own ("-q", "--x").
void appendOption(std::vector<std::string>& args, const std::string& name, const std::string& value);

/// The arguments that give addInputOptions' --platform, --model and --scenario (as requested) the
/// values of `options`, in that order. The --set options are overrideArgs'.
std::vector<std::string> inputArgs(const InputOptions& options, bool withWorkload);

/// The --set arguments of `options.sets`, in order.
std::vector<std::string> overrideArgs(const InputOptions& options);

struct Inputs {
  platform::PlatformConfig platform;
  workload::ModelConfig model;
  workload::ScenarioConfig scenario;
  workload::ScenarioFiles scenarioFiles;  ///< files the scenario names, resolved against its directory
  std::vector<std::string> overrides;     ///< the --set options, sorted, as given
  /// 16 hex digits over the contents of every file read (includes, stack profile, load and
  /// routing traces) and the overrides: equal digests mean equal resolved inputs.
  std::string digest;
};

/// An unsigned integer option's value: decimal digits only, at most `max`. Boost's own conversion
/// takes "-1" for 2^64-1; this throws boost::program_options::error naming `option` instead.
uint64_t parseUnsigned(const std::string& option, const std::string& text, uint64_t max);

/// A program_options value that stores an unsigned integer option into `target` through
/// parseUnsigned; its default is `target`'s value unless `withDefault` is false.
template <class T>
boost::program_options::typed_value<std::string>* unsignedValue(T& target, const std::string& option,
                                                                bool withDefault = true) {
  static_assert(std::is_unsigned_v<T>, "unsignedValue() needs an unsigned target");
  auto* value = boost::program_options::value<std::string>()->notifier([&target, option](const std::string& text) {
    target = static_cast<T>(parseUnsigned(option, text, std::numeric_limits<T>::max()));
  });
  if (withDefault) value->default_value(std::to_string(target));
  return value;
}

/// The timing mode a --timing option names: lt or at; anything else is a usage error
/// (boost::program_options::error).
tlm::TimingMode parseTimingMode(const std::string& timing);

/// The software-stack profile `nameOrFile` (a name in workloads/stacks/ or a file), given by
/// `option` (for its error messages). Throws config::ConfigError on bad input.
workload::SoftwareStackConfig loadSoftwareStack(const std::string& option, const std::string& nameOrFile);

/// Boost substitutes %placeholders% in an error message for ever when the option's name or the
/// word it came from holds one (test/fuzz/regressions/percent-placeholder-hangs-run-args.txt,
/// placeholder-in-ambiguous-option-value-run-args.txt); no option name has a '%', and no value
/// needs a boost placeholder, so such a word is refused first: boost::program_options::error
/// naming it.
void refusePlaceholderOptions(const std::vector<std::string>& args);

/// Parses a command's arguments, all options of `description` (not yet notified). A word that is
/// no option's value is a usage error naming it (boost::program_options::error).
boost::program_options::variables_map parseOptions(const std::vector<std::string>& args,
                                                   const boost::program_options::options_description& description);

/// Parses a command's arguments: the options of `visible` (what --help shows) and one positional
/// argument stored in `positional` (a dataset file, say; left as it is when absent); a second one
/// is a usage error naming it. Notified.
boost::program_options::variables_map parseWithPositional(const std::vector<std::string>& args,
                                                          const boost::program_options::options_description& visible,
                                                          std::string& positional);

/// The ids of a comma-separated --only list, each checked against `known` (the dataset's ids of
/// `what`, e.g. "point" or "kernel"); empty for an empty list. Throws config::ConfigError
/// kUnknownName naming the id and `file`.
std::set<std::string> selectedIds(const std::string& only, const std::vector<std::string>& known, const char* what,
                                  const std::string& file);

/// Resolves and parses the platform (and, with withWorkload, the model and scenario), applying
/// the --set overrides. Throws config::ConfigError on any bad input.
Inputs loadInputs(const InputOptions& options, bool withWorkload);

}  // namespace scoville::cli
