#include "runtime/ServingEngine.h"

#include <fmt/format.h>

#include "runtime/LockstepRunner.h"
#include "runtime/ReplicaBuilder.h"
#include "config/ConfigError.h"

namespace scoville::runtime {

using namespace workload;  // the model, scenario and load types this file joins

ServingEngine::ServingEngine(const sc_core::sc_module_name& name, platform::Platform& platform,
                             const ModelConfig& model, const ScenarioConfig& scenario, uint64_t seed,
                             tlm::TimingMode mode, const ScenarioFiles& files, bool mirror)
    : sc_core::sc_module(name), m_model(model), m_scenario(scenario), m_load(scenario, seed, files.loadTrace) {
  if (scenario.load.impl == LoadKind::kTrace &&
      m_load.traceRequests() < static_cast<std::size_t>(scenario.warmup() + scenario.requests)) {
    throw config::ConfigError(
        config::ErrorKind::kInvalidConfig, files.loadTrace,
        fmt::format("the load trace holds {} requests but scenario '{}' warms up with {} and measures {}",
                    m_load.traceRequests(), scenario.name, scenario.warmup(), scenario.requests));
  }
  // The modules are built here, in the engine's scope: their names are children of the engine's.
  const uint64_t longest = m_load.maxInputTokens() + m_load.maxOutputTokens() - 1;  // the last token is never fed
  m_set = ReplicaBuilder(platform, m_model, m_scenario, files, seed, mode, mirror).build(longest);
  m_status = std::make_unique<RunStatus>(*m_set);
  m_router =
      std::make_unique<RequestRouter>(m_set->entries(), m_set->decoders(), static_cast<uint64_t>(scenario.warmup()),
                                      static_cast<uint64_t>(scenario.requests));
  m_statistics = std::make_unique<StepStatistics>(m_model, *m_set);
  m_frontEnd = std::make_unique<ServingFrontEnd>(*m_set, m_load, *m_router, *m_status);
  const RunnerContext context{*m_set, m_model, m_scenario, *m_frontEnd, *m_statistics, *m_status};
  if (m_set->expertsAcross) {
    m_runners.push_back(std::make_unique<LockstepRunner>(context));
    StepRunner* runner = m_runners.back().get();
    sc_core::sc_spawn([runner] { runner->run(); }, "replicas");
  } else {
    for (int d = 0; d < replicas(); ++d) {
      m_runners.push_back(std::make_unique<ReplicaRunner>(context, d));
      StepRunner* runner = m_runners.back().get();
      sc_core::sc_spawn([runner] { runner->run(); }, fmt::format("replica{}", d).c_str());
    }
  }
  m_frontEnd->start();
}

ServingEngine::~ServingEngine() = default;

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
