#include "cli/ServingReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "config/Units.h"
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

/// How the run was simulated: every replica (`exact`), or one replica per class of equal load
/// (`replica_classes`, with the classes and the distinct requests that stand for the others).
nlohmann::ordered_json simulationJson(const runtime::ServingEngine& engine) {
  const workload::ReplicaClassPlan* plan = engine.replicaClasses();
  if (plan == nullptr) {
    return {{"mode", "exact"},
            {"why", engine.exactReason().empty() ? nlohmann::ordered_json("asked for (--exact)")
                                                 : nlohmann::ordered_json(engine.exactReason())}};
  }
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const workload::ReplicaClass& c : plan->classes) {
    classes.push_back(
        {{"representative", c.representative}, {"mirrored_by", c.followers}, {"users_per_replica", c.users}});
  }
  return {{"mode", "replica_classes"},
          {"simulated_replicas", plan->classes.size()},
          {"classes", classes},
          {"simulated_users", plan->users},
          {"simulated_warmup_requests", plan->warmup},
          {"simulated_measured_requests", plan->measured}};
}

/// How the decode steps were simulated: every one (`exact`, and why), or sampled (runtime/StepSampler.h)
/// with the steps replayed and the bound on their time's error.
nlohmann::ordered_json decodeStepsJson(const runtime::ServingEngine& engine, const std::string& off) {
  const std::optional<runtime::SamplingSummary> s = engine.sampling();
  if (!s) {
    const std::string why = !off.empty() ? off : engine.samplingBlocker();
    return {{"mode", "exact"}, {"why", why.empty() ? "no replica samples" : why}};
  }
  const double steps = static_cast<double>(s->detailedSteps + s->replayedSteps);
  const double replayedTime = ratio(s->replayedS, s->busyS);
  return {
      {"mode", "sampled"},
      {"period", s->period},
      {"detailed_steps", s->detailedSteps},
      {"replayed_steps", s->replayedSteps},
      {"replayed_fraction", ratio(static_cast<double>(s->replayedSteps), steps)},
      {"replayed_time_fraction", replayedTime},
      {"step_time_error",
       {{"predictions", s->predictions}, {"mean", s->meanError()}, {"sd", s->errorSd()}, {"max_abs", s->errorMaxAbs}}},
      {"error_bound_95",
       {{"replayed_time", s->replayedErrorBound()}, {"busy_time", s->replayedErrorBound() * replayedTime}}}};
}

}  // namespace

namespace {

/// Speculative decoding over every replica: vLLM's spec_decode counts, the acceptance they give,
/// and the draft passes' share of the step time (replica 0's first chip, each replica's steps).
nlohmann::ordered_json speculativeJson(const runtime::ServingEngine& engine, const workload::ScenarioConfig& scenario) {
  const workload::SpeculativeConfig& spec = *scenario.speculative;
  workload::SpeculationCounts all;
  all.acceptedPerPosition.assign(static_cast<std::size_t>(spec.draftTokens), 0);
  double draftS = 0.0, busyS = 0.0;
  uint64_t steps = 0;
  for (int d = 0; d < engine.replicas(); ++d) {
    const runtime::ReplicaStats& s = engine.replicaStats(d);
    all.drafts += s.speculation.drafts;
    all.draftTokens += s.speculation.draftTokens;
    all.acceptedTokens += s.speculation.acceptedTokens;
    all.verifySteps += s.speculation.verifySteps;
    for (std::size_t i = 0; i < s.speculation.acceptedPerPosition.size() && i < all.acceptedPerPosition.size(); ++i) {
      all.acceptedPerPosition[i] += s.speculation.acceptedPerPosition[i];
    }
    draftS += s.draftS;
    busyS += s.busyS;
    steps += s.steps;
  }
  const workload::AcceptanceModel model(spec.acceptance, spec.draftTokens, 0, scenario.acceptanceTrace);
  const auto drafts = static_cast<double>(all.drafts);
  return {
      {"method", workload::speculativeMethodName(spec.method)},
      {"draft_tokens", spec.draftTokens},
      {"num_drafts", all.drafts},
      {"num_draft_tokens", all.draftTokens},
      {"num_accepted_tokens", all.acceptedTokens},
      {"num_accepted_tokens_per_pos", all.acceptedPerPosition},
      {"draft_acceptance_rate", ratio(static_cast<double>(all.acceptedTokens), static_cast<double>(all.draftTokens))},
      {"mean_acceptance_length", all.drafts > 0 ? 1.0 + static_cast<double>(all.acceptedTokens) / drafts : 1.0},
      {"configured_mean_acceptance_length", model.meanLength()},
      {"verify_steps", all.verifySteps},
      {"accepted_tokens_per_verify_step",
       ratio(static_cast<double>(all.acceptedTokens + all.drafts), static_cast<double>(all.verifySteps))},
      {"draft_time_s", draftS},
      {"draft_time_share", ratio(draftS, busyS)},
      {"steps", steps}};
}

/// Prefix caching over every replica: the prompt tokens found cached, and the cache's blocks.
nlohmann::ordered_json prefixCacheJson(const runtime::ServingEngine& engine, const workload::ScenarioConfig& scenario) {
  uint64_t prompt = 0, cached = 0, blocks = 0, peak = 0, evicted = 0, offloaded = 0, restored = 0;
  double offloadBytes = 0.0, restoreBytes = 0.0, hostKvBytes = 0.0;
  std::array<uint64_t, hw::kKvTierCount> capacity{}, peakUsed{}, cachedOn{};
  std::array<double, hw::kKvTierCount> meanUsed{};
  for (int d = 0; d < engine.replicas(); ++d) {
    const runtime::ReplicaStats& s = engine.replicaStats(d);
    prompt += s.promptTokensAdmitted;
    cached += s.cachedPromptTokens;
    blocks += s.cachedBlocks;
    peak += s.peakCachedBlocks;
    evicted += s.evictedBlocks;
    offloaded += s.offloadedBlocks;
    restored += s.restoredBlocks;
    offloadBytes += s.cacheOffloadBytes;
    restoreBytes += s.cacheRestoreBytes;
    hostKvBytes += s.hostKvBytes;
    const std::size_t local = hw::kvTierIndex(hw::KvTier::kLocalHbm);
    const std::size_t remote = hw::kvTierIndex(hw::KvTier::kRemoteHbm);
    const std::size_t host = hw::kvTierIndex(hw::KvTier::kHost);
    capacity[local] += s.kvBlocks;
    capacity[remote] += s.remoteKvBlocks;
    capacity[host] += s.hostKvBlocks;
    peakUsed[local] += s.peakKvBlocks;
    peakUsed[remote] += s.peakRemoteKvBlocks;
    peakUsed[host] += s.peakHostKvBlocks;
    for (hw::KvTier tier : hw::kKvTiers) {
      const std::size_t t = hw::kvTierIndex(tier);
      cachedOn[t] += s.cachedBlocksOn[t];
      meanUsed[t] += ratio(s.kvBlockS[t], s.kvOccupancyS);
    }
  }
  // Occupancy of the tiers that hold blocks: in use by requests or by the cache (cached blocks
  // no request uses included), the mean over the steps' time.
  nlohmann::ordered_json tiers = nlohmann::ordered_json::object();
  for (hw::KvTier tier : hw::kKvTiers) {
    const std::size_t t = hw::kvTierIndex(tier);
    if (capacity[t] == 0) continue;
    tiers[hw::kvTierName(tier)] = {{"capacity_blocks", capacity[t]},
                                   {"mean_used_blocks", meanUsed[t]},
                                   {"mean_used_fraction", ratio(meanUsed[t], static_cast<double>(capacity[t]))},
                                   {"peak_used_blocks", peakUsed[t]},
                                   {"cached_blocks_at_end", cachedOn[t]}};
  }
  const bool offload = scenario.serving.prefixCacheOffload == workload::ServingPolicyConfig::PrefixCacheOffload::kHost;
  return {{"prompt_tokens", prompt},
          {"cached_prompt_tokens", cached},
          {"hit_rate", ratio(static_cast<double>(cached), static_cast<double>(prompt))},
          {"cached_blocks_at_end", blocks},
          {"peak_cached_blocks", peak},
          {"evicted_blocks", evicted},
          {"offload", offload ? "host" : "none"},
          {"offloaded_blocks", offloaded},
          {"restored_blocks", restored},
          {"offloaded_bytes", offloadBytes},
          {"restored_bytes", restoreBytes},
          // Everything the prefix cache and the KV placement moved over the chips' host links.
          {"host_link_kv_bytes", offloadBytes + restoreBytes + hostKvBytes},
          {"tiers", tiers}};
}

}  // namespace

nlohmann::ordered_json servingResults(const runtime::ServingEngine& engine, const platform::PlatformConfig& platform,
                                      const workload::ScenarioConfig& scenario, const std::string& samplingOff) {
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
  load["warmup_barrier"] = scenario.warmupBarrier;
  load["measured_requests"] = scenario.requests;
  load["sent_requests"] = engine.records().size();

  nlohmann::ordered_json replicas = nlohmann::ordered_json::array();
  uint64_t preemptions = 0, recomputes = 0, swapOuts = 0, swapIns = 0, violations = engine.rooflineViolations();
  double swapOutBytes = 0.0, swapInBytes = 0.0, swapS = 0.0, remoteKvBytes = 0.0, hostKvBytes = 0.0;
  double imbalanceExperts = 0.0, imbalanceChips = 0.0;
  uint64_t routedLayers = 0;
  uint64_t chipLayers = engine.chipImbalanceLayers();  // experts across replicas; else per replica
  for (int d = 0; d < engine.replicas(); ++d) {
    const runtime::ReplicaStats& s = engine.replicaStats(d);
    preemptions += s.preemptions;
    recomputes += s.recomputes;
    swapOuts += s.swapOuts;
    swapIns += s.swapIns;
    swapOutBytes += s.swapOutBytes;
    swapInBytes += s.swapInBytes;
    swapS += s.swapS;
    remoteKvBytes += s.remoteKvBytes;
    hostKvBytes += s.hostKvBytes;
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
         {"role", engine.role(d) == runtime::ServingEngine::Role::kPrefill  ? "prefill"
                  : engine.role(d) == runtime::ServingEngine::Role::kDecode ? "decode"
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
           {"remote_capacity_blocks", s.remoteKvBlocks},
           {"peak_remote_blocks", s.peakRemoteKvBlocks},
           {"host_capacity_blocks", s.hostKvBlocks},
           {"peak_host_blocks", s.peakHostKvBlocks},
           {"cross_chip_kv_bytes", s.remoteKvBytes},
           {"host_kv_bytes", s.hostKvBytes},
           {"swap_outs", s.swapOuts},
           {"swap_ins", s.swapIns},
           {"swapped_out_bytes", s.swapOutBytes},
           {"swapped_in_bytes", s.swapInBytes},
           {"swap_time_s", s.swapS}}},
         {"per_op", perOp}});
  }
  nlohmann::ordered_json speculative;
  if (scenario.speculative) speculative = speculativeJson(engine, scenario);
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const auto& m : engine.chipMemory()) {
    memory.push_back({{"chip", platform::PlatformConfig::chipName(m.chip)},
                      {"weight_bytes", m.weightBytes},
                      {"activation_memory_bytes", m.activationBytes},
                      {"kv_cache_capacity_bytes", m.kvCapacityBytes},
                      {"hbm_capacity_bytes", m.hbmBytes}});
    if (const runtime::KvFetcher* f = engine.kvFetcher(m.chip)) {
      // What the chip's fetch engine moved: the transactions, where results.kv_placement counts the plans.
      memory.back()["kv_donor"] =
          f->donor() >= 0 ? nlohmann::ordered_json(platform::PlatformConfig::chipName(f->donor())) : nullptr;
      const hw::KvTier tier = f->donor() >= 0 ? hw::KvTier::kRemoteHbm : hw::KvTier::kHost;
      memory.back()["off_chip_kv_read_bytes"] = f->bytesRead(tier);
      memory.back()["off_chip_kv_written_bytes"] = f->bytesWritten(tier);
    }
  }
  nlohmann::ordered_json out = {
      {"kind", "serving"},
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
      {"simulation", simulationJson(engine)},
      {"decode_steps", decodeStepsJson(engine, samplingOff)},
      {"kv_transfers",
       {{"count", engine.kvTransfers()},
        {"bytes", engine.kvTransferBytes()},
        {"mean_time_s", ratio(engine.kvTransferTimeS(), static_cast<double>(engine.kvTransfers()))}}},
      {"kv_cache_capacity_tokens_per_replica", engine.kvCapacityTokens()},
      {"kv_placement",
       {{"policy", engine.kvPlacement()}, {"cross_chip_kv_bytes", remoteKvBytes}, {"host_kv_bytes", hostKvBytes}}},
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
  if (!speculative.is_null()) out["speculative_decoding"] = std::move(speculative);
  if (scenario.serving.prefixCaching) out["prefix_cache"] = prefixCacheJson(engine, scenario);
  return out;
}

namespace {

using Json = nlohmann::ordered_json;

Json policyJson(const workload::PhasePolicyConfig& p) {
  Json j = {{"impl", workload::phasePolicyName(p.impl)}};
  if (p.impl != workload::PhasePolicyImpl::kComputeOpt) {
    j["dvfs_point"] = p.dvfsPoint >= 0 ? Json(p.dvfsPoint) : Json("auto");
    j["active_arrays"] = p.activeArrays > 0 ? Json(p.activeArrays) : Json("auto");
    if (p.impl == workload::PhasePolicyImpl::kUniform) {
      j["dvfs_point"] = std::max(0, p.dvfsPoint);
      if (p.activeArrays == 0) j["active_arrays"] = "all";
    }
  }
  if (p.impl == workload::PhasePolicyImpl::kBandwidthOpt) j["compute_headroom"] = p.computeHeadroom;
  return j;
}

Json settingJson(const workload::PhaseSetting& s) {
  return {{"dvfs_point", s.point}, {"active_arrays", s.arrays}};
}

}  // namespace

nlohmann::ordered_json servingPolicyResults(const runtime::ServingEngine& engine,
                                            const workload::ScenarioConfig& scenario) {
  const workload::ServingPolicyConfig& s = scenario.serving;
  using Role = runtime::ServingEngine::Role;
  return {{"kv_cache_placement", engine.kvPlacement()},
          {"prefill_policy", policyJson(s.prefill)},
          {"decode_policy", policyJson(s.decode)},
          {"max_concurrent_users", s.maxConcurrentUsers},
          {"max_resident_per_replica", s.maxConcurrentUsers > 0 ? Json(std::max({engine.maxResident(Role::kBoth),
                                                                                 engine.maxResident(Role::kPrefill),
                                                                                 engine.maxResident(Role::kDecode)}))
                                                                : Json(nullptr)}};
}

nlohmann::ordered_json phaseResults(const runtime::ServingEngine& engine, const power::PowerMonitor& power,
                                    double endS) {
  const std::vector<int> mirrorOf = engine.mirrorOfChips();
  // Power per serving state, summed over every serving chip (a mirror as its leader).
  std::array<double, power::kServingStates> energy{}, time{};
  const bool modelled = power.modelled();
  for (const auto& m : engine.chipMemory()) {
    if (!modelled) continue;
    const auto c = static_cast<std::size_t>(m.chip);
    const auto src = c < mirrorOf.size() && mirrorOf[c] >= 0 ? static_cast<std::size_t>(mirrorOf[c]) : c;
    const power::ChipPower* p = power.chip(src);
    if (p == nullptr) continue;
    const auto e = p->stateEnergyJ(endS);
    const auto t = p->stateTimeS(endS);
    for (std::size_t k = 0; k < power::kServingStates; ++k) {
      energy[k] += e[k];
      time[k] += t[k];
    }
  }
  const auto stateJson = [&](power::ServingState state) {
    const auto k = static_cast<std::size_t>(state);
    if (!modelled) return Json{{"chip_time_s", nullptr}, {"energy_j", nullptr}, {"average_power_per_chip_w", nullptr}};
    return Json{{"chip_time_s", time[k]},
                {"energy_j", energy[k]},
                {"average_power_per_chip_w", time[k] > 0 ? Json(energy[k] / time[k]) : Json(nullptr)}};
  };
  Json out;
  Json transitions = Json::array();
  for (std::size_t ph = 0; ph < workload::kStepPhases; ++ph) {
    workload::PhaseTotals sum;
    for (int d = 0; d < engine.replicas(); ++d) sum += engine.phaseController(d).totals()[ph];
    const auto phase = static_cast<workload::StepPhase>(ph);
    const power::ServingState state =
        phase == workload::StepPhase::kPrefill ? power::ServingState::kPrefill : power::ServingState::kDecode;
    Json j = {{"steps", sum.steps},
              {"step_time_s", sum.stepS},
              {"transitions", sum.transitions},
              {"clock_switches", sum.clockSwitches},
              {"wakes", sum.wakes},
              {"transition_time_s", sum.transitionS},
              {"bandwidth_opt_fallbacks", sum.fallbacks},
              {"mean_active_arrays", ratio(sum.arrayS, sum.stepS)},
              {"mean_core_clock_hz", ratio(sum.frequencyS, sum.stepS)},
              {"step_time_at_dvfs_points_s", sum.timeAtPoint.empty() ? Json(nullptr) : Json(sum.timeAtPoint)},
              {"tokens", sum.tokens},
              {"flops", sum.flops},
              {"hbm_bytes", sum.bytes},
              {"achieved_flops_per_s_per_chip", ratio(sum.flops, sum.chipS)},
              {"fraction_of_peak_flops", ratio(sum.flops, sum.peakFlopS)},
              {"achieved_hbm_bytes_per_s_per_chip", ratio(sum.bytes, sum.chipS)},
              {"fraction_of_peak_hbm_bandwidth", ratio(sum.bytes, sum.peakBytesS)}};
    Json p = stateJson(state);
    for (auto it = p.begin(); it != p.end(); ++it) j[it.key()] = it.value();
    j["energy_per_token_j"] =
        modelled && sum.tokens > 0 ? Json(energy[static_cast<std::size_t>(state)] / sum.tokens) : Json(nullptr);
    out[workload::stepPhaseName(phase)] = std::move(j);
  }
  out["transition"] = stateJson(power::ServingState::kTransition);
  out["idle"] = stateJson(power::ServingState::kIdle);
  for (int d = 0; d < engine.replicas(); ++d) {
    for (const workload::PhaseTransition& t : engine.phaseController(d).transitions()) {
      if (transitions.size() >= runtime::PhaseController::kListedTransitions) break;
      transitions.push_back({{"start_s", t.startS},
                             {"stall_s", t.stallS},
                             {"replica", t.replica},
                             {"into", workload::stepPhaseName(t.phase)},
                             {"from", settingJson(t.from)},
                             {"to", settingJson(t.to)}});
    }
  }
  out["first_transitions"] = std::move(transitions);
  return out;
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
  // The steady-state rate sweeps and fronts use, then InferenceX's per-request count of the same window.
  const auto& perChip = m["throughput_per_chip_tok_per_s"];
  out << fmt::format(
      "  throughput per chip  {:.0f} tok/s total, {:.0f} tok/s output  ({:.0f} tok/s per kW); "
      "per request {:.0f} tok/s\n",
      perChip["total"].get<double>(), perChip["output"].get<double>(),
      m["throughput_per_kw_tok_per_s"]["total"].get<double>(), ix["tput_per_gpu"].get<double>());
  out << "report: " << reportPath << "\n";
}

}  // namespace scoville::cli
