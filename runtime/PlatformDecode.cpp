#include "runtime/PlatformDecode.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <tuple>

#include "config/ConfigError.h"
#include "config/Units.h"
#include "workloads/Routing.h"
#include "workloads/StepPlanSizes.h"

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file drives

using config::ConfigError;
using config::ErrorKind;

StepPlan planDecodeStep(const ModelConfig& model, const ScenarioConfig& scenario, const hw::ChipConfig& chip,
                        ModelShard shard, int batchOverride, double reservedBytes, const RoutingConfig* routingConfig,
                        uint64_t seed, uint64_t tokens) {
  tokens = std::max<uint64_t>(tokens, 1);
  const auto batch = static_cast<uint64_t>(batchOverride >= 0 ? batchOverride : scenario.batch);
  const auto context = static_cast<uint64_t>(scenario.contextLength);
  if (model.family == ModelFamily::kMoe && shard.ep > 1 && shard.expertOwner.empty()) {
    for (int e = 0; e < model.routedExperts; ++e) {
      shard.expertOwner.push_back(static_cast<int>(static_cast<uint64_t>(e) * static_cast<uint64_t>(shard.ep) /
                                                   static_cast<uint64_t>(model.routedExperts)));
    }
  }
  StepPlanner planner(model, chip, shard);
  if (scenario.stack) {
    planner.setAttentionKernel(scenario.stack->attentionKernel);
    planner.setMoeKernel(scenario.stack->moeKernelFor(model.expertFormat().precision));
  }
  const int tp = planner.shard().tp;
  // Each request's KV cache holds context + tokens per layer after the step, requests side by
  // side within a layer's region. As the serving cache (ReplicaBuilder::kvShape), a sliding-window
  // layer keeps only its window where some layers keep every token, and its stream shares their
  // regions.
  using planning::aligned;  // 4 KiB, as the planner places weights
  const uint64_t perToken = planner.kvBytesPerTokenPerLayer();
  const uint64_t region = aligned(perToken * (context + tokens));
  const uint32_t windowLayers = planner.kvWindowLayers();
  const uint32_t fullLayers = planner.stageLayers() - windowLayers;
  const bool windowed = windowLayers > 0 && fullLayers > 0;
  const uint64_t windowTokens = std::min<uint64_t>(context + tokens, static_cast<uint64_t>(model.slidingWindow));
  const uint64_t requestBytes =
      windowed ? fullLayers * region + windowLayers * aligned(perToken * windowTokens) : planner.stageLayers() * region;
  const double kvBytes = static_cast<double>(planner.kvBytesFor(context + tokens) * batch);
  const double needed =
      static_cast<double>(planner.kvBase()) + static_cast<double>(requestBytes * batch) + reservedBytes;
  if (needed > chip.hbm.capacityBytes) {
    throw ConfigError(
        ErrorKind::kDoesNotFit, "",
        fmt::format(
            "model '{}' does not fit on chip '{}'{}: weights {} + KV cache {} (batch {} x {} tokens){} = {} "
            "> HBM capacity {}",
            model.name, chip.name, tp > 1 ? fmt::format(" (tensor-parallel rank {} of {})", shard.rank, tp) : "",
            config::formatQuantity(planner.weightBytes(), config::dim::kBytes),
            config::formatQuantity(kvBytes, config::dim::kBytes), batch, context + tokens,
            reservedBytes > 0 ? " + activations " + config::formatQuantity(reservedBytes, config::dim::kBytes) : "",
            config::formatQuantity(needed, config::dim::kBytes),
            config::formatQuantity(chip.hbm.capacityBytes, config::dim::kBytes)));
  }
  StepBatch step;
  step.kvLayerStride = region * batch;
  if (windowed) step.kvLayerRegions = fullLayers;
  for (uint64_t r = 0; r < batch; ++r) {
    step.sequences.push_back(StepSequence{r + 1, context, tokens, true, r * region});
  }
  std::vector<std::vector<uint64_t>> routed;
  if (model.family == ModelFamily::kMoe) {
    const RoutingConfig uniform;
    const std::unique_ptr<RoutingModel> routing = makeRoutingModel(
        routingConfig ? *routingConfig : uniform, model.routedExperts, model.expertsPerToken, seed, model.moeLayers());
    routed.resize(static_cast<uint64_t>(model.layers));
    for (int l = 0; l < model.layers; ++l) {
      if (!model.isMoeLayer(l)) continue;
      routed[static_cast<std::size_t>(l)].assign(static_cast<uint64_t>(model.routedExperts), 0);
      routing->route(static_cast<uint32_t>(l), batch * tokens, routed[static_cast<std::size_t>(l)]);
    }
    step.expertTokens = &routed;
  }
  return planner.plan(step);
}

ModelShard shardFor(const platform::PlacementConfig& placement, const ModelConfig& model, int rank, int stage) {
  ModelShard shard{placement.tp, rank, placement.pp, stage, placement.ep, {}};
  if (model.family == ModelFamily::kMoe && placement.ep > 1) {
    try {
      shard.expertOwner = placement.expertOwners(model.routedExperts);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(ErrorKind::kInvalidConfig, "", e.what());
    }
  }
  return shard;
}

PlatformDecodePlan planPlatformDecodeStep(const platform::PlatformConfig& platform, const ModelConfig& model,
                                          const ScenarioConfig& scenario, uint64_t seed,
                                          const std::string& routingTrace) {
  RoutingConfig routing = scenario.routing;
  if (routing.impl == RoutingImpl::kTrace) routing.file = routingTrace;
  const platform::PlacementConfig& placement = platform.placement;
  std::vector<int> chips;
  if (placement.disaggregation) {
    chips = placement.disaggregation->decodeChips;
  } else {
    for (int i = 0; i < platform.chipCount(); ++i) chips.push_back(i);
  }
  PlatformDecodePlan out;
  out.tp = placement.tp;
  out.pp = placement.pp;
  out.dp = placement.dp;
  std::vector<std::string> misfits;
  for (int d = 0; d < placement.dp; ++d) {
    const int batch = static_cast<int>(shardOf(static_cast<uint64_t>(scenario.batch), placement.dp, d));
    for (int stage = 0; stage < placement.pp; ++stage) {
      for (int r = 0; r < placement.tp; ++r) {
        const int chip = chips[static_cast<std::size_t>((d * placement.pp + stage) * placement.tp + r)];
        try {
          StepPlan plan =
              planDecodeStep(model, scenario, platform.chipConfig(chip), shardFor(placement, model, r, stage), batch,
                             placement.activationBytes, &routing, seed + static_cast<uint64_t>(d));
          // More replicas than requests: an idle replica still holds the weights (planDecodeStep
          // checked they fit) but runs nothing.
          if (batch == 0) continue;
          out.plans.push_back(std::move(plan));
          out.members.push_back(ChipAssignment{chip, d, r, stage, batch});
        } catch (const ConfigError& e) {
          if (e.kind() != ErrorKind::kDoesNotFit) throw;
          // "model 'M' does not fit on chip 'T' (...): weights ..." -> "chipN (T, tp rank r): weights ..."
          const std::size_t numbers = e.message().find("weights ");
          misfits.push_back(fmt::format("{} ({}{}{}): {}", platform::PlatformConfig::chipName(chip),
                                        platform.chipConfig(chip).name,
                                        placement.tp > 1 ? fmt::format(", tp rank {}", r) : "",
                                        placement.pp > 1 ? fmt::format(", stage {}", stage) : "",
                                        numbers == std::string::npos ? e.message() : e.message().substr(numbers)));
        }
      }
    }
  }
  if (!misfits.empty()) {
    throw ConfigError(
        ErrorKind::kDoesNotFit, "",
        fmt::format(
            "model '{}' does not fit platform '{}' under placement tp {} x dp {} (batch {}, "
            "context {}) on {} of its chips:\n  {}",
            model.name, platform.name,
            placement.pp > 1 ? fmt::format("{} x pp {}", placement.tp, placement.pp) : std::to_string(placement.tp),
            placement.dp, scenario.batch, scenario.contextLength, misfits.size(), fmt::join(misfits, "\n  ")));
  }
  return out;
}

PlatformDecodeRunner::PlatformDecodeRunner(const sc_core::sc_module_name& name, platform::Platform& platform,
                                           PlatformDecodePlan plan, tlm::TimingMode mode,
                                           const SoftwareStackConfig* stack)
    : sc_core::sc_module(name), m_plan(std::move(plan)) {
  const hw::CollectiveAlgorithm algorithm = platform.config().placement.allReduce;
  const auto partName = [&](const char* what, const ChipAssignment& m) {
    return m_plan.pp > 1 ? fmt::format("{}{}_{}", what, m.replica, m.stage) : fmt::format("{}{}", what, m.replica);
  };
  std::map<std::tuple<int, int, int>, std::size_t> driverOf;  // (replica, stage, rank) -> driver
  for (std::size_t i = 0; i < m_plan.members.size(); ++i) {
    const ChipAssignment& member = m_plan.members[i];
    if (m_plan.tp > 1 && member.rank == 0) {
      std::vector<int> chips;
      for (std::size_t j = i; j < i + static_cast<std::size_t>(m_plan.tp); ++j) chips.push_back(m_plan.members[j].chip);
      const hw::FabricPortsConfig& ports = platform.config().chipConfig(chips.front()).fabricPorts;
      m_groups.push_back(
          std::make_unique<CollectiveGroup>(partName("tp_group", member).c_str(), chips, algorithm,
                                            CollectiveCost{ports.link.latencyS, ports.bandwidthBytesPerS()}));
      m_groupOf[{member.replica, member.stage}] = m_groups.back().get();
      for (int r = 0; r < m_plan.tp; ++r) {
        m_groups.back()->sockets[static_cast<std::size_t>(r)].bind(
            platform.fabric(chips[static_cast<std::size_t>(r)]).fromChip);
      }
    }
    hw::Chip& chip = platform.chip(member.chip);
    m_drivers.push_back(std::make_unique<StepDriver>(fmt::format("driver{}", member.chip).c_str(),
                                                     std::move(m_plan.plans[i]), chip.config(), mode));
    m_drivers.back()->loadPort.socket.bind(chip.socket());
    m_drivers.back()->computePort.socket.bind(chip.socket());
    m_drivers.back()->setStack(stack);
    if (m_plan.tp > 1) m_drivers.back()->joinGroup(*m_groups.back(), member.rank);
    driverOf[{member.replica, member.stage, member.rank}] = i;
  }
  // Each rank of a stage hands its activations to the same rank of the next stage.
  for (std::size_t i = 0; i < m_plan.members.size(); ++i) {
    const ChipAssignment& from = m_plan.members[i];
    if (from.stage + 1 >= m_plan.pp) continue;
    const std::size_t next = driverOf.at({from.replica, from.stage + 1, from.rank});
    const ChipAssignment& to = m_plan.members[next];
    m_links.push_back(std::make_unique<PipelineLink>(
        fmt::format("stage_link{}_{}_{}", from.replica, from.stage, from.rank).c_str(), from.chip, to.chip));
    m_links.back()->socket.bind(platform.fabric(from.chip).fromChip);
    m_drivers[i]->linkStages(m_drivers[i]->input(), m_links.back().get());
    m_drivers[next]->linkStages(m_links.back().get(), m_drivers[next]->output());
  }
  m_plan.plans.clear();  // moved into the drivers: driver(i).plan()
}

const CollectiveGroup* PlatformDecodeRunner::groupOf(int replica, int stage) const {
  const auto it = m_groupOf.find({replica, stage});
  return it == m_groupOf.end() ? nullptr : it->second;
}

bool PlatformDecodeRunner::finished() const {
  return std::all_of(m_drivers.begin(), m_drivers.end(), [](const auto& d) { return d->finished(); });
}

std::string PlatformDecodeRunner::error() const {
  for (const auto& d : m_drivers) {
    if (!d->error().empty()) return d->error();
  }
  for (const auto& link : m_links) {
    if (!link->error().empty()) return link->error();
  }
  return "";
}

std::size_t PlatformDecodeRunner::slowest() const {
  std::size_t worst = 0;
  for (std::size_t i = 1; i < m_drivers.size(); ++i) {
    if (m_drivers[i]->stepTime() > m_drivers[worst]->stepTime()) worst = i;
  }
  return worst;
}

sc_core::sc_time PlatformDecodeRunner::stepTime() const {
  return m_drivers.empty() ? sc_core::SC_ZERO_TIME : m_drivers[slowest()]->stepTime();
}

}  // namespace scoville::runtime
