#include "cli/RunReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <vector>

#include "cli/BuildId.h"
#include "cli/Inputs.h"
#include "cli/ReportWriter.h"
#include "config/ConfigError.h"

namespace scoville::cli {

namespace {

/// The node at `path` below `root`, or null when a key is missing.
const nlohmann::json* find(const nlohmann::json& root, std::initializer_list<const char*> path) {
  const nlohmann::json* node = &root;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

std::optional<double> number(const nlohmann::json* node) {
  if (node == nullptr || !node->is_number()) return std::nullopt;
  return node->get<double>();
}

std::optional<double> number(const nlohmann::json* object, const std::string& key) {
  if (object == nullptr || !object->is_object() || !object->contains(key)) return std::nullopt;
  return number(&(*object)[key]);
}

/// InferenceX's mean_NAME and median_NAME.
InferenceXMetrics::Statistics statistics(const nlohmann::json* block, const std::string& name) {
  return {number(block, "mean_" + name), number(block, "median_" + name)};
}

}  // namespace

RunReport RunReport::fromJson(const nlohmann::json& report) {
  RunReport r;
  if (const nlohmann::json* kind = find(report, {"results", "kind"}); kind != nullptr && kind->is_string()) {
    r.kind = kind->get<std::string>();
  }
  const nlohmann::json* ix = find(report, {"results", "metrics", "inferencex"});
  r.inferenceX.outputTputPerGpu = number(ix, "output_tput_per_gpu");
  r.inferenceX.tputPerGpu = number(ix, "tput_per_gpu");
  r.inferenceX.ttft = statistics(ix, "ttft");
  r.inferenceX.tpot = statistics(ix, "tpot");
  r.inferenceX.e2el = statistics(ix, "e2el");
  r.inferenceX.intvty = statistics(ix, "intvty");
  const nlohmann::json* window = find(report, {"results", "metrics", "throughput_per_chip_tok_per_s"});
  r.windowOutputTputPerGpu = number(window, "output");
  r.windowTputPerGpu = number(window, "total");
  r.averageChipPowerW = number(find(report, {"power", "serving", "average_chip_power_w"}));
  return r;
}

RunReport RunReport::read(const std::string& path) {
  std::ifstream in(path);
  return fromJson(nlohmann::json::parse(in, nullptr, false));
}

std::string reportMismatch(const RunRequest& request, const std::string& reportPath, const std::string* inputsDigest) {
  if (!std::filesystem::exists(reportPath)) return "no report yet";
  nlohmann::json report;
  try {
    std::ifstream in(reportPath);
    report = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return fmt::format("its report does not parse ({})", e.what());
  }
  try {
    if (report.at("schema_version").get<int>() != kReportSchemaVersion) return "its report has another schema version";
    if (report.at("generator").at("version").get<std::string>() != SCOVILLE_VERSION) {
      return fmt::format("its report is from scoville {}", report["generator"]["version"].get<std::string>());
    }
    if (report.at("generator").at("build").get<std::string>() != buildId()) {
      return "its report is from another build of scoville";
    }
    const nlohmann::json& inputs = report.at("inputs");
    const InputOptions& wanted = request.inputs;
    if (inputs.at("platform").at("given_as").get<std::string>() != wanted.platform) return "another platform";
    if (inputs.at("model").at("given_as").get<std::string>() != wanted.model) return "another model";
    if (inputs.at("scenario").at("given_as").get<std::string>() != wanted.scenario) return "another scenario";
    if (inputs.at("seed").get<uint64_t>() != request.seed) return "another seed";
    if (inputs.at("timing").get<std::string>() != request.timing) return "another timing mode";
    std::vector<std::string> sets = wanted.sets;
    std::sort(sets.begin(), sets.end());
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
    if (inputs.at("overrides").get<std::vector<std::string>>() != sets) return "other overrides";
    if (!report.at("results").is_object()) return "its report has no results";
    // Last, as it reads the files: their contents, includes and traces too, as this run would.
    std::string digest;
    if (inputsDigest != nullptr) {
      digest = *inputsDigest;
    } else {
      try {
        digest = loadInputs(request.inputs, true).digest;
      } catch (const config::ConfigError& e) {
        return fmt::format("its inputs do not load ({})", e.what());
      }
    }
    if (inputs.at("digest").get<std::string>() != digest) return "its input files changed";
  } catch (const std::exception& e) {
    return fmt::format("its report is incomplete ({})", e.what());
  }
  return "";
}

}  // namespace scoville::cli
