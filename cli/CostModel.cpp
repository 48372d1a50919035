#include "cli/CostModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "config/ConfigError.h"
#include "runtime/PlatformDecode.h"
#include "workloads/ReplicaClasses.h"

namespace scoville::cli {

namespace {

// Fitted by scripts/bench-cost-model on its ten training runs (2026-12-06, session 47, the 2-core
// development machine, Release build): training MAPE 18%, its five held-out runs 49% (worst +119%);
// docs/performance.md#cost-model. Non-negative least squares set the fixed, per-step and replay
// terms to zero on these runs: their cost hides in the per-tile ones.
constexpr double kFixedS = 0.0;                    ///< process start, inputs, report
constexpr double kPerChipS = 3.454e-3;             ///< per platform chip
constexpr double kPerDetailedStepS = 0.0;          ///< per decode step simulated in detail, per simulated replica
constexpr double kPerDetailedTileS = 4.42e-6;      ///< per tile of a decode step simulated in detail, per chip
constexpr double kPerPromptTileGroupS = 8.988e-7;  ///< per tile of a prompt step, per timed HBM channel group
constexpr double kPerReplayedStepS = 0.0;          ///< per replayed step, per simulated replica

double mean(int tokens, double ratio) {
  return 0.5 * (1.0 + std::clamp(ratio, 0.0, 1.0)) * static_cast<double>(std::max(tokens, 1));
}

}  // namespace

nlohmann::ordered_json CostEstimate::features() const {
  const double chipsTiles = tilesPerStep * simulatedChips * simulatedReplicas;
  return {{"chips", chips},
          {"detailed_steps", detailedSteps * simulatedReplicas},
          {"detailed_tiles", detailedSteps * chipsTiles},
          {"prompt_tile_groups", promptSteps * promptTilesPerStep * simulatedChips * simulatedReplicas * channelGroups},
          {"replayed_steps", replayedSteps * simulatedReplicas}};
}

CostEstimate estimateRunCost(const Inputs& inputs, const RunRequest& request, int samplePeriod) {
  using workload::LoadKind;
  const platform::PlatformConfig& platform = inputs.platform;
  const platform::PlacementConfig& placement = platform.placement;
  const workload::ScenarioConfig& scenario = inputs.scenario;
  CostEstimate e;
  e.chips = platform.chipCount();
  e.replicas = std::max(placement.dp, 1);
  e.simulatedChips = request.exactAllChips ? placement.tp * placement.pp : placement.pp;
  workload::ScenarioConfig step = scenario;
  int batch = 1;
  // A request's mean prompt, and the most of it one step prefills.
  const double meanIn = mean(scenario.inputTokens, scenario.randomRangeRatio);
  const int chunkLimit = std::min(scenario.scheduler.prefillChunk, scenario.scheduler.maxTokensPerStep);
  if (scenario.kind == workload::ScenarioKind::kDecodeStep) {
    e.kind = "decode_step";
    e.simulatedReplicas = e.replicas;
    e.steps = e.detailedSteps = 1.0;
    batch = std::max(1, scenario.batch / e.replicas);
  } else {
    e.kind = "serving";
    const bool closed = scenario.load.impl == LoadKind::kClosedLoop;
    const auto warmup = static_cast<uint64_t>(scenario.warmup());
    const auto measured = static_cast<uint64_t>(scenario.requests);
    const int users = closed ? scenario.load.concurrency : 0;
    double simulatedUsers = users;
    double requests = static_cast<double>(warmup + measured);
    e.simulatedReplicas = e.replicas;
    const bool coupled = placement.disaggregation.has_value() || (placement.ep > 1 && placement.ep > placement.tp);
    if (!request.exact && !request.exactAllChips && closed && e.replicas > 1 && !coupled) {
      const workload::ReplicaClassPlan plan = workload::planReplicaClasses(e.replicas, users, warmup, measured);
      if (plan.mirrors()) {
        e.replicaClasses = true;
        e.simulatedReplicas = 0;
        for (const workload::ReplicaClass& c : plan.classes) e.simulatedReplicas += c.users > 0 ? 1 : 0;
        simulatedUsers = static_cast<double>(plan.users);
        requests = static_cast<double>(plan.warmup + plan.measured);
      }
    }
    // The busiest replica: its share of the users and of the requests, and the users still
    // running when the last measured request finishes.
    const double perReplica = closed ? std::ceil(static_cast<double>(users) / e.replicas) : 1.0;
    e.usersPerReplica = closed ? std::max(1.0, perReplica) : 1.0;
    const double share =
        closed && simulatedUsers > 0 ? e.usersPerReplica / simulatedUsers : 1.0 / std::max(1, e.simulatedReplicas);
    e.requestsPerReplica = requests * share + (closed ? e.usersPerReplica : 0.0);
    const double batchUsers =
        std::min(e.usersPerReplica, static_cast<double>(std::max(scenario.scheduler.maxBatch, 1)));
    const double meanOut = mean(scenario.outputTokens, scenario.randomRangeRatio);
    e.promptSteps = e.requestsPerReplica * std::ceil(meanIn / std::max(1, chunkLimit));
    const double decodeSteps = e.requestsPerReplica * meanOut / batchUsers;
    e.steps = decodeSteps + e.promptSteps;
    // Sampled decode steps: every request that joins or leaves starts a new steady run, whose first
    // two steps and each period's last two are simulated (runtime/StepSampler.h).
    e.detailedSteps = decodeSteps;
    if (samplePeriod >= 2) {
      e.sampled = true;
      const double runs = std::max(1.0, e.requestsPerReplica);
      const double length = decodeSteps / runs;
      const double perRun = std::min(length, 2.0 + 2.0 * std::floor(length / samplePeriod));
      e.detailedSteps = runs * perRun;
      e.replayedSteps = decodeSteps - e.detailedSteps;
    }
    batch = static_cast<int>(batchUsers);
    step.batch = batch;
    step.contextLength = static_cast<int>(meanIn + 0.5 * meanOut);
  }
  // One chip's tiles in a representative decode step (uniform routing).
  const hw::ChipConfig& chip = platform.chipConfig(0);
  const workload::ModelShard shard = runtime::shardFor(placement, inputs.model, 0, 0);
  // A replica whose users' KV does not fit at once runs fewer of them (the others queue): halve the
  // representative batch until it fits, as far as one request (which must, or the run fails too).
  const int wanted = batch;
  for (;;) {
    try {
      e.tilesPerStep = static_cast<double>(
          runtime::planDecodeStep(inputs.model, step, chip, shard, batch, placement.activationBytes).ops.size());
      break;
    } catch (const config::ConfigError& error) {
      if (error.kind() != config::ErrorKind::kDoesNotFit || batch <= 1) throw;
      batch = std::max(1, batch / 2);
      step.batch = batch;
    }
  }
  if (batch < wanted) {  // the same decode tokens in smaller steps
    const double more = static_cast<double>(wanted) / batch;
    e.steps = e.promptSteps + (e.steps - e.promptSteps) * more;
    e.detailedSteps *= more;
    e.replayedSteps *= more;
  }
  if (e.promptSteps > 0) {
    // One prompt chunk on an empty context, beside the decodes of the other users.
    workload::ScenarioConfig prompt = step;
    prompt.contextLength = 0;
    const auto chunk = static_cast<uint64_t>(std::min(meanIn, static_cast<double>(chunkLimit)));
    e.promptTilesPerStep = static_cast<double>(runtime::planDecodeStep(inputs.model, prompt, chip, shard, 1,
                                                                       placement.activationBytes, nullptr, 1, chunk)
                                                   .ops.size()) +
                           (batch > 1 ? e.tilesPerStep : 0.0);
  }
  // Every large access is timed on each of the chip's timed HBM channel groups.
  e.channelGroups = std::max(1, chip.hbm.channels / std::max(1, chip.hbm.lockstepChannels));
  const nlohmann::ordered_json f = e.features();
  e.wallS = kFixedS + kPerChipS * e.chips + kPerDetailedStepS * f["detailed_steps"].get<double>() +
            kPerDetailedTileS * f["detailed_tiles"].get<double>() +
            kPerPromptTileGroupS * f["prompt_tile_groups"].get<double>() +
            kPerReplayedStepS * f["replayed_steps"].get<double>();
  return e;
}

std::string describe(const CostEstimate& e) {
  std::string text = fmt::format("dry run ({}): {} chips, {} replica{}; {} simulated, {} chip{} each simulating\n",
                                 e.kind, e.chips, e.replicas, e.replicas == 1 ? "" : "s", e.simulatedReplicas,
                                 e.simulatedChips, e.simulatedChips == 1 ? "" : "s");
  if (e.kind == "serving") {
    text += fmt::format("  replica classes: {}; decode steps sampled: {}\n", e.replicaClasses ? "yes" : "no",
                        e.sampled ? "yes" : "no");
    text += fmt::format(
        "  per simulated replica: {:.0f} users, about {:.0f} requests, {:.0f} steps ({:.0f} with "
        "prompt tokens, {:.0f} decode steps in detail, {:.0f} replayed)\n",
        e.usersPerReplica, e.requestsPerReplica, e.steps, e.promptSteps, e.detailedSteps, e.replayedSteps);
  }
  text += fmt::format(
      "  tiles per chip: {:.0f} in a decode step, {:.0f} in a prompt step; {} timed HBM channel "
      "groups\n",
      e.tilesPerStep, e.promptTilesPerStep, e.channelGroups);
  text += fmt::format(
      "  predicted wall time: {:.1f} s on the 2-core development machine "
      "(docs/performance.md#cost-model)\n",
      e.wallS);
  text += "  features: " + e.features().dump() + "\n";
  return text;
}

}  // namespace scoville::cli
