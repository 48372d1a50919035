#include "cli/ServingReport.h"

#include <fmt/format.h>

#include "tlm/config/Units.h"
#include "workloads/ServingMetrics.h"

namespace scoville::cli {

namespace {

const char* loadName(workload::LoadKind kind) {
  switch (kind) {
    case workload::LoadKind::kClosedLoop: return "closed_loop";
    case workload::LoadKind::kPoisson: return "poisson";
    case workload::LoadKind::kTrace: return "trace";
  }
  return "?";
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

}  // namespace

nlohmann::ordered_json servingResults(const workload::ServingEngine& engine, const platform::PlatformConfig& platform,
                                      const workload::ScenarioConfig& scenario) {
  const workload::ServingMetrics metrics = workload::computeServingMetrics(engine.metricRecords(), engine.window());
  const int chips = static_cast<int>(engine.chipMemory().size());  // every serving chip
  double rated = 0.0;
  for (const auto& m : engine.chipMemory()) rated += platform.chipConfig(m.chip).ratedPowerW;

  nlohmann::ordered_json load = {{"impl", loadName(scenario.load.impl)}};
  if (scenario.load.impl == workload::LoadKind::kClosedLoop) load["concurrency"] = scenario.load.concurrency;
  if (scenario.load.impl == workload::LoadKind::kPoisson) load["rate_per_s"] = scenario.load.ratePerS;
  load["input_tokens"] = scenario.inputTokens;
  load["output_tokens"] = scenario.outputTokens;
  load["random_range_ratio"] = scenario.randomRangeRatio;
  load["turns"] = scenario.multiTurn.turns;
  load["warmup_requests"] = scenario.warmup();
  load["measured_requests"] = scenario.requests;
  load["sent_requests"] = engine.records().size();

  nlohmann::ordered_json replicas = nlohmann::ordered_json::array();
  uint64_t preemptions = 0, recomputes = 0, swapOuts = 0, swapIns = 0, violations = engine.rooflineViolations();
  double swapOutBytes = 0.0, swapInBytes = 0.0, swapS = 0.0;
  double imbalanceExperts = 0.0, imbalanceChips = 0.0;
  uint64_t routedLayers = 0;
  uint64_t chipLayers = engine.chipImbalanceLayers();  // experts across replicas; else per replica
  for (int d = 0; d < engine.replicas(); ++d) {
    const workload::ReplicaStats& s = engine.replicaStats(d);
    preemptions += s.preemptions;
    recomputes += s.recomputes;
    swapOuts += s.swapOuts;
    swapIns += s.swapIns;
    swapOutBytes += s.swapOutBytes;
    swapInBytes += s.swapInBytes;
    swapS += s.swapS;
    imbalanceExperts += s.expertImbalanceSum;
    imbalanceChips += s.chipImbalanceSum;
    routedLayers += s.routedLayers;
    if (engine.expertGroup() == nullptr) chipLayers += s.routedLayers;
    const double steps = static_cast<double>(s.steps);
    nlohmann::ordered_json perOp = nlohmann::ordered_json::object();
    for (const auto& [name, o] : s.perOp) {
      perOp[name] = {{"tiles", o.tiles},
                     {"bytes", o.bytes},
                     {"flops", o.flops},
                     {"vector_ops", o.vectorOps},
                     {"compute_time_s", o.computeS},
                     {"stall_time_s", o.stallS},
                     {"collective_time_s", o.collectiveS}};
    }
    replicas.push_back(
        {{"replica", d},
         {"role", engine.role(d) == workload::ServingEngine::Role::kPrefill  ? "prefill"
                  : engine.role(d) == workload::ServingEngine::Role::kDecode ? "decode"
                                                                             : "both"},
         {"steps", s.steps},
         {"prefill_only_steps", s.prefillSteps},
         {"decode_only_steps", s.decodeSteps},
         {"mixed_steps", s.mixedSteps},
         {"idle_steps", s.idleSteps},
         {"mean_sequences_per_step", ratio(static_cast<double>(s.sequences), steps)},
         {"mean_tokens_per_step", ratio(static_cast<double>(s.prefillTokens + s.decodeTokens), steps)},
         {"prefill_tokens", s.prefillTokens},
         {"decode_tokens", s.decodeTokens},
         {"busy_time_s", s.busyS},
         {"prefill_only_time_s", s.prefillOnlyS},
         {"decode_only_time_s", s.decodeOnlyS},
         {"mixed_time_s", s.mixedS},
         {"idle_time_s", s.idleS},
         {"mean_step_time_s", ratio(s.busyS, steps)},
         {"mean_decode_step_time_s", ratio(s.decodeOnlyS, static_cast<double>(s.decodeSteps))},
         {"bytes_moved", s.bytes},
         {"flops", s.flops},
         {"collective_bytes", s.collectiveBytes},
         {"achieved_hbm_bandwidth_bytes_per_s", ratio(s.bytes, s.busyS * engine.tp() * engine.pp())},
         {"kv_cache",
          {{"capacity_blocks", s.kvBlocks},
           {"peak_blocks", s.peakKvBlocks},
           {"peak_fraction", ratio(static_cast<double>(s.peakKvBlocks), static_cast<double>(s.kvBlocks))},
           {"preemptions", s.preemptions},
           {"recompute_preemptions", s.recomputes},
           {"host_capacity_blocks", s.hostKvBlocks},
           {"swap_outs", s.swapOuts},
           {"swap_ins", s.swapIns},
           {"swapped_out_bytes", s.swapOutBytes},
           {"swapped_in_bytes", s.swapInBytes},
           {"swap_time_s", s.swapS}}},
         {"per_op", perOp}});
  }
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const auto& m : engine.chipMemory()) {
    memory.push_back({{"chip", platform::PlatformConfig::chipName(m.chip)},
                      {"weight_bytes", m.weightBytes},
                      {"activation_memory_bytes", m.activationBytes},
                      {"kv_cache_capacity_bytes", m.kvCapacityBytes},
                      {"hbm_capacity_bytes", m.hbmBytes}});
  }
  return {{"kind", "serving"},
          {"load", load},
          {"placement",
           {{"tp", platform.placement.tp},
            {"pp", platform.placement.pp},
            {"dp", platform.placement.dp},
            {"ep", platform.placement.ep},
            {"chips", chips},
            {"rated_power_w", rated}}},
          {"window", {{"start_s", metrics.window.start}, {"end_s", metrics.window.end}}},
          {"metrics", workload::servingMetricsJson(metrics, chips, rated)},
          {"mirrored_chips", engine.mirroredChips()},
          {"kv_transfers",
           {{"count", engine.kvTransfers()},
            {"bytes", engine.kvTransferBytes()},
            {"mean_time_s", ratio(engine.kvTransferTimeS(), static_cast<double>(engine.kvTransfers()))}}},
          {"kv_cache_capacity_tokens_per_replica", engine.kvCapacityTokens()},
          {"preemptions", preemptions},
          {"recompute_preemptions", recomputes},
          {"kv_swap",
           {{"swap_outs", swapOuts},
            {"swap_ins", swapIns},
            {"swapped_out_bytes", swapOutBytes},
            {"swapped_in_bytes", swapInBytes},
            {"swapped_bytes", swapOutBytes + swapInBytes},
            {"time_s", swapS}}},
          {"moe_routing",
           {{"routed_layer_steps", routedLayers},
            {"mean_max_over_mean_tokens_per_expert", ratio(imbalanceExperts, static_cast<double>(routedLayers))},
            {"mean_max_over_mean_tokens_per_chip", ratio(imbalanceChips, static_cast<double>(chipLayers))}}},
          {"roofline_check",
           {{"violations", violations}, {"tightest_step_time_over_bound", engine.tightestRooflineRatio()}}},
          {"replicas", replicas},
          {"chips", memory}};
}

void printServingSummary(std::ostream& out, const std::string& model, const platform::PlatformConfig& platform,
                         const workload::ScenarioConfig& scenario, const nlohmann::ordered_json& results,
                         const std::string& reportPath) {
  const auto& m = results["metrics"];
  const auto& ix = m["inferencex"];
  const auto& load = results["load"];
  const platform::PlacementConfig& p = platform.placement;
  out << fmt::format("scoville run: {} on {} — {} ({}{}, {} in / {} out; tp {}{} x dp {}{}{})\n", model, platform.name,
                     scenario.name, load["impl"].get<std::string>(),
                     scenario.load.impl == workload::LoadKind::kClosedLoop
                         ? fmt::format(" concurrency {}", scenario.load.concurrency)
                         : "",
                     scenario.inputTokens, scenario.outputTokens, p.tp, p.pp > 1 ? fmt::format(" x pp {}", p.pp) : "",
                     p.dp, p.ep > 1 ? fmt::format(", ep {}", p.ep) : "",
                     p.disaggregation ? fmt::format(", {} prefill chips", p.disaggregation->prefillChips.size()) : "");
  const auto swapOuts = results["kv_swap"]["swap_outs"].get<uint64_t>();
  out << fmt::format("  requests             {} measured after {} warm-up ({} sent), {} preemptions{}\n",
                     load["measured_requests"].get<int>(), load["warmup_requests"].get<int>(),
                     load["sent_requests"].get<std::size_t>(), results["preemptions"].get<uint64_t>(),
                     swapOuts > 0 ? fmt::format(" ({} swapped out to host)", swapOuts) : "");
  out << fmt::format("  TTFT                 median {:.1f} ms, p99 {:.1f} ms\n", 1e3 * ix["median_ttft"].get<double>(),
                     1e3 * ix["p99_ttft"].get<double>());
  out << fmt::format("  TPOT                 median {:.3f} ms, p99 {:.3f} ms  ({:.1f} tok/s/user)\n",
                     1e3 * ix["median_tpot"].get<double>(), 1e3 * ix["p99_tpot"].get<double>(),
                     ix["median_intvty"].get<double>());
  out << fmt::format("  end-to-end           median {:.3f} s\n", ix["median_e2el"].get<double>());
  out << fmt::format("  throughput per chip  {:.0f} tok/s total, {:.0f} tok/s output  ({:.0f} tok/s per kW)\n",
                     ix["tput_per_gpu"].get<double>(), ix["output_tput_per_gpu"].get<double>(),
                     ix["tput_per_kw"].get<double>());
  out << "report: " << reportPath << "\n";
}

}  // namespace scoville::cli
