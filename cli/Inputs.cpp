#include "cli/Inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "config/InputDigest.h"
#include "config/Loader.h"

namespace po = boost::program_options;

namespace scoville::cli {

void addInputOptions(po::options_description& description, InputOptions& options, bool withWorkload) {
  description.add_options()("platform,p", po::value(&options.platform)->default_value(options.platform),
                            "platform NAME (from platforms/) or FILE.yaml");
  if (withWorkload) {
    description.add_options()("model,m", po::value(&options.model)->default_value(options.model),
                              "model NAME (from workloads/models/) or FILE.yaml")(
        "scenario,s", po::value(&options.scenario)->default_value(options.scenario),
        "scenario NAME (from workloads/scenarios/) or FILE.yaml");
  }
  description.add_options()(
      "set", po::value(&options.sets)->composing(),
      "override one key: ROOT.dotted.key=VALUE with ROOT platform, model or scenario "
      "(repeatable; index lists with [i]), e.g. --set platform.chip_types[0].hbm.bandwidth=\"8 TB/s\"");
}

void appendOption(std::vector<std::string>& args, const std::string& name, const std::string& value) {
  if (!value.empty() && value.front() == '-') {
    args.push_back(name + "=" + value);
  } else {
    args.insert(args.end(), {name, value});
  }
}

std::vector<std::string> inputArgs(const InputOptions& options, bool withWorkload) {
  std::vector<std::string> args;
  appendOption(args, "--platform", options.platform);
  if (withWorkload) {
    appendOption(args, "--model", options.model);
    appendOption(args, "--scenario", options.scenario);
  }
  return args;
}

std::vector<std::string> overrideArgs(const InputOptions& options) {
  std::vector<std::string> args;
  for (const std::string& set : options.sets) appendOption(args, "--set", set);
  return args;
}

Inputs loadInputs(const InputOptions& options, bool withWorkload) {
  std::vector<std::string> roots{"platform"};
  if (withWorkload) {
    roots.emplace_back("model");
    roots.emplace_back("scenario");
  }
  config::Overrides overrides(roots);
  for (const std::string& set : options.sets) overrides.add(set);

  Inputs inputs;
  inputs.overrides = options.sets;
  std::sort(inputs.overrides.begin(), inputs.overrides.end());
  inputs.overrides.erase(std::unique(inputs.overrides.begin(), inputs.overrides.end()), inputs.overrides.end());
  config::InputRecorder recorder;  // every configuration file the loader reads, includes too
  for (const std::string& set : inputs.overrides) recorder.add("set", set);

  const std::string platformFile = config::resolveConfigFile("platform", "platforms", options.platform);
  inputs.platform = platform::PlatformConfig::schema().parse(
      config::loadConfigFile("platform", platformFile, overrides.forRoot("platform")));
  if (withWorkload) {
    const std::string modelFile = config::resolveConfigFile("model", "workloads/models", options.model);
    const std::string scenarioFile = config::resolveConfigFile("scenario", "workloads/scenarios", options.scenario);
    inputs.model =
        workload::ModelConfig::schema().parse(config::loadConfigFile("model", modelFile, overrides.forRoot("model")));
    inputs.scenario = workload::ScenarioConfig::schema().parse(
        config::loadConfigFile("scenario", scenarioFile, overrides.forRoot("scenario")));
    // Files a scenario names are relative to the scenario file.
    const auto resolve = [&](const std::string& file) {
      if (file.empty() || std::filesystem::path(file).is_absolute()) return file;
      return (std::filesystem::path(scenarioFile).parent_path() / file).lexically_normal().string();
    };
    inputs.scenarioFiles.loadTrace = resolve(inputs.scenario.load.file);
    inputs.scenarioFiles.routingTrace = resolve(inputs.scenario.routing.file);
    if (!inputs.scenario.softwareStack.empty()) {
      inputs.scenario.stack = loadSoftwareStack("scenario.software_stack", inputs.scenario.softwareStack);
    }
    inputs.scenarioFiles.platform = platformFile;
    inputs.scenarioFiles.scenario = scenarioFile;
    // The traces are read by the run itself; their contents are inputs too.
    for (const std::string& file : {inputs.scenarioFiles.loadTrace, inputs.scenarioFiles.routingTrace}) {
      if (!file.empty()) recorder.addFile(file);
    }
    if (const auto& spec = inputs.scenario.speculative) {
      if (spec->method == workload::SpeculativeMethod::kDraftModel) {
        const std::string draftFile = config::resolveConfigFile("draft model", "scenario.speculative.draft_model",
                                                                "workloads/models", spec->draftModel);
        inputs.scenario.draftModel = workload::ModelConfig::schema().parse(config::loadConfigFile("model", draftFile));
      }
      if (spec->acceptance.impl == workload::AcceptanceImpl::kTrace) {
        const std::string trace = resolve(spec->acceptance.file);
        inputs.scenario.acceptanceTrace = workload::readAcceptanceTrace(trace, spec->draftTokens);
        recorder.addFile(trace);
      }
    }
  }
  inputs.digest = recorder.digest();
  return inputs;
}

uint64_t parseUnsigned(const std::string& option, const std::string& text, uint64_t max) {
  const bool digits = !text.empty() && text.size() <= 20 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  errno = 0;
  const unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE || value > max) {
    throw po::error(fmt::format("{} expects an integer from 0 to {}, got '{}'", option, max, text));
  }
  return value;
}

std::set<std::string> selectedIds(const std::string& only, const std::vector<std::string>& known, const char* what,
                                  const std::string& file) {
  std::set<std::string> selected;
  std::stringstream list(only);
  for (std::string id; std::getline(list, id, ',');) {
    if (id.empty()) {
      throw config::ConfigError(config::ErrorKind::kBadOverride, "--only " + only,
                                fmt::format("an empty {0} id in the list (to run every {0}, leave --only out)", what));
    }
    if (std::find(known.begin(), known.end(), id) == known.end()) {
      throw config::ConfigError(config::ErrorKind::kUnknownName, "--only",
                                fmt::format("no {} '{}' in {}", what, id, file));
    }
    selected.insert(id);
  }
  if (selected.empty() && !only.empty()) {
    throw config::ConfigError(config::ErrorKind::kBadOverride, "--only " + only, fmt::format("no {} id given", what));
  }
  return selected;
}

void refusePlaceholderOptions(const std::vector<std::string>& args) {
  // The placeholders boost's error messages substitute (boost/program_options/errors.hpp).
  static const char* const kPlaceholders[] = {"%option%", "%canonical_option%", "%original_token%",
                                              "%value%",  "%prefix%",           "%example%"};
  for (const std::string& arg : args) {
    const std::string name = arg.substr(0, arg.find('='));
    if (name.size() > 1 && name[0] == '-' && name.find('%') != std::string::npos) {
      throw po::error(fmt::format("unknown option '{}': option names hold no '%'", name));
    }
    for (const char* placeholder : kPlaceholders) {
      if (arg.find(placeholder) != std::string::npos) {
        throw po::error(
            fmt::format("argument '{}' holds '{}', which the option parser cannot print", arg, placeholder));
      }
    }
  }
}

namespace {

/// The one parser behind parseOptions and parseWithPositional: every option of `description`,
/// then, where `positional` is given, one word that is no option's value stored there; any other
/// such word is a usage error naming it. Not notified.
po::variables_map parseArguments(const std::vector<std::string>& args, const po::options_description& description,
                                 std::string* positional) {
  refusePlaceholderOptions(args);
  po::options_description hidden;
  if (positional != nullptr) hidden.add_options()("positional", po::value<std::string>());
  hidden.add_options()("stray-words", po::value<std::vector<std::string>>());
  po::options_description options;
  options.add(description).add(hidden);
  po::positional_options_description position;
  if (positional != nullptr) position.add("positional", 1);
  position.add("stray-words", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(position).run(), vm);
  if (vm.count("stray-words")) {
    throw po::error(fmt::format("unexpected argument '{}'", vm["stray-words"].as<std::vector<std::string>>().front()));
  }
  if (positional != nullptr && vm.count("positional")) *positional = vm["positional"].as<std::string>();
  return vm;
}

}  // namespace

po::variables_map parseOptions(const std::vector<std::string>& args, const po::options_description& description) {
  return parseArguments(args, description, nullptr);
}

po::variables_map parseWithPositional(const std::vector<std::string>& args, const po::options_description& visible,
                                      std::string& positional) {
  po::variables_map vm = parseArguments(args, visible, &positional);
  po::notify(vm);
  return vm;
}

tlm::TimingMode parseTimingMode(const std::string& timing) {
  if (timing == "lt") return tlm::TimingMode::kLooselyTimed;
  if (timing == "at") return tlm::TimingMode::kApproximatelyTimed;
  throw po::error("--timing must be lt or at, not '" + timing + "'");
}

workload::SoftwareStackConfig loadSoftwareStack(const std::string& option, const std::string& nameOrFile) {
  const std::string file = config::resolveConfigFile("software-stack profile", option, "workloads/stacks", nameOrFile);
  return workload::SoftwareStackConfig::schema().parse(config::loadConfigFile("software_stack", file));
}

}  // namespace scoville::cli
