#include "runtime/ServingEngine.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "hw/kv/KvPlacementPolicy.h"
#include "runtime/PlatformDecode.h"
#include "tlm/config/ConfigError.h"
#include "tlm/config/Units.h"
#include "workloads/Roofline.h"

#include <memory>

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file drives

using config::ConfigError;
using config::ErrorKind;

namespace {

std::string bytesText(double bytes) {
  return config::formatQuantity(bytes, config::dim::kBytes);
}

}  // namespace

ServingEngine::ServingEngine(const sc_core::sc_module_name& name, platform::Platform& platform,
                             const ModelConfig& model, const ScenarioConfig& scenario, uint64_t seed,
                             tlm::TimingMode mode, const ScenarioFiles& files, bool mirror)
    : sc_core::sc_module(name), m_model(model), m_scenario(scenario), m_load(scenario, seed, files.loadTrace) {
  const platform::PlatformConfig& config = platform.config();
  const platform::PlacementConfig& placement = config.placement;
  m_pp = placement.pp;
  if (m_pp > 1 && placement.disaggregation) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("platform '{}': serving with pipeline parallelism and prefill/decode "
                                  "disaggregation together is not modelled",
                                  config.name));
  }
  // Replica r's chips: with disaggregation, the prefill pool's replicas (prefill_chips in groups
  // of tp) come first, then the decode pool's (decode_chips, dp groups of tp).
  std::vector<std::pair<Role, std::vector<int>>> pools;
  if (placement.disaggregation) {
    const std::vector<int>& prefill = placement.disaggregation->prefillChips;
    if (prefill.size() % static_cast<std::size_t>(placement.tp) != 0) {
      throw ConfigError(ErrorKind::kInvalidConfig, "",
                        fmt::format("platform '{}': placement.disaggregation.prefill_chips holds {} chips, not a "
                                    "multiple of tp = {} (the prefill pool runs replicas of the same tensor-parallel "
                                    "width)",
                                    config.name, prefill.size(), placement.tp));
    }
    pools.emplace_back(Role::kPrefill, prefill);
    pools.emplace_back(Role::kDecode, placement.disaggregation->decodeChips);
  } else {
    std::vector<int> all;
    for (int c = 0; c < config.chipCount(); ++c) all.push_back(c);
    pools.emplace_back(Role::kBoth, all);
  }
  if (scenario.load.impl == LoadKind::kTrace &&
      m_load.traceRequests() < static_cast<std::size_t>(scenario.warmup() + scenario.requests)) {
    throw ConfigError(ErrorKind::kInvalidConfig, files.loadTrace,
                      fmt::format("the load trace holds {} requests but scenario '{}' warms up with {} and measures {}",
                                  m_load.traceRequests(), scenario.name, scenario.warmup(), scenario.requests));
  }
  m_tp = placement.tp;
  checkServingPolicy(config, files);
  m_kvPlacement = scenario.serving.kvPlacementPolicy(placement.kvCache.placement);
  m_kvMode = &KvPlacementMode::of(m_kvPlacement);
  // Attention data parallelism with the experts spread over the replicas (tp 1, ep = dp): every
  // replica steps in lockstep, its tokens reaching the experts' chips by all-to-all.
  m_expertsAcross = model.family == ModelFamily::kMoe && placement.ep > 1 && placement.ep != placement.tp;
  if (m_expertsAcross && (placement.tp != 1 || placement.ep != placement.dp)) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("platform '{}': expert parallelism ep = {} with tp = {} and dp = {} is not modelled "
                                  "in serving: ep is 1 (experts sliced over the tensor-parallel group), tp (whole "
                                  "experts spread over it), or dp with tp 1 (attention data parallelism with the "
                                  "experts spread over the replicas)",
                                  config.name, placement.ep, placement.tp, placement.dp));
  }
  const hw::CollectiveAlgorithm algorithm = placement.allReduce;
  std::vector<std::string> misfits;
  const uint64_t longest = m_load.maxInputTokens() + m_load.maxOutputTokens() - 1;  // the last token is never fed
  std::vector<std::pair<Role, std::vector<int>>> replicaChips;
  // A replica's chips: stage-major, chip (d x pp + s) x tp + r of the pool as in decode_step.
  const auto width = static_cast<std::size_t>(m_tp * m_pp);
  for (const auto& [role, chips] : pools) {
    for (std::size_t first = 0; first + width <= chips.size(); first += width) {
      replicaChips.emplace_back(role, std::vector<int>(chips.begin() + static_cast<std::ptrdiff_t>(first),
                                                       chips.begin() + static_cast<std::ptrdiff_t>(first + width)));
    }
  }
  if (m_expertsAcross && m_pp > 1) {
    throw ConfigError(
        ErrorKind::kInvalidConfig, "",
        fmt::format("platform '{}': experts across replicas with pipeline parallelism is not modelled", config.name));
  }
  if (m_expertsAcross && placement.disaggregation) {
    throw ConfigError(ErrorKind::kInvalidConfig, "",
                      fmt::format("platform '{}': experts across replicas with prefill/decode disaggregation is not "
                                  "modelled",
                                  config.name));
  }
  // serving.max_concurrent_users: each replica of a pool admits its share, rounded up.
  for (const auto& [role, chips] : replicaChips) m_maxResident[role] += 1;
  for (auto& [role, cap] : m_maxResident) {
    const auto users = static_cast<std::size_t>(scenario.serving.maxConcurrentUsers);
    cap = users == 0 ? 0 : (users + cap - 1) / cap;
  }
  for (int d = 0; d < static_cast<int>(replicaChips.size()); ++d) {
    auto r = std::make_unique<Replica>();
    r->index = d;
    r->role = replicaChips[static_cast<std::size_t>(d)].first;
    uint64_t kvTokens = ~uint64_t{0};  // tokens of KV the tightest chip holds
    std::vector<uint64_t> frees;       // each chip's HBM left for KV
    for (int c = 0; c < m_tp * m_pp; ++c) {
      const int rank = c % m_tp;
      const int stage = c / m_tp;
      const int chip = replicaChips[static_cast<std::size_t>(d)].second[static_cast<std::size_t>(c)];
      const hw::ChipConfig& chipConfig = config.chipConfig(chip);
      r->chips.push_back(chip);
      ModelShard shard = shardFor(placement, model, rank, stage);
      shard.expertsAcrossReplicas = m_expertsAcross;
      shard.epRank = d;
      r->planners.push_back(std::make_unique<StepPlanner>(model, chipConfig, std::move(shard)));
      const StepPlanner& planner = *r->planners.back();
      const double free =
          chipConfig.hbm.capacityBytes - static_cast<double>(planner.kvBase()) - placement.activationBytes;
      m_chipMemory.push_back(ChipMemory{chip, planner.weightBytes(), std::max(0.0, free), placement.activationBytes,
                                        chipConfig.hbm.capacityBytes});
      if (free <= 0) {
        misfits.push_back(fmt::format("{} ({}): weights {} + activations {} > HBM {}",
                                      platform::PlatformConfig::chipName(chip), chipConfig.name,
                                      bytesText(planner.weightBytes()), bytesText(placement.activationBytes),
                                      bytesText(chipConfig.hbm.capacityBytes)));
        continue;
      }
      frees.push_back(static_cast<uint64_t>(free));
    }
    if (!misfits.empty()) continue;
    // One cache per replica: every chip holds its slice (its ranks' heads, its stage's layers) of
    // the same tokens, so the tightest chip bounds the blocks. The allocator is sized in stage 0's
    // layers (the most; later stages use the first layers of each slot's region), or, beside
    // sliding-window layers, in the layers that keep every token (kvShape).
    const hw::KvModelShape shape = kvShape(*r);
    const uint64_t tokenBytes = std::max<uint64_t>(1, shape.bytesPerTokenPerLayer * shape.layers);
    for (const uint64_t free : frees) kvTokens = std::min(kvTokens, free / tokenBytes);
    const uint64_t kvCapacity = kvTokens * tokenBytes;
    const bool swaps = placement.kvCache.preemption == hw::KvPreemption::kSwap;
    auto kv = std::make_unique<hw::KvBlockAllocator>(placement.kvCache, shape,
                                                     kvCapacities(config, *r, kvCapacity, shape, files.platform),
                                                     hw::makeKvPlacementPolicy(m_kvPlacement));
    const uint64_t capacityTokens = kv->placedCapacityBlocks() * kv->blockTokens();
    m_kvCapacityTokens = capacityTokens;
    if (kv->peakSlotsFor(longest) > kv->placedCapacityBlocks()) {
      misfits.push_back(fmt::format(
          "replica {}: the KV cache holds {} tokens ({} per chip at {} per token{}) but the longest request needs {}",
          d, capacityTokens, bytesText(static_cast<double>(kvCapacity)), bytesText(static_cast<double>(tokenBytes)),
          shape.windowSlots > 0 ? ", and the blocks of its sliding window" : "", longest));
      continue;
    }
    r->stats.hostKvBlocks = kv->capacityBlocks(hw::KvTier::kHost);
    r->scheduler = std::make_unique<ServingScheduler>(scenario.scheduler, std::move(kv), maxResident(r->role));
    if (model.family == ModelFamily::kMoe) {
      r->routing = makeRoutingModel(scenario.routing.impl == RoutingImpl::kTrace
                                        ? [&] {
                                            RoutingConfig c = scenario.routing;
                                            c.file = files.routingTrace;
                                            return c;
                                          }()
                                        : scenario.routing,
                                    model.routedExperts, model.expertsPerToken, seed + static_cast<uint64_t>(d));
      r->expertTokens.resize(static_cast<std::size_t>(model.layers));
      if (placement.ep > 1) r->expertOwner = placement.expertOwners(model.routedExperts);
    }
    // Drivers, a tensor-parallel group per stage and the stages' hand-offs, bound to the chips
    // and their fabric interfaces.
    const auto at = [&](int stage, int rank) { return static_cast<std::size_t>(stage * m_tp + rank); };
    for (int stage = 0; stage < m_pp && m_tp > 1; ++stage) {
      std::vector<int> chips(r->chips.begin() + static_cast<std::ptrdiff_t>(at(stage, 0)),
                             r->chips.begin() + static_cast<std::ptrdiff_t>(at(stage, 0) + m_tp));
      const hw::FabricPortsConfig& ports = config.chipConfig(chips.front()).fabricPorts;
      r->groups.push_back(std::make_unique<CollectiveGroup>(
          (m_pp > 1 ? fmt::format("tp_group{}_{}", d, stage) : fmt::format("tp_group{}", d)).c_str(), chips, algorithm,
          CollectiveCost{ports.link.latencyS, ports.bandwidthBytesPerS()}));
      for (int rank = 0; rank < m_tp; ++rank) {
        r->groups.back()->sockets[static_cast<std::size_t>(rank)].bind(
            platform.fabric(chips[static_cast<std::size_t>(rank)]).fromChip);
      }
    }
    decideMirrors(*r, mirror, config);
    for (int c = 0; c < m_tp * m_pp; ++c) {
      hw::Chip& chip = platform.chip(r->chips[static_cast<std::size_t>(c)]);
      r->drivers.push_back(std::make_unique<StepDriver>(
          fmt::format("driver{}", r->chips[static_cast<std::size_t>(c)]).c_str(), chip.config().sram, mode));
      r->drivers.back()->loadPort.socket.bind(chip.socket());
      r->drivers.back()->computePort.socket.bind(chip.socket());
      r->drivers.back()->setStack(m_scenario.stack ? &*m_scenario.stack : nullptr);
      if (!r->groups.empty()) r->drivers.back()->joinGroup(*r->groups[static_cast<std::size_t>(c / m_tp)], c % m_tp);
    }
    if (swaps) attachSwappers(*r, platform, mode);
    checkReplicaPolicy(*r, config, files);
    {
      std::vector<hw::Chip*> chips;
      for (int chip : r->chips) chips.push_back(&platform.chip(chip));
      r->phase = std::make_unique<PhaseController>(d, m_scenario.serving, std::move(chips));
    }
    for (int stage = 0; stage + 1 < m_pp; ++stage) {
      for (int rank = 0; rank < m_tp; ++rank) {
        const int src = r->chips[at(stage, rank)];
        const int dst = r->chips[at(stage + 1, rank)];
        r->links.push_back(
            std::make_unique<PipelineLink>(fmt::format("stage_link{}_{}_{}", d, stage, rank).c_str(), src, dst));
        r->links.back()->socket.bind(platform.fabric(src).fromChip);
        StepDriver& from = *r->drivers[at(stage, rank)];
        StepDriver& to = *r->drivers[at(stage + 1, rank)];
        from.linkStages(from.input(), r->links.back().get());
        to.linkStages(r->links.back().get(), to.output());
      }
    }
    m_replicas.push_back(std::move(r));
  }
  for (std::size_t d = 0; d < m_replicas.size(); ++d) {
    if (m_replicas[d]->role != Role::kDecode) m_entry.push_back(static_cast<int>(d));
    if (m_replicas[d]->role == Role::kDecode) m_decoders.push_back(static_cast<int>(d));
  }
  // Disaggregation: a KV link from every prefill rank to the same rank of every decode replica.
  for (const auto& from : m_replicas) {
    if (from->role != Role::kPrefill) continue;
    for (const auto& to : m_replicas) {
      if (to->role != Role::kDecode) continue;
      for (int rank = 0; rank < m_tp; ++rank) {
        const int src = from->chips[static_cast<std::size_t>(rank)];
        const int dst = to->chips[static_cast<std::size_t>(rank)];
        auto link = std::make_unique<PipelineLink>(fmt::format("kv_link{}_{}_{}", from->index, to->index, rank).c_str(),
                                                   src, dst);
        link->socket.bind(platform.fabric(src).fromChip);
        m_kvLinks[{from->index, to->index, rank}] = std::move(link);
      }
    }
  }
  if (offChipKv() && misfits.empty()) attachFetchers(platform, mode, files, misfits);
  if (m_expertsAcross && misfits.empty()) {
    // One expert-parallel group over the replicas' chips: member d is replica d.
    std::vector<int> chips;
    for (const auto& r : m_replicas) chips.push_back(r->chips.front());
    const hw::FabricPortsConfig& ports = config.chipConfig(chips.front()).fabricPorts;
    m_epGroup = std::make_unique<CollectiveGroup>("ep_group", chips, algorithm,
                                                  CollectiveCost{ports.link.latencyS, ports.bandwidthBytesPerS()});
    for (std::size_t d = 0; d < m_replicas.size(); ++d) {
      m_epGroup->sockets[d].bind(platform.fabric(chips[d]).fromChip);
      m_replicas[d]->drivers.front()->joinGroup(*m_epGroup, static_cast<int>(d));
    }
  }
  if (!misfits.empty()) {
    throw ConfigError(
        ErrorKind::kDoesNotFit, "",
        fmt::format("model '{}' does not fit platform '{}' for scenario '{}' under placement tp {} x dp "
                    "{}:\n  {}",
                    model.name, config.name, scenario.name, placement.tp, placement.dp, fmt::join(misfits, "\n  ")));
  }
  m_firstMeasured = static_cast<uint64_t>(scenario.warmup()) + 1;
  m_lastMeasured = m_firstMeasured + static_cast<uint64_t>(scenario.requests) - 1;
  m_measuredLeft = static_cast<uint64_t>(scenario.requests);

  if (m_expertsAcross) {
    sc_core::sc_spawn([this] { lockstepLoop(); }, "replicas");
  } else {
    for (int d = 0; d < static_cast<int>(m_replicas.size()); ++d) {
      sc_core::sc_spawn([this, d] { replicaLoop(d); }, fmt::format("replica{}", d).c_str());
    }
  }
  if (m_load.closedLoop()) {
    sc_core::sc_spawn(
        [this] {
          for (int u = 0; u < m_load.users(); ++u) send(m_load.next(u, 0.0));
        },
        "users");
  } else {
    sc_core::sc_spawn([this] { openLoopSource(); }, "source");
  }
}

ServingEngine::~ServingEngine() = default;

std::string ServingEngine::error() const {
  if (!m_error.empty()) return m_error;
  for (const auto& r : m_replicas) {
    for (const auto& d : r->drivers) {
      if (!d->error().empty()) return d->error();
    }
    for (const auto& group : r->groups) {
      if (!group->error().empty()) return group->error();
    }
    for (const auto& link : r->links) {
      if (!link->error().empty()) return link->error();
    }
  }
  return "";
}

const ReplicaStats& ServingEngine::replicaStats(int replica) const {
  return m_replicas.at(static_cast<std::size_t>(replica))->stats;
}

std::vector<RequestRecord> ServingEngine::metricRecords() const {
  std::vector<RequestRecord> out;
  for (const RequestRecord& r : m_records) {
    if (r.tokenTimes.empty()) continue;
    out.push_back(r);
    if (r.tokenTimes.size() < r.outputTokens) {
      out.back().outputTokens = r.tokenTimes.size();
      out.back().finish = r.tokenTimes.back();
      out.back().measured = false;
    }
  }
  return out;
}

ServingEngine::Role ServingEngine::role(int replica) const {
  return m_replicas.at(static_cast<std::size_t>(replica))->role;
}

std::vector<const CollectiveGroup*> ServingEngine::groups(int replica) const {
  std::vector<const CollectiveGroup*> out;
  for (const auto& group : m_replicas.at(static_cast<std::size_t>(replica))->groups) out.push_back(group.get());
  return out;
}

std::vector<const PipelineLink*> ServingEngine::stageLinks(int replica) const {
  std::vector<const PipelineLink*> out;
  for (const auto& link : m_replicas.at(static_cast<std::size_t>(replica))->links) out.push_back(link.get());
  return out;
}

ServingWindow ServingEngine::window() const {
  ServingWindow w;
  if (m_records.size() < m_lastMeasured) return w;
  w.start = m_records[m_firstMeasured - 1].arrival;
  for (uint64_t id = m_firstMeasured; id <= m_lastMeasured; ++id) {
    w.start = std::min(w.start, m_records[id - 1].arrival);
    w.end = std::max(w.end, m_records[id - 1].finish);
  }
  return w;
}

void ServingEngine::send(const Arrival& a) {
  if (m_completed) return;
  // Requests enter at the replicas that prefill (all of them, or the prefill pool).
  const auto entries = static_cast<int>(m_entry.size());
  int replica = 0;
  if (a.user >= 0) {
    replica = m_entry[static_cast<std::size_t>(a.user % entries)];  // a user stays on its replica
  } else {
    replica = m_entry[static_cast<std::size_t>(m_nextReplica)];
    m_nextReplica = (m_nextReplica + 1) % entries;
  }
  RequestRecord record;
  record.id = a.id;
  record.user = a.user;
  record.replica = replica;
  record.arrival = sc_core::sc_time_stamp().to_seconds();
  record.inputTokens = a.inputTokens;
  record.outputTokens = a.outputTokens;
  record.measured = a.id >= m_firstMeasured && a.id <= m_lastMeasured;
  record.tokenTimes.reserve(a.outputTokens);
  m_records.push_back(std::move(record));
  Replica& r = *m_replicas[static_cast<std::size_t>(replica)];
  // The prefill pool only produces the first token; the rest is decoded after the KV moved.
  r.scheduler->submit(ServingRequest{a.id, a.inputTokens, r.role == Role::kPrefill ? 1 : a.outputTokens, false});
  r.work.notify(sc_core::SC_ZERO_TIME);
  m_anyWork.notify(sc_core::SC_ZERO_TIME);
}

void ServingEngine::openLoopSource() {
  while (!m_completed) {
    const std::optional<Arrival> a = m_load.nextOpen();
    if (!a) return;
    const sc_core::sc_time at(a->time, sc_core::SC_SEC);
    if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
    send(*a);
  }
}

void ServingEngine::route(Replica& r, uint64_t tokens) {
  const std::size_t experts = static_cast<std::size_t>(m_model.routedExperts);
  for (int l = 0; l < m_model.layers; ++l) {
    std::vector<uint64_t>& counts = r.expertTokens[static_cast<std::size_t>(l)];
    if (!m_model.isMoeLayer(l)) continue;
    counts.assign(experts, 0);
    r.routing->route(static_cast<uint32_t>(l), tokens, counts);
    const double mean =
        static_cast<double>(tokens * static_cast<uint64_t>(m_model.expertsPerToken)) / static_cast<double>(experts);
    r.stats.expertImbalanceSum += static_cast<double>(*std::max_element(counts.begin(), counts.end())) / mean;
    if (m_expertsAcross) {
      // Counted over all replicas' tokens by the lockstep loop.
    } else if (!r.expertOwner.empty()) {
      std::vector<uint64_t> perChip(static_cast<std::size_t>(m_tp), 0);
      for (std::size_t e = 0; e < experts; ++e) perChip[static_cast<std::size_t>(r.expertOwner[e])] += counts[e];
      r.stats.chipImbalanceSum += static_cast<double>(*std::max_element(perChip.begin(), perChip.end())) /
                                  (mean * static_cast<double>(experts) / m_tp);
    } else {
      r.stats.chipImbalanceSum += 1.0;  // every chip computes a slice of every expert
    }
    ++r.stats.routedLayers;
  }
}

void ServingEngine::replicaLoop(int index) {
  Replica& r = *m_replicas[static_cast<std::size_t>(index)];
  const sc_core::sc_time overhead(
      m_scenario.scheduler.stepOverheadS + (m_scenario.stack ? m_scenario.stack->stepOverheadS : 0.0), sc_core::SC_SEC);
  while (!m_completed) {
    StepBatch batch = r.scheduler->next();
    if (batch.sequences.empty() && r.scheduler->swaps().empty()) {
      sc_core::wait(r.work);
      continue;
    }
    if (overhead > sc_core::SC_ZERO_TIME) sc_core::wait(overhead);
    if (!runSwaps({&r})) return;  // the step's KV block copies come first
    if (batch.sequences.empty()) continue;
    const uint64_t tokens = batch.tokens();
    if (r.routing) {
      route(r, tokens);
      batch.expertTokens = &r.expertTokens;
    }
    std::vector<std::shared_ptr<const StepPlan>> plans = planStep(r, batch);
    const double stall = preparePhase(r, batch, plans);
    if (stall > 0.0) sc_core::wait(sc_core::sc_time(stall, sc_core::SC_SEC));
    r.phase->started();
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    postStep(r, std::move(plans));
    if (!awaitStep({&r})) return;
    finishStep(r, batch, start);
  }
}

std::vector<std::shared_ptr<const StepPlan>> ServingEngine::planStep(Replica& r, const StepBatch& batch) {
  std::vector<std::shared_ptr<const StepPlan>> plans(r.drivers.size());
  for (std::size_t c = 0; c < r.drivers.size(); ++c) {
    // Mirrors share their leader's plan (plansLike: their own would be equal).
    plans[c] = r.mirrors[c] ? plans[r.leaderOf[c]] : std::make_shared<const StepPlan>(r.planners[c]->plan(batch));
  }
  return plans;
}

void ServingEngine::postStep(Replica& r, std::vector<std::shared_ptr<const StepPlan>> plans) {
  for (std::size_t c = 0; c < r.drivers.size(); ++c) {
    const StepDriver* leader = r.mirrors[c] ? r.drivers[r.leaderOf[c]].get() : nullptr;
    r.stats.bytes += plans[c]->bytesMoved;
    r.stats.flops += plans[c]->flops;
    r.stats.collectiveBytes += plans[c]->collectiveBytes;
    r.stats.remoteKvBytes += plans[c]->remoteKvBytes;
    r.stats.hostKvBytes += plans[c]->hostKvBytes;
    r.drivers[c]->post(std::move(plans[c]), leader);
  }
}

bool ServingEngine::awaitStep(const std::vector<Replica*>& replicas) {
  for (const Replica* r : replicas) {
    for (const auto& driver : r->drivers) {
      while (!driver->idle() && driver->error().empty()) sc_core::wait(driver->stepDone());
    }
  }
  if (error().empty()) return true;
  m_error = error();
  sc_core::sc_stop();  // a failed step leaves its group's other members waiting: stop here
  return false;
}

void ServingEngine::finishStep(Replica& r, const StepBatch& batch, const sc_core::sc_time& start) {
  {
    const double step = (sc_core::sc_time_stamp() - start).to_seconds();
    for (std::size_t c = 0; c < r.drivers.size(); ++c) {
      const StepPlan& plan = r.drivers[c]->plan();
      const hw::ChipConfig& chip = r.planners[c]->chip();
      const double bound = workload::rooflineBoundS(plan, chip);
      if (bound <= 0) continue;
      const double ratio = step / bound;
      if (m_tightestRatio == 0.0 || ratio < m_tightestRatio) m_tightestRatio = ratio;
      if (workload::beatsRoofline(step, bound)) ++m_rooflineViolations;
    }
    // Step statistics.
    ReplicaStats& s = r.stats;
    const StepDriver& lead = *r.drivers.front();
    for (std::size_t i = 0; i < lead.plan().ops.size(); ++i) {
      const PlannedOp& op = lead.plan().ops[i];
      const StepDriver::OpTiming& t = lead.timings()[i];
      OpTotals& o = s.perOp[op.name];
      ++o.tiles;
      o.bytes += static_cast<double>(op.bytes());
      o.flops += op.flops();
      o.vectorOps += op.vectorOps;
      o.computeS += (t.computeEnd - t.computeStart).to_seconds();
      o.stallS += (t.computeStart - (i > 0 ? lead.timings()[i - 1].collectiveEnd : start)).to_seconds();
      o.collectiveS += (t.collectiveEnd - t.computeEnd).to_seconds();
    }
    s.peakKvBlocks = r.scheduler->kv().peakBlocks(hw::KvTier::kLocalHbm);
    s.kvBlocks = r.scheduler->kv().capacityBlocks(hw::KvTier::kLocalHbm);
    s.peakRemoteKvBlocks = r.scheduler->kv().peakBlocks(hw::KvTier::kRemoteHbm);
    s.remoteKvBlocks = r.scheduler->kv().capacityBlocks(hw::KvTier::kRemoteHbm);
    s.peakHostKvBlocks = r.scheduler->kv().peakBlocks(hw::KvTier::kHost);
    double stepFlops = 0.0, stepBytes = 0.0;
    for (const auto& driver : r.drivers) {
      stepFlops += driver->plan().flops;
      stepBytes += driver->plan().bytesMoved;
    }
    r.phase->finished(stepFlops, stepBytes, batch.tokens(), lead.plan().computePrecision);
    if (batch.sequences.empty()) {
      // Experts across replicas: no request of its own, its chip served the others' tokens.
      ++s.idleSteps;
      s.idleS += step;
      return;
    }
    ++s.steps;
    uint64_t prefill = 0, decode = 0;
    for (const StepSequence& q : batch.sequences) (q.tokens == 1 && q.context > 0 ? decode : prefill) += q.tokens;
    s.sequences += batch.sequences.size();
    s.prefillTokens += prefill;
    s.decodeTokens += decode;
    s.busyS += step;
    if (decode == 0) {
      ++s.prefillSteps;
      s.prefillOnlyS += step;
    } else if (prefill == 0) {
      ++s.decodeSteps;
      s.decodeOnlyS += step;
    } else {
      ++s.mixedSteps;
      s.mixedS += step;
    }
    onStepDone(r, r.scheduler->complete());
    s.preemptions = r.scheduler->preemptions();
    s.recomputes = r.scheduler->recomputes();
    s.swapOuts = r.scheduler->swapOuts();
    s.swapIns = r.scheduler->swapIns();
  }
}

void ServingEngine::onStepDone(Replica& r, const std::vector<StepOutcome>& outcomes) {
  const double now = sc_core::sc_time_stamp().to_seconds();
  for (const StepOutcome& o : outcomes) {
    RequestRecord& record = m_records[o.request - 1];
    if (o.producedToken) {
      if (record.tokenTimes.empty()) record.firstToken = now;
      record.tokenTimes.push_back(now);
    }
    if (!o.finished) continue;
    if (r.role == Role::kPrefill && record.tokenTimes.size() < record.outputTokens) {
      // Prefilled: its KV goes to a decode replica, which produces the rest.
      const int to = m_decoders[static_cast<std::size_t>(m_nextDecoder)];
      m_nextDecoder = (m_nextDecoder + 1) % static_cast<int>(m_decoders.size());
      const int from = r.index;
      const uint64_t id = o.request;
      sc_core::sc_spawn([this, id, from, to] { transferKv(id, from, to); }, sc_core::sc_gen_unique_name("kv"));
      continue;
    }
    record.finish = now;
    record.preemptions = o.preemptions;
    if (record.measured && m_measuredLeft > 0 && --m_measuredLeft == 0) {
      // The last measured request: nothing new is sent; steps and transfers in flight finish and
      // every thread leaves its loop (no sc_stop: threads stopped mid-wait would never unwind
      // their stacks), so the simulation ends when nothing is left to do.
      m_completed = true;
    }
    if (record.user >= 0 && !m_completed) send(m_load.next(record.user, now));
  }
}

}  // namespace scoville::runtime
