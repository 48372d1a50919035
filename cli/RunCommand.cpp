#include <fmt/format.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <systemc>

#include "cli/BuildId.h"
#include "cli/Commands.h"
#include "cli/CostModel.h"
#include "cli/Inputs.h"
#include "cli/MemoryEstimate.h"
#include "cli/ReportWriter.h"
#include "cli/RunCsv.h"
#include "cli/RunLimits.h"
#include "cli/RunRequest.h"
#include "cli/ServingReport.h"
#include "cli/Waveforms.h"
#include "config/ConfigError.h"
#include "config/Units.h"
#include "hw/rtl/MacArrayModel.h"
#include "platforms/Platform.h"
#include "platforms/PlatformSummary.h"
#include "runtime/PlatformDecode.h"
#include "runtime/ServingEngine.h"
#include "tlm/ProtocolChecker.h"
#include "tlm/Time.h"
#include "tlm/TimingMode.h"
#include "tlm/TransactionCount.h"
#include "trace/ChromeTrace.h"
#include "trace/UnitActivity.h"
#include "workloads/Roofline.h"

namespace po = boost::program_options;

namespace scoville::cli {

namespace {

/// At most this many samples per waveform (a bound on the VCD's size and on memory).
constexpr double kMaxVcdSamples = 2e6;

/// Creates the directory a file option's FILE goes into, and proves it writable.
void prepareDirectoryOf(const std::string& option, const std::string& file) {
  const std::string parent = std::filesystem::path(file).parent_path().string();
  if (!parent.empty()) prepareOutputDirectory(parent, option + " " + file);
}

/// The trace window from --trace-start and --trace-duration.
trace::ChromeTraceOptions traceOptions(const RunRequest& options) {
  trace::ChromeTraceOptions trace;
  trace.startS = timeOption("--trace-start", options.traceStart);
  const double duration = timeOption("--trace-duration", options.traceDuration);
  if (trace.startS < 0 || !(duration > 0)) {
    throw config::ConfigError(
        config::ErrorKind::kOutOfRange,
        fmt::format("--trace-start {} --trace-duration {}", options.traceStart, options.traceDuration),
        "the trace window needs a start >= 0 and a positive duration");
  }
  trace.endS = trace.startS + duration;
  return trace;
}

/// Adds to each chip's `power.chips[].dvfs` the time its core clock below nominal added to its
/// tensor-core and vector-unit transactions (a mirror: its leader's).
void addThrottledTime(nlohmann::ordered_json& power, const nlohmann::ordered_json& stats) {
  if (!power.contains("chips")) return;
  const nlohmann::ordered_json& chips = stats["platform"]["groups"];
  for (nlohmann::ordered_json& chip : power["chips"]) {
    const std::string name =
        chip["mirror_of"].is_null() ? chip["chip"].get<std::string>() : chip["mirror_of"].get<std::string>();
    double throttled = 0.0;
    for (const char* unit : {"tensor_core", "vector_unit"}) {
      throttled += chips[name]["groups"][unit]["stats"]["throttled_time"]["value"].get<double>();
    }
    chip["dvfs"]["throttled_compute_s"] = throttled;
  }
}

/// Whether any chip's tensor core runs RTL (impl rtl or lockstep).
bool usesRtl(const platform::PlatformConfig& platform) {
  for (int c = 0; c < platform.chipCount(); ++c) {
    if (platform.chipConfig(c).tensorCore.impl != hw::TensorCoreImpl::kTlm) return true;
  }
  return false;
}

/// report.json "cosim": per chip whose tensor core runs RTL, what ran and how the RTL's cycles
/// compared with the TLM model's (lock-step). Chips that mirror another (serving) run no RTL of
/// their own and are left out.
nlohmann::ordered_json cosimSummary(const platform::PlatformConfig& config, const nlohmann::ordered_json& stats,
                                    const std::vector<int>& mirrorOf) {
  nlohmann::ordered_json chips = nlohmann::ordered_json::array();
  const nlohmann::ordered_json& groups = stats.begin().value()["groups"];
  for (int c = 0; c < config.chipCount(); ++c) {
    const hw::TensorCoreConfig& tc = config.chipConfig(c).tensorCore;
    if (tc.impl == hw::TensorCoreImpl::kTlm) continue;
    if (static_cast<std::size_t>(c) < mirrorOf.size() && mirrorOf[static_cast<std::size_t>(c)] >= 0) continue;
    const std::string name = platform::PlatformConfig::chipName(c);
    const nlohmann::ordered_json& core = groups.at(name).at("groups").at("tensor_core").at("stats");
    const auto stat = [&core](const char* key) { return core.at(key).at("value").get<double>(); };
    nlohmann::ordered_json entry = {
        {"chip", name},           {"impl", tc.impl == hw::TensorCoreImpl::kRtl ? "rtl" : "lockstep"},
        {"model", tc.rtl.model},  {"arrays", tc.count},
        {"gemms", stat("gemms")}, {"rtl_cycles", stat("busy_cycles")}};
    if (tc.impl == hw::TensorCoreImpl::kLockstep) {
      entry["tlm_cycles"] = stat("tlm_cycles");
      entry["rtl_tlm_cycle_ratio"] = stat("rtl_tlm_cycle_ratio");
      entry["mean_cycle_error"] = stat("mean_cycle_error");
      entry["max_cycle_error"] = stat("max_cycle_error");
      entry["cycle_tolerance"] = tc.rtl.cycleTolerance;
      entry["mismatched_values"] = stat("mismatched_values");
    }
    chips.push_back(std::move(entry));
  }
  return chips;
}

/// Lower bounds of one chip's part of the step: its bytes at HBM peak, its FLOPs at tensor-core
/// peak, and its collective bytes at the chip's fabric injection rate.
struct ChipBounds {
  double memory = 0.0;
  double compute = 0.0;
  double communication = 0.0;
  double total = 0.0;  ///< summed over pipeline stages (replica bounds only)
  double bound() const { return std::max({memory, compute, communication}); }
};

/// `prefetchable`: bytes the chip may load before its stage can start (a later pipeline stage
/// fills its staging buffers while the earlier stages run); they are left out of the memory bound.
ChipBounds boundsOf(const workload::StepPlan& plan, const hw::ChipConfig& chip, double bytesSent,
                    double prefetchable = 0.0) {
  ChipBounds b;
  b.memory = std::max(0.0, plan.bytesMoved - prefetchable) / chip.hbm.bandwidthBytesPerS;
  b.compute = plan.computeBoundS(chip);
  const double injection = chip.fabricPorts.bandwidthBytesPerS();
  b.communication = bytesSent > 0 && injection > 0 ? bytesSent / injection : 0.0;
  return b;
}

nlohmann::ordered_json decodeResults(const runtime::PlatformDecodeRunner& runner,
                                     const platform::PlatformConfig& platform,
                                     const workload::ScenarioConfig& scenario) {
  const double step = runner.stepTime().to_seconds();
  const std::size_t slowest = runner.slowest();
  const runtime::StepDriver& driver = runner.driver(slowest);
  const workload::StepPlan& plan = driver.plan();
  const int tp = runner.plan().tp;

  // Bytes each member of a group sent: every algorithm used here is symmetric across members.
  const auto sentPerMember = [&](int replica, int stage) {
    const runtime::CollectiveGroup* group = runner.groupOf(replica, stage);
    return group == nullptr ? 0.0 : group->stats().value("bytes") / tp;
  };

  // A step's lower bound. Every chip's own bound holds. With pipeline stages, the stages of a
  // replica also run one after another: a stage starts computing only when the previous one has
  // finished, having loaded at most its staging buffers ahead, so the sum over stages of each
  // stage's critical-path bound (its slowest chip's compute, communication, or memory traffic
  // beyond the prefetchable bytes) holds too. The report's bound is the larger of the two; its
  // memory/compute/communication terms are those of whichever gave it (summed over stages).
  std::map<std::pair<int, int>, ChipBounds> stageBound;  // (replica, stage) -> critical-path bounds
  ChipBounds worst;
  ChipBounds worstChip;
  double bytesMoved = 0, flops = 0, vectorOps = 0, weights = 0, kv = 0, collectiveBytes = 0;
  nlohmann::ordered_json chips = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < runner.drivers(); ++i) {
    const runtime::ChipAssignment& member = runner.plan().members[i];
    const workload::StepPlan& p = runner.driver(i).plan();
    const double sent = sentPerMember(member.replica, member.stage);
    const hw::ChipConfig& chipConfig = platform.chipConfig(member.chip);
    const ChipBounds b = boundsOf(p, chipConfig, sent);
    if (b.bound() > worstChip.bound()) worstChip = b;
    const ChipBounds critical = boundsOf(p, chipConfig, sent, member.stage > 0 ? chipConfig.sram.capacityBytes : 0.0);
    ChipBounds& stage = stageBound[{member.replica, member.stage}];
    if (critical.bound() > stage.bound()) stage = critical;
    bytesMoved += p.bytesMoved;
    flops += p.flops;
    vectorOps += p.vectorOps;
    weights += p.weightBytes;
    kv += p.kvBytes;
    collectiveBytes += sent;
    chips.push_back({{"chip", platform::PlatformConfig::chipName(member.chip)},
                     {"replica", member.replica},
                     {"tp_rank", member.rank},
                     {"stage", member.stage},
                     {"batch", member.batch},
                     {"step_time_s", runner.driver(i).stepTime().to_seconds()},
                     {"bytes_moved", p.bytesMoved},
                     {"flops", p.flops},
                     {"weight_bytes", p.weightBytes},
                     {"kv_cache_bytes", p.kvBytes},
                     {"activation_memory_bytes", platform.placement.activationBytes},
                     {"hbm_capacity_bytes", platform.chipConfig(member.chip).hbm.capacityBytes},
                     {"hbm_used_fraction", (p.weightBytes + p.kvBytes + platform.placement.activationBytes) /
                                               platform.chipConfig(member.chip).hbm.capacityBytes},
                     {"collective_bytes_sent", sent},
                     {"bound_s", b.bound()}});
  }

  // Where the slowest chip's compute stream spent its time, per op class, in plan order.
  nlohmann::ordered_json perOp = nlohmann::ordered_json::object();
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const workload::PlannedOp& op = plan.ops[i];
    const auto& t = driver.timings()[i];
    auto& entry = perOp[op.name];
    if (seen[op.name]++ == 0)
      entry = {{"tiles", 0},
               {"bytes", 0.0},
               {"flops", 0.0},
               {"vector_ops", 0.0},
               {"compute_time_s", 0.0},
               {"stall_time_s", 0.0},
               {"collectives", 0},
               {"collective_time_s", 0.0}};
    entry["tiles"] = entry["tiles"].get<int>() + 1;
    entry["bytes"] = entry["bytes"].get<double>() + static_cast<double>(op.bytes());
    entry["flops"] = entry["flops"].get<double>() + op.flops();
    entry["vector_ops"] = entry["vector_ops"].get<double>() + op.vectorOps;
    entry["compute_time_s"] = entry["compute_time_s"].get<double>() + (t.computeEnd - t.computeStart).to_seconds();
    // Time the compute stream sat waiting for this op's operands.
    const sc_core::sc_time previousEnd = i > 0 ? driver.timings()[i - 1].collectiveEnd : sc_core::SC_ZERO_TIME;
    entry["stall_time_s"] = entry["stall_time_s"].get<double>() + (t.computeStart - previousEnd).to_seconds();
    if (op.after.kind != workload::PlannedCollective::Kind::kNone) {
      entry["collectives"] = entry["collectives"].get<int>() + 1;
    }
    // Communication after the op: its collective and, before the last stage, the hand-off.
    entry["collective_time_s"] =
        entry["collective_time_s"].get<double>() + (t.collectiveEnd - t.computeEnd).to_seconds();
  }

  std::map<int, ChipBounds> replicaBound;
  for (const auto& [key, b] : stageBound) {
    ChipBounds& r = replicaBound[key.first];
    r.memory += b.memory;
    r.compute += b.compute;
    r.communication += b.communication;
    r.total += b.bound();  // per stage only its binding resource is on the critical path
  }
  for (const auto& [replica, b] : replicaBound) {
    if (b.total > worst.total) worst = b;
  }
  worstChip.total = worstChip.bound();
  if (worstChip.total >= worst.total) worst = worstChip;
  const double bound = worst.total;
  // Physics first: no step may be faster than its bytes over the bandwidth, its FLOPs over the
  // peak and its messages over the links. One that is, is a bug in a module, never a result.
  if (workload::beatsRoofline(step, bound)) {
    throw std::logic_error(
        fmt::format("the decode step took {} s, less than its roofline bound of {} s "
                    "(memory {} s, compute {} s, communication {} s)",
                    step, bound, worst.memory, worst.compute, worst.communication));
  }
  const char* boundBy = worst.memory >= std::max(worst.compute, worst.communication) ? "memory"
                        : worst.compute >= worst.communication                       ? "compute"
                                                                                     : "communication";
  double hbmPeak = 0.0, flopsPeak = 0.0;
  for (const runtime::ChipAssignment& member : runner.plan().members) {
    hbmPeak += platform.chipConfig(member.chip).hbm.bandwidthBytesPerS;
    flopsPeak += platform.chipConfig(member.chip).tensorCore.peakFlops(plan.computePrecision);
  }
  return {{"kind", "decode_step"},
          {"batch", scenario.batch},
          {"context_length", scenario.contextLength},
          {"placement", {{"tp", tp}, {"pp", runner.plan().pp}, {"dp", runner.plan().dp}, {"chips", runner.drivers()}}},
          {"step_time_s", step},
          {"inter_token_latency_s", step},
          {"tokens_per_s_per_user", 1.0 / step},
          {"output_tokens_per_s", scenario.batch / step},
          {"output_tokens_per_s_per_chip", scenario.batch / step / static_cast<double>(runner.drivers())},
          {"bytes_moved", bytesMoved},
          {"flops", flops},
          {"vector_ops", vectorOps},
          {"weight_bytes", weights},
          {"kv_cache_bytes", kv},
          {"collective_bytes_sent", collectiveBytes},
          {"achieved_hbm_bandwidth_bytes_per_s", bytesMoved / step},
          {"peak_hbm_bandwidth_bytes_per_s", hbmPeak},
          {"achieved_flops_per_s", flops / step},
          {"peak_flops_per_s", flopsPeak},
          {"roofline",
           {{"memory_bound_s", worst.memory},
            {"compute_bound_s", worst.compute},
            {"communication_bound_s", worst.communication},
            {"bound_s", bound},
            {"bound_by", boundBy},
            {"fraction_of_bound", bound / step}}},
          {"tiles", plan.ops.size()},
          {"slowest_chip", platform::PlatformConfig::chipName(runner.plan().members[slowest].chip)},
          {"per_op", perOp},
          {"chips", chips}};
}

void printSummary(std::ostream& out, const Inputs& inputs, const nlohmann::ordered_json& results,
                  const std::string& reportPath) {
  using config::formatQuantity;
  namespace dim = config::dim;
  const auto& roofline = results["roofline"];
  const auto& placement = results["placement"];
  const int busy = placement["chips"].get<int>();
  const int chips = inputs.platform.chipCount();
  out << fmt::format("scoville run: {} on {} — {} (batch {}, context {}; tp {} x dp {}, {})\n", inputs.model.name,
                     inputs.platform.name, inputs.scenario.name, inputs.scenario.batch, inputs.scenario.contextLength,
                     placement["pp"].get<int>() > 1
                         ? fmt::format("{} x pp {}", placement["tp"].get<int>(), placement["pp"].get<int>())
                         : std::to_string(placement["tp"].get<int>()),
                     placement["dp"].get<int>(),
                     busy == chips ? fmt::format("{} chip{}", chips, chips > 1 ? "s" : "")
                                   : fmt::format("{} of {} chips busy", busy, chips));
  out << fmt::format("  decode step time     {}  (roofline bound {}, {}-bound; {:.1f}% of bound)\n",
                     formatQuantity(results["step_time_s"].get<double>(), dim::kTime),
                     formatQuantity(roofline["bound_s"].get<double>(), dim::kTime),
                     roofline["bound_by"].get<std::string>(), 100.0 * roofline["fraction_of_bound"].get<double>());
  out << fmt::format("  tokens/s per user    {:.1f}\n", results["tokens_per_s_per_user"].get<double>());
  out << fmt::format("  HBM bandwidth        {} achieved of {}\n",
                     formatQuantity(results["achieved_hbm_bandwidth_bytes_per_s"].get<double>(), dim::kBandwidth),
                     formatQuantity(results["peak_hbm_bandwidth_bytes_per_s"].get<double>(), dim::kBandwidth));
  out << fmt::format("  compute              {} achieved of {} peak\n",
                     formatQuantity(results["achieved_flops_per_s"].get<double>(), dim::kFlopRate),
                     formatQuantity(results["peak_flops_per_s"].get<double>(), dim::kFlopRate));
  out << "report: " << reportPath << "\n";
}

/// Elaborates the platform and the workload, simulates, and writes the report (the part of the
/// run command after its inputs and outputs are checked).
int simulateAndReport(const RunRequest& options, const Inputs& inputs, double simulatedTimeLimit, tlm::TimingMode mode,
                      std::ostream& out) {
  std::optional<trace::ChromeTrace> trace;
  std::optional<trace::UnitActivity> waveforms;
  if (!options.vcd.empty()) {
    const trace::ChromeTraceOptions window = traceOptions(options);
    const double interval = timeOption("--vcd-interval", options.vcdInterval);
    if (!(interval > 0) || (window.endS - window.startS) / interval > kMaxVcdSamples) {
      throw config::ConfigError(config::ErrorKind::kOutOfRange, "--vcd-interval " + options.vcdInterval,
                                fmt::format("the window of {} s needs a positive interval giving at most {} samples",
                                            window.endS - window.startS, kMaxVcdSamples));
    }
    std::vector<double> burstBytes;
    for (int c = 0; c < inputs.platform.chipCount(); ++c) {
      burstBytes.push_back(inputs.platform.chipConfig(c).hbm.burstBytes);
    }
    waveforms.emplace(window.startS, window.endS, interval, std::move(burstBytes));
    prepareDirectoryOf("--vcd", options.vcd);
  }
  if (!options.trace.empty()) {
    trace.emplace(traceOptions(options));
    prepareDirectoryOf("--trace", options.trace);
  }
  const bool cosim = usesRtl(inputs.platform);
  if (!options.rtlVcd.empty()) {
    if (!cosim) {
      throw config::ConfigError(config::ErrorKind::kInvalidConfig, "--rtl-vcd " + options.rtlVcd,
                                "no chip of platform '" + inputs.platform.name +
                                    "' has tensor_core.impl rtl or lockstep, so there are no RTL waveforms");
    }
    const trace::ChromeTraceOptions window = traceOptions(options);
    prepareDirectoryOf("--rtl-vcd", options.rtlVcd);
    hw::rtl::enableWaveforms(options.rtlVcd, window.startS, window.endS);
  }
  nlohmann::ordered_json report;
  report["schema_version"] = kReportSchemaVersion;
  report["generator"] = {{"name", "scoville"}, {"version", SCOVILLE_VERSION}, {"build", buildId()}};
  report["inputs"] = {{"platform", {{"name", inputs.platform.name}, {"given_as", options.inputs.platform}}},
                      {"model", {{"name", inputs.model.name}, {"given_as", options.inputs.model}}},
                      {"scenario", {{"name", inputs.scenario.name}, {"given_as", options.inputs.scenario}}},
                      {"overrides", inputs.overrides},
                      {"timing", options.timing},
                      {"seed", options.seed},
                      {"digest", inputs.digest}};
  if (const auto& stack = inputs.scenario.stack) {
    report["inputs"]["software_stack"] = stack->toJson(inputs.scenario.softwareStack);
  } else {
    report["inputs"]["software_stack"] = nullptr;
  }
  report["platform"] = platform::summarize(inputs.platform);
  const bool serving = inputs.scenario.kind == workload::ScenarioKind::kServing;

  // One elaboration per process: the platform and the workload live for the rest of sc_main.
  platform::Platform platform("platform", inputs.platform);
  platform.mirrorAlikeLanes(!options.exactAllChips);
  if (trace) platform.subscribeActivity(*trace);
  if (waveforms) platform.subscribeActivity(*waveforms);
  std::vector<int> mirrorOf;  // serving: the chip each chip mirrors (-1: none)
  // After the simulation, before the workload's own verdict: an RTL block's failure explains a
  // GEMM's error response better than the workload's "gemm failed".
  const auto checkCosim = [&platform, cosim] {
    hw::rtl::closeWaveforms();
    if (!cosim) return;
    std::string failures;
    for (int c = 0; c < platform.chipCount(); ++c) {
      if (const std::string failure = platform.chip(c).cosimFailure(); !failure.empty()) {
        failures += fmt::format("\n  chip {}: {}", c, failure);
      }
    }
    if (!failures.empty()) throw SimulationError("RTL co-simulation failed:" + failures);
  };
  const SamplingRequest sampling = samplingRequest(options, trace || waveforms, cosim);
  std::vector<workload::RequestRecord> records;  // serving: every request, for the waveforms
  nlohmann::ordered_json stats = {{platform.stats().name(), platform.stats().toJson()}};
  std::optional<power::PowerMonitor::ServingWindow> window;  // a serving run's measurement window
  std::string requests;                                      // a serving run's requests.csv
  if (serving) {
    runtime::ServingEngine engine("workload", platform, inputs.model, inputs.scenario, options.seed, mode,
                                  inputs.scenarioFiles, !options.exactAllChips,
                                  !options.exact && !options.exactAllChips, sampling.period);
    startRunOutput(options.out);
    if (options.verbose) {
      out << fmt::format("platform {} ({}), model {} ({}), scenario {} ({}), {} replicas of tp {}, seed {}\n",
                         inputs.platform.name, options.inputs.platform, inputs.model.name, options.inputs.model,
                         inputs.scenario.name, options.inputs.scenario, engine.replicas(), engine.tp(), options.seed);
    }
    mirrorOf = engine.mirrorOfChips();
    platform.power().setMirrors(mirrorOf);
    platform.power().setSwitchWeights(engine.switchWeights());
    simulate(simulatedTimeLimit, options.maxSimTime);
    platform.settlePower();
    checkCosim();
    if (const std::string error = engine.error(); !error.empty()) throw SimulationError(error);
    if (!engine.completed()) throw SimulationError("the serving run did not finish (simulation starved)");
    report["results"] = servingResults(engine, inputs.platform, inputs.scenario, sampling.off);
    report["results"]["serving_policy"] = servingPolicyResults(engine, inputs.scenario);
    report["results"]["phases"] = phaseResults(engine, platform.power(), sc_core::sc_time_stamp().to_seconds());
    requests = requestsCsv(engine.records());
    if (waveforms) records = engine.records();
    if (trace) {
      for (const workload::RequestRecord& r : engine.records()) {
        trace->addRequest(r.id, r.arrival, r.firstToken, r.finish, r.tokenTimes.size() == r.outputTokens);
      }
    }
    const nlohmann::ordered_json& metrics = report["results"]["metrics"];
    window = power::PowerMonitor::ServingWindow{
        metrics["window_s"]["start"].get<double>(), metrics["window_s"]["end"].get<double>(),
        metrics["tokens_in_window"]["input"].get<double>(), metrics["tokens_in_window"]["output"].get<double>()};
    stats = {{platform.stats().name(), platform.stats().toJson()}};
    for (int d = 0; d < engine.replicas(); ++d) {
      for (const runtime::CollectiveGroup* group : engine.groups(d))
        stats[group->stats().name()] = group->stats().toJson();
      for (const runtime::PipelineLink* link : engine.stageLinks(d))
        stats[link->stats().name()] = link->stats().toJson();
    }
    if (const runtime::CollectiveGroup* group = engine.expertGroup()) {
      stats[group->stats().name()] = group->stats().toJson();
    }
    if (inputs.platform.placement.kvCache.preemption == hw::KvPreemption::kSwap || engine.kvMode().hostTier) {
      stats[platform.hostStats().name()] = platform.hostStats().toJson();  // the swap or offload traffic's links
    }
  } else {
    runtime::PlatformDecodePlan plan = runtime::planPlatformDecodeStep(inputs.platform, inputs.model, inputs.scenario,
                                                                       options.seed, inputs.scenarioFiles.routingTrace);
    startRunOutput(options.out);
    if (options.verbose) {
      std::size_t ops = 0;
      for (const workload::StepPlan& p : plan.plans) ops += p.ops.size();
      out << fmt::format("platform {} ({}), model {} ({}), scenario {} ({}), {} chips, {} ops, seed {}\n",
                         inputs.platform.name, options.inputs.platform, inputs.model.name, options.inputs.model,
                         inputs.scenario.name, options.inputs.scenario, plan.members.size(), ops, options.seed);
    }
    runtime::PlatformDecodeRunner runner("workload", platform, std::move(plan), mode,
                                         inputs.scenario.stack ? &*inputs.scenario.stack : nullptr);
    simulate(simulatedTimeLimit, options.maxSimTime);
    platform.settlePower();
    checkCosim();
    if (const std::string error = runner.error(); !error.empty()) throw SimulationError(error);
    if (!runner.finished()) throw SimulationError("the decode step did not finish (simulation starved)");
    report["results"] = decodeResults(runner, inputs.platform, inputs.scenario);
    stats = {{platform.stats().name(), platform.stats().toJson()}};
    for (const auto& group : runner.groups()) stats[group->stats().name()] = group->stats().toJson();
    for (const auto& link : runner.pipelineLinks()) stats[link->stats().name()] = link->stats().toJson();
  }
  if (cosim) report["cosim"] = cosimSummary(inputs.platform, stats, mirrorOf);
  report["simulated_time_s"] = sc_core::sc_time_stamp().to_seconds();
  report["power"] = platform.power().report(sc_core::sc_time_stamp().to_seconds(), window);
  addThrottledTime(report["power"], stats);
  report["stats"] = stats;
  report["protocol"] = {{"checked_transactions", tlm::ProtocolChecker::checkedTransactions()},
                        {"violations", tlm::ProtocolChecker::violations()}};
  report["kernel"] = {{"unit_transactions", tlm::unitTransactions()},
                      {"delta_cycles", static_cast<uint64_t>(sc_core::sc_delta_count())}};
  if (tlm::ProtocolChecker::violations() > 0) throw SimulationError("TLM base-protocol violations (see warnings)");

  // report.json last: its presence means the run's files are complete.
  const std::filesystem::path outDir(options.out);
  if (serving) writeFileAtomically((outDir / "requests.csv").string(), requests);
  if (trace) {
    const nlohmann::ordered_json& power = report["power"];
    if (power.contains("timeline")) {
      const nlohmann::ordered_json& timeline = power["timeline"];
      const double interval = timeline["interval_s"].get<double>();
      for (std::size_t i = 0; i < timeline["platform_w"].size(); ++i) {
        trace->addCounter("platform power", interval * static_cast<double>(i), timeline["platform_w"][i].get<double>());
      }
    }
    writeFileAtomically(options.trace, trace->json());
  }
  if (waveforms) {
    writeFileAtomically(options.vcd, waveformsVcd(*waveforms, platform, mirrorOf, serving ? &records : nullptr));
  }
  if (const std::string power = powerTimelineCsv(report["power"]); !power.empty()) {
    writeFileAtomically((outDir / "power.csv").string(), power);
  }
  const std::string reportPath = (outDir / "report.json").string();
  writeFileAtomically(reportPath, report.dump(2) + "\n");
  if (!options.quiet) {
    if (serving) {
      printServingSummary(out, inputs.model.name, inputs.platform, inputs.scenario, report["results"], reportPath);
    } else {
      printSummary(out, inputs, report["results"], reportPath);
    }
  }
  return kExitOk;
}

}  // namespace

int runCommand(const Args& args, std::ostream& out) {
  // A point of a sweep dies with its sweep: after a kill -9 of the sweep no orphan keeps writing
  // into the sweep's directory while a restarted sweep redoes the point.
  if (const char* sweep = std::getenv("SCOVILLE_SWEEP_PID"); sweep != nullptr) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (std::to_string(::getppid()) != sweep) throw SimulationError("the sweep that started this run has ended");
  }
  RunRequest options;
  po::options_description description("scoville run: simulate a model and scenario on a platform");
  description.add_options()("help,h", "show this help");
  options.addOptions(description);
  po::variables_map vm = parseOptions(args, description);
  if (vm.count("help")) {
    out << "usage: scoville run [OPTIONS]\n" << description << "\n";
    return kExitOk;
  }
  po::notify(vm);
  options.check();
  const double simulatedTimeLimit = maxSimulatedTime(options.maxSimTime);
  if (!options.timeout.empty()) armTimeout(options.timeout);

  const tlm::TimingMode mode = parseTimingMode(options.timing);

  // Everything that can be wrong with the input is checked before elaboration.
  const Inputs inputs = loadInputs(options.inputs, true);
  if (options.dryRun) {
    const MemoryEstimate memory = estimateRunMemory(inputs);
    const bool traced = !options.trace.empty() || !options.vcd.empty();
    out << describe(estimateRunCost(inputs, options, samplingRequest(options, traced, usesRtl(inputs.platform)).period))
        << fmt::format("  estimated memory: {} from the start, power timelines at most {}\n",
                       config::formatQuantity(memory.bytes(), config::dim::kBytes),
                       config::formatQuantity(memory.timelineBound.bytes, config::dim::kBytes));
    return kExitOk;
  }
  // No output replaces a link or a special file, and no two outputs share a file.
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const char* file : {"report.json", "requests.csv", "power.csv"}) {
    outputs.emplace_back(fmt::format("--out ({})", file), (std::filesystem::path(options.out) / file).string());
  }
  if (!options.trace.empty()) outputs.emplace_back("--trace", options.trace);
  if (!options.vcd.empty()) outputs.emplace_back("--vcd", options.vcd);
  if (!options.rtlVcd.empty()) outputs.emplace_back("--rtl-vcd", options.rtlVcd);
  checkOutputTargets(outputs);
  const MemoryEstimate memory = estimateRunMemory(inputs);
  checkMemory(memory, memoryLimit(options.maxMemory), options.maxMemory);
  if (options.verbose) {
    out << fmt::format("estimated memory: {} from the start ({}), power timelines at most {}\n",
                       config::formatQuantity(memory.bytes(), config::dim::kBytes), fmt::join(memory.partsText(), ", "),
                       config::formatQuantity(memory.timelineBound.bytes, config::dim::kBytes));
  }
  try {
    return simulateAndReport(options, inputs, simulatedTimeLimit, mode, out);
  } catch (const config::ConfigError& e) {
    // The elaboration's checks of the model against the placement (tensor and pipeline splits,
    // memory fit) know no file: name the placement and where it came from.
    if (!e.location().empty()) throw;
    std::string location;
    for (const std::string& set : inputs.overrides) {
      if (set.rfind("platform.placement.", 0) == 0) location += (location.empty() ? "--set " : ", --set ") + set;
    }
    if (location.empty()) location = inputs.scenarioFiles.platform + ": platform.placement";
    throw config::ConfigError(e.kind(), location, e.message());
  }
}

}  // namespace scoville::cli
