#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <filesystem>
#include <map>
#include <ostream>
#include <systemc>

#include "cli/Commands.h"
#include "cli/Inputs.h"
#include "cli/ReportWriter.h"
#include "platforms/Platform.h"
#include "platforms/PlatformSummary.h"
#include "tlm/ProtocolChecker.h"
#include "tlm/TimingMode.h"
#include "tlm/config/Units.h"
#include "workloads/DecodeDriver.h"
#include "workloads/DecodePlan.h"

namespace po = boost::program_options;

namespace scoville::cli {

namespace {

/// Version of report.json's layout (docs/report.md). Bump on any incompatible change.
constexpr int kReportSchemaVersion = 1;

struct RunOptions {
  InputOptions inputs;
  std::string out = "scoville-out";
  uint64_t seed = 1;
  std::string timing = "lt";
  bool quiet = false;
  bool verbose = false;
};

nlohmann::ordered_json decodeResults(const workload::DecodeDriver& driver, const hw::ChipConfig& chip,
                                     const workload::ScenarioConfig& scenario) {
  const workload::DecodePlan& plan = driver.plan();
  const double step = driver.stepTime().to_seconds();
  const double memoryBound = plan.memoryBoundS(chip);
  const double computeBound = plan.computeBoundS(chip);
  const double bound = std::max(memoryBound, computeBound);

  // Where the compute stream's time went, per op class, in plan order of first appearance.
  nlohmann::ordered_json perOp = nlohmann::ordered_json::object();
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const workload::PlannedOp& op = plan.ops[i];
    const auto& t = driver.timings()[i];
    auto& entry = perOp[op.name];
    if (seen[op.name]++ == 0)
      entry = {{"tiles", 0},        {"bytes", 0.0},          {"flops", 0.0},
               {"vector_ops", 0.0}, {"compute_time_s", 0.0}, {"stall_time_s", 0.0}};
    entry["tiles"] = entry["tiles"].get<int>() + 1;
    entry["bytes"] = entry["bytes"].get<double>() + static_cast<double>(op.bytes());
    entry["flops"] = entry["flops"].get<double>() + op.flops();
    entry["vector_ops"] = entry["vector_ops"].get<double>() + op.vectorOps;
    entry["compute_time_s"] = entry["compute_time_s"].get<double>() + (t.computeEnd - t.computeStart).to_seconds();
    // Time the compute stream sat waiting for this op's operands.
    const sc_core::sc_time previousEnd = i > 0 ? driver.timings()[i - 1].computeEnd : sc_core::SC_ZERO_TIME;
    entry["stall_time_s"] = entry["stall_time_s"].get<double>() + (t.computeStart - previousEnd).to_seconds();
  }

  return {{"kind", "decode_step"},
          {"batch", scenario.batch},
          {"context_length", scenario.contextLength},
          {"step_time_s", step},
          {"inter_token_latency_s", step},
          {"tokens_per_s_per_user", 1.0 / step},
          {"output_tokens_per_s", scenario.batch / step},
          {"bytes_moved", plan.bytesMoved},
          {"flops", plan.flops},
          {"vector_ops", plan.vectorOps},
          {"weight_bytes", plan.weightBytes},
          {"kv_cache_bytes", plan.kvBytes},
          {"achieved_hbm_bandwidth_bytes_per_s", plan.bytesMoved / step},
          {"achieved_flops_per_s", plan.flops / step},
          {"roofline",
           {{"memory_bound_s", memoryBound},
            {"compute_bound_s", computeBound},
            {"bound_s", bound},
            {"bound_by", memoryBound >= computeBound ? "memory" : "compute"},
            {"fraction_of_bound", bound / step}}},
          {"tiles", plan.ops.size()},
          {"per_op", perOp}};
}

void printSummary(std::ostream& out, const Inputs& inputs, const nlohmann::ordered_json& results,
                  const std::string& reportPath) {
  using config::formatQuantity;
  namespace dim = config::dim;
  const auto& roofline = results["roofline"];
  out << fmt::format("scoville run: {} on {} — {} (batch {}, context {})\n", inputs.model.name, inputs.platform.name,
                     inputs.scenario.name, inputs.scenario.batch, inputs.scenario.contextLength);
  out << fmt::format("  decode step time     {}  (roofline bound {}, {}-bound; {:.1f}% of bound)\n",
                     formatQuantity(results["step_time_s"].get<double>(), dim::kTime),
                     formatQuantity(roofline["bound_s"].get<double>(), dim::kTime),
                     roofline["bound_by"].get<std::string>(), 100.0 * roofline["fraction_of_bound"].get<double>());
  out << fmt::format("  tokens/s per user    {:.1f}\n", results["tokens_per_s_per_user"].get<double>());
  out << fmt::format("  HBM bandwidth        {} achieved of {}\n",
                     formatQuantity(results["achieved_hbm_bandwidth_bytes_per_s"].get<double>(), dim::kBandwidth),
                     formatQuantity(inputs.platform.chip.hbm.bandwidthBytesPerS, dim::kBandwidth));
  out << fmt::format(
      "  compute              {} achieved of {} peak\n",
      formatQuantity(results["achieved_flops_per_s"].get<double>(), dim::kFlopRate),
      formatQuantity(inputs.platform.chip.tensorCore.peakFlops(inputs.model.computePrecision), dim::kFlopRate));
  out << "report: " << reportPath << "\n";
}

}  // namespace

int runCommand(const Args& args, std::ostream& out) {
  RunOptions options;
  po::options_description description("scoville run: simulate a model and scenario on a platform");
  description.add_options()("help,h", "show this help");
  addInputOptions(description, options.inputs, true);
  description.add_options()("out,o", po::value(&options.out)->default_value(options.out),
                            "output directory; report.json is written there")(
      "seed", po::value(&options.seed)->default_value(options.seed), "random seed (recorded in the report)")(
      "timing", po::value(&options.timing)->default_value(options.timing),
      "timing mode: lt (loosely timed, b_transport + quantum keeper: fast) or at (approximately timed, "
      "4-phase nb_transport: queues, scheduling policies, backpressure)")(
      "quiet,q", po::bool_switch(&options.quiet), "print only errors")("verbose,v", po::bool_switch(&options.verbose),
                                                                       "print the resolved inputs too");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(description).run(), vm);
  if (vm.count("help")) {
    out << "usage: scoville run [OPTIONS]\n" << description << "\n";
    return kExitOk;
  }
  po::notify(vm);
  if (options.quiet && options.verbose) throw po::error("--quiet and --verbose exclude each other");

  tlm::TimingMode mode = tlm::TimingMode::kLooselyTimed;
  if (options.timing == "at") {
    mode = tlm::TimingMode::kApproximatelyTimed;
  } else if (options.timing != "lt") {
    throw po::error("--timing must be lt or at, not '" + options.timing + "'");
  }

  // Everything that can be wrong with the input is checked before elaboration.
  const Inputs inputs = loadInputs(options.inputs, true);
  workload::DecodePlan plan = workload::planDecodeStep(inputs.model, inputs.scenario, inputs.platform.chip);
  prepareOutputDirectory(options.out);
  if (options.verbose) {
    out << fmt::format("platform {} ({}), model {} ({}), scenario {} ({}), {} ops, seed {}\n", inputs.platform.name,
                       options.inputs.platform, inputs.model.name, options.inputs.model, inputs.scenario.name,
                       options.inputs.scenario, plan.ops.size(), options.seed);
  }

  // One elaboration per process: the platform and the driver live for the rest of sc_main.
  platform::Platform platform("platform", inputs.platform);
  workload::DecodeDriver driver("driver", std::move(plan), inputs.platform.chip.sram.stagingBuffers, mode);
  driver.loadPort.socket.bind(platform.chip().socket());
  driver.computePort.socket.bind(platform.chip().socket());
  sc_core::sc_start();

  if (!driver.error().empty()) throw SimulationError(driver.error());
  if (!driver.finished()) throw SimulationError("the decode step did not finish (simulation starved)");

  nlohmann::ordered_json report;
  report["schema_version"] = kReportSchemaVersion;
  report["generator"] = {{"name", "scoville"}, {"version", SCOVILLE_VERSION}};
  report["inputs"] = {{"platform", {{"name", inputs.platform.name}, {"given_as", options.inputs.platform}}},
                      {"model", {{"name", inputs.model.name}, {"given_as", options.inputs.model}}},
                      {"scenario", {{"name", inputs.scenario.name}, {"given_as", options.inputs.scenario}}},
                      {"overrides", inputs.overrides},
                      {"timing", options.timing},
                      {"seed", options.seed}};
  report["platform"] = platform::summarize(inputs.platform);
  report["results"] = decodeResults(driver, inputs.platform.chip, inputs.scenario);
  report["simulated_time_s"] = sc_core::sc_time_stamp().to_seconds();
  report["stats"] = {{platform.chip().stats().name(), platform.chip().stats().toJson()}};
  report["protocol"] = {{"checked_transactions", tlm::ProtocolChecker::checkedTransactions()},
                        {"violations", tlm::ProtocolChecker::violations()}};
  if (tlm::ProtocolChecker::violations() > 0) throw SimulationError("TLM base-protocol violations (see warnings)");

  const std::string reportPath = (std::filesystem::path(options.out) / "report.json").string();
  writeFileAtomically(reportPath, report.dump(2) + "\n");
  if (!options.quiet) printSummary(out, inputs, report["results"], reportPath);
  return kExitOk;
}

}  // namespace scoville::cli
