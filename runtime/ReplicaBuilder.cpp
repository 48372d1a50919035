#include "runtime/ReplicaBuilder.h"

#include <fmt/format.h>
#include <algorithm>

#include "config/ConfigError.h"
#include "config/Units.h"
#include "hw/kv/KvPlacementPolicy.h"
#include "runtime/PlatformDecode.h"
#include "runtime/ServingChecks.h"

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file builds

using config::ConfigError;
using config::ErrorKind;

namespace {

std::string bytesText(double bytes) {
  return config::formatQuantity(bytes, config::dim::kBytes);
}

}  // namespace

ReplicaBuilder::ReplicaBuilder(platform::Platform& platform, const ModelConfig& model, const ScenarioConfig& scenario,
                               const ScenarioFiles& files, uint64_t seed, tlm::TimingMode mode, bool mirror)
    : m_platform(platform),
      m_config(platform.config()),
      m_model(model),
      m_scenario(scenario),
      m_files(files),
      m_seed(seed),
      m_mode(mode),
      m_mirror(mirror) {}

ReplicaBuilder::Pools ReplicaBuilder::replicaChips() const {
  const platform::PlacementConfig& placement = m_config.placement;
  if (placement.pp > 1 && placement.disaggregation) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("platform '{}': serving with pipeline parallelism and prefill/decode "
                                  "disaggregation together is not modelled",
                                  m_config.name));
  }
  Pools pools;
  if (placement.disaggregation) {
    const std::vector<int>& prefill = placement.disaggregation->prefillChips;
    if (prefill.size() % static_cast<std::size_t>(placement.tp) != 0) {
      throw ConfigError(ErrorKind::kInvalidConfig, "",
                        fmt::format("platform '{}': placement.disaggregation.prefill_chips holds {} chips, not a "
                                    "multiple of tp = {} (the prefill pool runs replicas of the same tensor-parallel "
                                    "width)",
                                    m_config.name, prefill.size(), placement.tp));
    }
    pools.emplace_back(ReplicaRole::kPrefill, prefill);
    pools.emplace_back(ReplicaRole::kDecode, placement.disaggregation->decodeChips);
  } else {
    std::vector<int> all;
    for (int c = 0; c < m_config.chipCount(); ++c) all.push_back(c);
    pools.emplace_back(ReplicaRole::kBoth, all);
  }
  return pools;
}

std::unique_ptr<ReplicaSet> ReplicaBuilder::build(uint64_t longest) {
  const platform::PlacementConfig& placement = m_config.placement;
  const Pools pools = replicaChips();
  m_set = std::make_unique<ReplicaSet>();
  ReplicaSet& set = *m_set;
  set.tp = placement.tp;
  set.pp = placement.pp;
  checkServingPolicy(m_scenario, m_config, m_files);
  set.kvPlacement = m_scenario.serving.kvPlacementPolicy(placement.kvCache.placement);
  set.kvMode = &KvPlacementMode::of(set.kvPlacement);
  // Attention data parallelism with the experts spread over the replicas (tp 1, ep = dp): every
  // replica steps in lockstep, its tokens reaching the experts' chips by all-to-all.
  set.expertsAcross = m_model.family == ModelFamily::kMoe && placement.ep > 1 && placement.ep != placement.tp;
  if (set.expertsAcross && (placement.tp != 1 || placement.ep != placement.dp)) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("platform '{}': expert parallelism ep = {} with tp = {} and dp = {} is not modelled "
                                  "in serving: ep is 1 (experts sliced over the tensor-parallel group), tp (whole "
                                  "experts spread over it), or dp with tp 1 (attention data parallelism with the "
                                  "experts spread over the replicas)",
                                  m_config.name, placement.ep, placement.tp, placement.dp));
  }
  if (m_scenario.draftTokens() > 0) {
    const char* why = set.expertsAcross          ? "with experts across replicas (attention data parallelism)"
                      : placement.disaggregation ? "with prefill/decode disaggregation"
                      : set.pp > 1               ? "with pipeline parallelism"
                      : m_model.family == ModelFamily::kMoe && m_scenario.routing.impl == RoutingImpl::kTrace &&
                              m_scenario.speculative->method != SpeculativeMethod::kEagle
                          ? "with a routing trace (it has no rows for the draft's expert layers)"
                          : nullptr;
    if (why != nullptr) {
      throw ConfigError(ErrorKind::kInvalidConfig, m_files.scenario,
                        fmt::format("'scenario.speculative' on platform '{}' {} is not modelled", m_config.name, why));
    }
    m_draft =
        draftModelFor(m_model, *m_scenario.speculative, m_scenario.draftModel ? &*m_scenario.draftModel : nullptr);
  }
  Pools replicas;
  const auto width = static_cast<std::size_t>(set.tp * set.pp);
  for (const auto& [role, chips] : pools) {
    for (std::size_t first = 0; first + width <= chips.size(); first += width) {
      replicas.emplace_back(role, std::vector<int>(chips.begin() + static_cast<std::ptrdiff_t>(first),
                                                   chips.begin() + static_cast<std::ptrdiff_t>(first + width)));
    }
  }
  if (set.expertsAcross && set.pp > 1) {
    throw ConfigError(
        ErrorKind::kInvalidConfig, "",
        fmt::format("platform '{}': experts across replicas with pipeline parallelism is not modelled", m_config.name));
  }
  if (set.expertsAcross && placement.disaggregation) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("platform '{}': experts across replicas with prefill/decode disaggregation is not "
                                  "modelled",
                                  m_config.name));
  }
  // serving.max_concurrent_users: each replica of a pool admits its share, rounded up.
  for (const auto& [role, chips] : replicas) set.maxResident[role] += 1;
  for (auto& [role, cap] : set.maxResident) {
    const auto users = static_cast<std::size_t>(m_scenario.serving.maxConcurrentUsers);
    cap = users == 0 ? 0 : (users + cap - 1) / cap;
  }
  std::vector<std::string> misfits;
  for (int d = 0; d < static_cast<int>(replicas.size()); ++d) {
    const auto& [role, chips] = replicas[static_cast<std::size_t>(d)];
    if (auto r = buildReplica(d, role, chips, longest, misfits)) set.replicas.push_back(std::move(r));
  }
  linkPools();
  if (set.kvMode->offChip() && misfits.empty()) attachFetchers(misfits);
  if (set.expertsAcross && misfits.empty()) joinExpertGroup();
  if (!misfits.empty()) {
    throw ConfigError(ErrorKind::kDoesNotFit, "",
                      fmt::format("model '{}' does not fit platform '{}' for scenario '{}' under placement tp {} x dp "
                                  "{}:\n  {}",
                                  m_model.name, m_config.name, m_scenario.name, placement.tp, placement.dp,
                                  fmt::join(misfits, "\n  ")));
  }
  return std::move(m_set);
}

std::unique_ptr<Replica> ReplicaBuilder::buildReplica(int d, ReplicaRole role, const std::vector<int>& chips,
                                                      uint64_t longest, std::vector<std::string>& misfits) {
  ReplicaSet& set = *m_set;
  const platform::PlacementConfig& placement = m_config.placement;
  const int tp = set.tp;
  auto r = std::make_unique<Replica>();
  r->index = d;
  r->role = role;
  std::vector<uint64_t> frees;  // each chip's HBM left for KV
  for (int c = 0; c < tp * set.pp; ++c) {
    const int chip = chips[static_cast<std::size_t>(c)];
    const hw::ChipConfig& chipConfig = m_config.chipConfig(chip);
    r->chips.push_back(chip);
    ModelShard shard = shardFor(placement, m_model, c % tp, c / tp);
    shard.expertsAcrossReplicas = set.expertsAcross;
    shard.epRank = d;
    r->planners.push_back(std::make_unique<StepPlanner>(m_model, chipConfig, std::move(shard)));
    StepPlanner& planner = *r->planners.back();
    if (m_scenario.stack) {
      planner.setAttentionKernel(m_scenario.stack->attentionKernel);
      planner.setMoeKernel(m_scenario.stack->moeKernelFor(m_model.expertFormat().precision));
    }
    double weights = planner.weightBytes();
    if (m_draft) {
      // The draft's weights above the target's, then the KV space of both (its layers' regions
      // after the target's).
      DraftLayout layout = m_draft->layout;
      layout.weightBase = planner.weightEnd();
      layout.embedding = planner.embeddingAddress();
      layout.lmHead = planner.lmHeadAddress();
      const uint32_t window = planner.kvWindowLayers();
      const uint32_t full = planner.stageLayers() - window;
      layout.kvRegionOffset = full > 0 && window > 0 ? full : planner.stageLayers();
      r->draftPlanners.push_back(std::make_unique<StepPlanner>(
          m_draft->model, chipConfig, shardFor(placement, m_draft->model, c % tp, c / tp), layout));
      StepPlanner& draft = *r->draftPlanners.back();
      if (m_scenario.stack) {
        draft.setAttentionKernel(m_scenario.stack->attentionKernel);
        draft.setMoeKernel(m_scenario.stack->moeKernelFor(m_draft->model.expertFormat().precision));
      }
      planner.setKvBase(draft.weightEnd());
      draft.setKvBase(draft.weightEnd());
      weights += draft.weightBytes();
    }
    const double free =
        chipConfig.hbm.capacityBytes - static_cast<double>(planner.kvBase()) - placement.activationBytes;
    set.chipMemory.push_back(
        ChipMemory{chip, weights, std::max(0.0, free), placement.activationBytes, chipConfig.hbm.capacityBytes});
    if (free <= 0) {
      misfits.push_back(fmt::format("{} ({}): weights {}{} + activations {} > HBM {}",
                                    platform::PlatformConfig::chipName(chip), chipConfig.name, bytesText(weights),
                                    m_draft ? " (the draft's included)" : "", bytesText(placement.activationBytes),
                                    bytesText(chipConfig.hbm.capacityBytes)));
      continue;
    }
    frees.push_back(static_cast<uint64_t>(free));
  }
  if (!misfits.empty()) return nullptr;
  hw::KvModelShape shape = kvShape(*r);
  const uint32_t draftLayers = m_draft ? static_cast<uint32_t>(m_draft->model.layers) : 0;
  shape.layers += draftLayers;  // a block holds the draft's layers too, each in a target layer's room
  const uint64_t tokenBytes = std::max<uint64_t>(1, shape.bytesPerTokenPerLayer * shape.layers);
  uint64_t kvTokens = ~uint64_t{0};  // tokens of KV the tightest chip holds
  for (const uint64_t free : frees) kvTokens = std::min(kvTokens, free / tokenBytes);
  const uint64_t kvCapacity = kvTokens * tokenBytes;
  hw::KvCacheConfig kvConfig = placement.kvCache;
  if (m_scenario.serving.prefixCaching) {
    // A hit skips the prefill of whole blocks of every layer: window layers keep no such blocks.
    if (placement.disaggregation) {
      throw ConfigError(ErrorKind::kInvalidConfig, m_files.scenario,
                        "'scenario.serving.prefix_caching' with prefill/decode disaggregation is not modelled");
    }
    if (shape.windowSlots > 0) {
      throw ConfigError(ErrorKind::kInvalidConfig, m_files.scenario,
                        fmt::format("'scenario.serving.prefix_caching' with model '{}''s sliding-window layers is not "
                                    "modelled (a cached prefix would need their window's KV too)",
                                    m_model.name));
    }
    kvConfig.prefixCaching = true;
    if (m_scenario.serving.prefixCacheOffload == ServingPolicyConfig::PrefixCacheOffload::kHost) {
      if (m_set->kvMode->remoteTier) {
        throw ConfigError(ErrorKind::kInvalidConfig, m_files.scenario,
                          "'scenario.serving.prefix_cache_offload: host' with KV placement spill_to_remote is not "
                          "modelled (a restored block would land in a neighbour's HBM, which the host copy engine "
                          "cannot write); use kv_cache_placement: local or offload_to_host");
      }
      kvConfig.prefixCacheOffload = true;
    }
  }
  auto kv = std::make_unique<hw::KvBlockAllocator>(kvConfig, shape, kvCapacities(*r, kvCapacity, shape),
                                                   hw::makeKvPlacementPolicy(set.kvPlacement));
  const uint64_t capacityTokens = kv->placedCapacityBlocks() * kv->blockTokens();
  set.kvCapacityTokens = capacityTokens;
  if (kv->peakSlotsFor(longest) > kv->placedCapacityBlocks()) {
    misfits.push_back(fmt::format(
        "replica {}: the KV cache holds {} tokens ({} per chip at {} per token{}) but the longest request needs {}", d,
        capacityTokens, bytesText(static_cast<double>(kvCapacity)), bytesText(static_cast<double>(tokenBytes)),
        shape.windowSlots > 0 ? ", and the blocks of its sliding window" : "", longest));
    return nullptr;
  }
  r->stats.hostKvBlocks = kv->capacityBlocks(hw::KvTier::kHost);
  r->scheduler = std::make_unique<ServingScheduler>(m_scenario.scheduler, std::move(kv), set.maxResidentOf(role));
  if (m_draft) {
    const SpeculativeConfig& spec = *m_scenario.speculative;
    r->scheduler->speculate(
        spec.draftTokens,
        std::make_unique<AcceptanceModel>(spec.acceptance, spec.draftTokens, mixBits(m_seed + static_cast<uint64_t>(d)),
                                          m_scenario.acceptanceTrace),
        draftLayers);
    if (m_draft->model.family == ModelFamily::kMoe) {
      RoutingConfig routing = m_scenario.routing;
      r->draftRouting =
          makeRoutingModel(routing, m_draft->model.routedExperts, m_draft->model.expertsPerToken,
                           mixBits(m_seed + static_cast<uint64_t>(d)) ^ 0xd7af7ull, m_draft->model.moeLayers());
    }
  }
  if (m_model.family == ModelFamily::kMoe) {
    RoutingConfig routing = m_scenario.routing;
    if (routing.impl == RoutingImpl::kTrace) routing.file = m_files.routingTrace;
    r->routing = makeRoutingModel(routing, m_model.routedExperts, m_model.expertsPerToken,
                                  m_seed + static_cast<uint64_t>(d), m_model.moeLayers());
    r->expertTokens.resize(static_cast<std::size_t>(m_model.layers));
    if (placement.ep > 1) r->expertOwner = placement.expertOwners(m_model.routedExperts);
  }
  // Drivers, a tensor-parallel group per stage and the stages' hand-offs, bound to the chips and
  // their fabric interfaces.
  const auto at = [&](int stage, int rank) { return static_cast<std::size_t>(stage * tp + rank); };
  for (int stage = 0; stage < set.pp && tp > 1; ++stage) {
    std::vector<int> group(r->chips.begin() + static_cast<std::ptrdiff_t>(at(stage, 0)),
                           r->chips.begin() + static_cast<std::ptrdiff_t>(at(stage, 0) + tp));
    const hw::FabricPortsConfig& ports = m_config.chipConfig(group.front()).fabricPorts;
    r->groups.push_back(std::make_unique<CollectiveGroup>(
        (set.pp > 1 ? fmt::format("tp_group{}_{}", d, stage) : fmt::format("tp_group{}", d)).c_str(), group,
        placement.allReduce, CollectiveCost{ports.link.latencyS, ports.bandwidthBytesPerS()}));
    for (int rank = 0; rank < tp; ++rank) {
      r->groups.back()->sockets[static_cast<std::size_t>(rank)].bind(
          m_platform.fabric(group[static_cast<std::size_t>(rank)]).fromChip);
    }
  }
  decideMirrors(*r);
  for (int c = 0; c < tp * set.pp; ++c) {
    hw::Chip& chip = m_platform.chip(r->chips[static_cast<std::size_t>(c)]);
    r->drivers.push_back(std::make_unique<StepDriver>(
        fmt::format("driver{}", r->chips[static_cast<std::size_t>(c)]).c_str(), chip.config(), m_mode));
    StepDriver& driver = *r->drivers.back();
    driver.loadPort.socket.bind(chip.socket());
    driver.computePort.socket.bind(chip.socket());
    driver.setStack(m_scenario.stack ? &*m_scenario.stack : nullptr);
    if (!r->groups.empty()) driver.joinGroup(*r->groups[static_cast<std::size_t>(c / tp)], c % tp);
  }
  if (placement.kvCache.preemption == hw::KvPreemption::kSwap || r->scheduler->kv().config().prefixCacheOffload) {
    attachSwappers(*r);
  }
  checkReplicaPolicy(m_scenario, *r, m_config, m_files);
  {
    std::vector<hw::Chip*> replicaChips;
    for (int chip : r->chips) replicaChips.push_back(&m_platform.chip(chip));
    r->phase = std::make_unique<PhaseController>(d, m_scenario.serving, std::move(replicaChips));
  }
  for (int stage = 0; stage + 1 < set.pp; ++stage) {
    for (int rank = 0; rank < tp; ++rank) {
      const int src = r->chips[at(stage, rank)];
      const int dst = r->chips[at(stage + 1, rank)];
      r->links.push_back(
          std::make_unique<PipelineLink>(fmt::format("stage_link{}_{}_{}", d, stage, rank).c_str(), src, dst));
      r->links.back()->socket.bind(m_platform.fabric(src).fromChip);
      StepDriver& from = *r->drivers[at(stage, rank)];
      StepDriver& to = *r->drivers[at(stage + 1, rank)];
      from.linkStages(from.input(), r->links.back().get());
      to.linkStages(r->links.back().get(), to.output());
    }
  }
  return r;
}

void ReplicaBuilder::decideMirrors(Replica& r) const {
  const int tp = m_set->tp;
  for (int c = 0; c < tp * m_set->pp; ++c) {
    // Rank r of a stage mirrors the stage's rank 0 when it plans like it.
    const auto leader = static_cast<std::size_t>(c / tp * tp);
    r.leaderOf.push_back(leader);
    // Off-chip KV reaches other chips' memories and links, which mirroring would not see.
    const auto alike = [&](const std::vector<std::unique_ptr<StepPlanner>>& planners) {
      return planners.empty() || planners[static_cast<std::size_t>(c)]->plansLike(*planners[leader]);
    };
    r.mirrors.push_back(m_mirror && !m_set->kvMode->offChip() && c % tp > 0 && alike(r.planners) &&
                        alike(r.draftPlanners));  // a draft's planner too, under speculative decoding
  }
  // A group whose ranks all mirror rank 0 is run by rank 0 alone, each block of its collectives
  // as one rotation (CollectiveGroup::setMirrored): on a single switched stage, where a
  // rotation is exact and no pipeline send needs the mirrors.
  if (m_set->pp == 1 && r.groups.size() == 1 && m_config.network.topology == platform::Topology::kSwitched &&
      std::all_of(r.mirrors.begin() + 1, r.mirrors.end(), [](bool m) { return m; })) {
    r.groups.front()->setMirrored(true);
  }
}

void ReplicaBuilder::linkPools() {
  ReplicaSet& set = *m_set;
  for (const auto& from : set.replicas) {
    if (from->role != ReplicaRole::kPrefill) continue;
    for (const auto& to : set.replicas) {
      if (to->role != ReplicaRole::kDecode) continue;
      for (int rank = 0; rank < set.tp; ++rank) {
        const int src = from->chips[static_cast<std::size_t>(rank)];
        const int dst = to->chips[static_cast<std::size_t>(rank)];
        auto link = std::make_unique<PipelineLink>(fmt::format("kv_link{}_{}_{}", from->index, to->index, rank).c_str(),
                                                   src, dst);
        link->socket.bind(m_platform.fabric(src).fromChip);
        set.kvLinks[{from->index, to->index, rank}] = std::move(link);
      }
    }
  }
}

void ReplicaBuilder::joinExpertGroup() {
  ReplicaSet& set = *m_set;
  std::vector<int> chips;
  for (const auto& r : set.replicas) chips.push_back(r->chips.front());
  const hw::FabricPortsConfig& ports = m_config.chipConfig(chips.front()).fabricPorts;
  set.epGroup = std::make_unique<CollectiveGroup>("ep_group", chips, m_config.placement.allReduce,
                                                  CollectiveCost{ports.link.latencyS, ports.bandwidthBytesPerS()});
  for (std::size_t d = 0; d < set.replicas.size(); ++d) {
    set.epGroup->sockets[d].bind(m_platform.fabric(chips[d]).fromChip);
    set.replicas[d]->drivers.front()->joinGroup(*set.epGroup, static_cast<int>(d));
  }
}

}  // namespace scoville::runtime
