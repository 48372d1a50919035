#include "runtime/ServingEngine.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/ConfigError.h"
#include "runtime/LockstepRunner.h"
#include "runtime/ReplicaBuilder.h"

namespace scoville::runtime {

using namespace workload;  // the model, scenario and load types this file joins

ServingEngine::ServingEngine(const sc_core::sc_module_name& name, platform::Platform& platform,
                             const ModelConfig& model, const ScenarioConfig& scenario, uint64_t seed,
                             tlm::TimingMode mode, const ScenarioFiles& files, bool mirror, bool replicaClasses,
                             int samplePeriod)
    : sc_core::sc_module(name), m_model(model), m_scenario(scenario) {
  LoadGenerator full(scenario, seed, files.loadTrace);
  if (scenario.load.impl == LoadKind::kTrace &&
      full.traceRequests() < static_cast<std::size_t>(scenario.warmup() + scenario.requests)) {
    throw config::ConfigError(
        config::ErrorKind::kInvalidConfig, files.loadTrace,
        fmt::format("the load trace holds {} requests but scenario '{}' warms up with {} and measures {}",
                    full.traceRequests(), scenario.name, scenario.warmup(), scenario.requests));
  }
  // The modules are built here, in the engine's scope: their names are children of the engine's.
  const uint64_t longest = full.maxInputTokens() + full.maxOutputTokens() - 1;  // the last token is never fed
  m_set = ReplicaBuilder(platform, m_model, m_scenario, files, seed, mode, mirror).build(longest);
  auto warmup = static_cast<uint64_t>(scenario.warmup());
  auto measured = static_cast<uint64_t>(scenario.requests);
  std::vector<int> entries = m_set->entries();
  if (replicaClasses) {
    m_exactReason = replicaClassesBlocker(platform.config(), scenario);
    if (m_exactReason.empty()) {
      workload::ReplicaClassPlan plan = planReplicaClasses(replicas(), scenario.load.concurrency, warmup, measured);
      if (plan.mirrors()) {
        ScenarioConfig reduced = scenario;
        reduced.load.concurrency = plan.users;
        reduced.warmupRequests = static_cast<int>(plan.warmup);
        reduced.requests = static_cast<int>(plan.measured);
        m_load = std::make_unique<LoadGenerator>(reduced, seed, files.loadTrace);
        warmup = plan.warmup;
        measured = plan.measured;
        entries = plan.entries();
        m_set->replicaLeader = plan.leaderOf;
        m_classes = std::move(plan);
      } else {
        m_exactReason = "no two replicas serve the same number of users";
      }
    }
  }
  if (!m_load) m_load = std::make_unique<LoadGenerator>(std::move(full));
  m_status = std::make_unique<RunStatus>(*m_set);
  m_router = std::make_unique<RequestRouter>(std::move(entries), m_set->decoders(), warmup, measured);
  if (m_classes) m_router->setMirrors(m_classes->leaderOf);
  m_statistics = std::make_unique<StepStatistics>(m_model, *m_set);
  FrontEndPolicy frontEnd{warmup, scenario.warmupBarrier, 0.0, 0.0};
  if (scenario.stack) {
    frontEnd.requestOverheadS = scenario.stack->requestOverheadS;
    frontEnd.requestOverheadPerTokenS = scenario.stack->requestOverheadPerTokenS;
  }
  m_frontEnd = std::make_unique<ServingFrontEnd>(*m_set, *m_load, *m_router, *m_status, frontEnd);
  const RunnerContext context{*m_set, m_model, m_scenario, *m_frontEnd, *m_statistics, *m_status};
  if (m_set->expertsAcross) {
    if (samplePeriod >= 2) m_samplingBlocker = "the experts are spread over the replicas, which step together";
    m_runners.push_back(std::make_unique<LockstepRunner>(context));
    StepRunner* runner = m_runners.back().get();
    sc_core::sc_spawn([runner] { runner->run(); }, "replicas");
  } else {
    if (samplePeriod >= 2) m_samplingBlocker = samplingBlockerOf();
    if (samplePeriod >= 2 && m_samplingBlocker.empty() && scenario.draftTokens() > 0) {
      m_samplingBlocker = "speculative decoding accepts a different number of tokens each step";
    }
    const bool sample = samplePeriod >= 2 && m_samplingBlocker.empty();
    for (int d = 0; d < replicas(); ++d) {
      auto replicaRunner = std::make_unique<ReplicaRunner>(context, d);
      // A mirroring replica (replica classes) never steps: only the simulated ones sample.
      if (sample && m_set->source(d) == d) replicaRunner->sample(samplePeriod, platform);
      m_runners.push_back(std::move(replicaRunner));
      StepRunner* runner = m_runners.back().get();
      sc_core::sc_spawn([runner] { runner->run(); }, fmt::format("replica{}", d).c_str());
    }
  }
  m_frontEnd->start();
}

ServingEngine::~ServingEngine() = default;

std::vector<double> ServingEngine::switchWeights() const {
  std::vector<double> weight;
  if (!m_classes) return weight;
  for (const workload::ReplicaClass& c : m_classes->classes) {
    for (const int chip : m_set->at(c.representative).chips) {
      const auto i = static_cast<std::size_t>(chip);
      if (weight.size() <= i) weight.resize(i + 1, 1.0);
      weight[i] = 1.0 + static_cast<double>(c.followers.size());
    }
  }
  return weight;
}

std::optional<SamplingSummary> ServingEngine::sampling() const {
  std::optional<SamplingSummary> total;
  for (const auto& runner : m_runners) {
    const SamplingSummary* s = runner->sampling();
    if (s == nullptr) continue;
    if (!total) total.emplace();
    total->add(*s);
  }
  return total;
}

std::string ServingEngine::samplingBlockerOf() const {
  if (m_set->kvMode->offChip()) return "off-chip KV placement: the fetches' links are shared with other replicas";
  return "";
}

std::string ServingEngine::replicaClassesBlocker(const platform::PlatformConfig& platform,
                                                 const ScenarioConfig& scenario) const {
  if (replicas() < 2) return "one replica";
  if (scenario.load.impl != LoadKind::kClosedLoop) return "the load is not a closed loop (users are not pinned)";
  if (!m_set->decoders().empty()) return "disaggregation couples the pools";
  if (m_set->expertsAcross) return "the experts are spread over the replicas (coupled by the all-to-all)";
  if (m_set->kvMode->offChip()) return "off-chip KV placement shares other chips' memory and links";
  if (platform.placement.kvCache.preemption == hw::KvPreemption::kSwap) return "swap preemption shares the host links";
  const bool talks = m_set->tp * m_set->pp > 1;
  // On a leaf-spine fabric a replica whose chips share a leaf talks over its own chips' ports only
  // (the leaf is output-queued, one output per chip port): it shares no link with another replica.
  const auto onOneLeaf = [&](const Replica& r) {
    if (platform.network.topology != platform::Topology::kLeafSpine || !platform.network.leafSpine) return false;
    const int perLeaf = platform.network.leafSpine->chipsPerLeaf;
    return std::all_of(r.chips.begin(), r.chips.end(), [&](int c) { return c / perLeaf == r.chips.front() / perLeaf; });
  };
  const bool ownLeaves = std::all_of(m_set->replicas.begin(), m_set->replicas.end(),
                                     [&](const std::unique_ptr<Replica>& r) { return onOneLeaf(*r); });
  if (talks && platform.network.topology != platform::Topology::kSwitched && !ownLeaves) {
    return fmt::format("replicas may share links of the {} fabric", platform::topologyName(platform.network.topology));
  }
  // Alike: every replica's chip of each rank has the same type.
  std::vector<std::string> types;
  for (const platform::ChipGroup& g : platform.chips)
    types.insert(types.end(), static_cast<std::size_t>(g.count), g.type);
  const Replica& first = m_set->at(0);
  for (const auto& r : m_set->replicas) {
    for (std::size_t c = 0; c < r->chips.size(); ++c) {
      if (types.at(static_cast<std::size_t>(r->chips[c])) != types.at(static_cast<std::size_t>(first.chips[c]))) {
        return fmt::format("replicas 0 and {} have different chip types", r->index);
      }
    }
  }
  return "";
}

std::vector<const CollectiveGroup*> ServingEngine::groups(int replica) const {
  std::vector<const CollectiveGroup*> out;
  for (const auto& group : m_set->at(replica).groups) out.push_back(group.get());
  return out;
}

std::vector<const PipelineLink*> ServingEngine::stageLinks(int replica) const {
  std::vector<const PipelineLink*> out;
  for (const auto& link : m_set->at(replica).links) out.push_back(link.get());
  return out;
}

}  // namespace scoville::runtime
