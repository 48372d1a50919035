#include "runtime/StepRunner.h"

#include <algorithm>
#include <memory>

#include "workloads/Speculative.h"

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file drives

sc_core::sc_time StepRunner::stepOverhead() const {
  const ScenarioConfig& scenario = m_run.scenario;
  return sc_core::sc_time(scenario.scheduler.stepOverheadS + (scenario.stack ? scenario.stack->stepOverheadS : 0.0),
                          sc_core::SC_SEC);
}

void ReplicaRunner::run() {
  Replica& r = m_run.set.at(m_replica);
  const sc_core::sc_time overhead = stepOverhead();
  while (!m_run.frontEnd.completed()) {
    StepBatch batch = r.scheduler->next();
    if (batch.sequences.empty() && r.scheduler->swaps().empty()) {
      // Asynchronous scheduling: with nothing to run, the engine composes with what arrived at once.
      if (r.scheduler->arriving() > 0) {
        r.scheduler->admitArrivals();
        continue;
      }
      sc_core::wait(r.work);
      continue;
    }
    if (overhead > sc_core::SC_ZERO_TIME) sc_core::wait(overhead);
    if (!runSwaps({&r})) return;  // the step's KV block copies come first
    // Asynchronous scheduling: the next step is composed as this one launches, with the requests
    // that have arrived by now (a no-op otherwise).
    r.scheduler->admitArrivals();
    if (batch.sequences.empty()) continue;
    const bool replay = m_sampler && m_sampler->replays(batch);
    if (r.routing) {
      route(r, batch.tokens());  // replayed too: the routing statistics and its random stream
      batch.expertTokens = &r.expertTokens;
    }
    if (replay) {
      replayStep(r, batch);
      continue;
    }
    std::vector<std::shared_ptr<const StepPlan>> plans = planStep(r, batch);
    const sc_core::sc_time start = beginStep(r, batch, plans);
    if (m_sampler) m_sampler->detailedStarted(plans);
    postStep(r, std::move(plans));
    if (!awaitStep({&r})) return;
    if (m_sampler) m_sampler->detailedFinished();
    finishStep(r, batch, start);
  }
}

void ReplicaRunner::sample(int period, platform::Platform& platform) {
  m_sampler = std::make_unique<StepSampler>(period, m_run.set.at(m_replica), platform);
}

sc_core::sc_time ReplicaRunner::beginStep(Replica& r, const StepBatch& batch,
                                          const std::vector<std::shared_ptr<const StepPlan>>& plans) {
  const double stall = preparePhase(r, batch, plans);
  if (stall > 0.0) sc_core::wait(sc_core::sc_time(stall, sc_core::SC_SEC));
  r.phase->started();
  return sc_core::sc_time_stamp();
}

void ReplicaRunner::replayStep(Replica& r, const StepBatch& batch) {
  const std::vector<std::shared_ptr<const StepPlan>>& plans = m_sampler->plans();
  const sc_core::sc_time start = beginStep(r, batch, plans);
  countStep(r, plans);  // as postStep counts a step
  sc_core::wait(m_sampler->stepTime());
  m_sampler->replayed(start);
  finishStep(r, batch, start, &m_sampler->recordedStart());
}

bool StepRunner::runSwaps(const std::vector<Replica*>& replicas) {
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  auto pending = std::make_shared<int>(0);
  auto done = std::make_shared<sc_core::sc_event>();
  std::vector<Replica*> waiting;
  for (Replica* r : replicas) {
    const std::vector<KvSwap>& swaps = r->scheduler->swaps();
    if (swaps.empty()) continue;
    waiting.push_back(r);
    for (const KvSwap& swap : swaps) {
      // Every chip's slice counts, mirrored or not, so that mirroring never shows in the results.
      for (const auto& swapper : r->swappers) {
        double& bytes = swap.cache ? (swap.toHost ? r->stats.cacheOffloadBytes : r->stats.cacheRestoreBytes)
                                   : (swap.toHost ? r->stats.swapOutBytes : r->stats.swapInBytes);
        bytes += static_cast<double>(swapper->bytesFor(swap.moves.size()));
      }
    }
    // Mirrors would copy exactly what their leader copies, in the same time: only leaders copy.
    for (std::size_t c = 0; c < r->swappers.size(); ++c) {
      if (r->mirrors[c]) continue;
      ++*pending;
      KvSwapper* swapper = r->swappers[c].get();
      const hw::KvBlockAllocator* kv = &r->scheduler->kv();
      const std::vector<KvSwap>* list = &swaps;
      sc_core::sc_spawn(
          [swapper, kv, list, pending, done] {
            for (const KvSwap& swap : *list) {
              if (!swapper->copy(*kv, swap)) break;
            }
            if (--*pending == 0) done->notify();
          },
          sc_core::sc_gen_unique_name("kv_swap"));
    }
  }
  if (*pending > 0) sc_core::wait(*done);
  for (Replica* r : waiting) {
    for (const auto& swapper : r->swappers) {
      if (!swapper->error().empty()) m_run.status.fail(swapper->error());
    }
    r->stats.swapS += (sc_core::sc_time_stamp() - start).to_seconds();
  }
  if (!m_run.status.failed()) return true;
  sc_core::sc_stop();
  return false;
}

namespace {

/// Routes `tokens` through every mixture-of-experts layer of `model` into out[layer] (one row per
/// layer; dense layers' rows are left as they are), layer after layer from `routing`'s stream.
void routeLayers(RoutingModel& routing, const ModelConfig& model, uint64_t tokens,
                 std::vector<std::vector<uint64_t>>& out) {
  out.resize(static_cast<std::size_t>(model.layers));
  for (int l = 0; l < model.layers; ++l) {
    if (!model.isMoeLayer(l)) continue;
    std::vector<uint64_t>& counts = out[static_cast<std::size_t>(l)];
    counts.assign(static_cast<std::size_t>(model.routedExperts), 0);
    routing.route(static_cast<uint32_t>(l), tokens, counts);
  }
}

}  // namespace

void StepRunner::route(Replica& r, uint64_t tokens) {
  const ModelConfig& model = m_run.model;
  routeLayers(*r.routing, model, tokens, r.expertTokens);
  for (int l = 0; l < model.layers; ++l) {
    if (model.isMoeLayer(l)) m_run.statistics.layerRouted(r, r.expertTokens[static_cast<std::size_t>(l)], tokens);
  }
}

std::vector<StepBatch> StepRunner::draftPassesOf(Replica& r, const StepBatch& batch) {
  std::vector<StepBatch> passes = draftPasses(batch);
  if (!r.draftRouting) return passes;
  // Every rank plans the same passes: each pass's tokens are routed once through the draft's
  // expert layers.
  const ModelConfig& draft = r.draftPlanners.front()->model();
  r.draftExpertTokens.resize(passes.size());
  for (std::size_t i = 0; i < passes.size(); ++i) {
    routeLayers(*r.draftRouting, draft, passes[i].tokens(), r.draftExpertTokens[i]);
    passes[i].expertTokens = &r.draftExpertTokens[i];
  }
  return passes;
}

std::vector<std::shared_ptr<const StepPlan>> StepRunner::planStep(Replica& r, const StepBatch& batch) {
  std::vector<std::shared_ptr<const StepPlan>> plans(r.drivers.size());
  // Speculative decoding: the draft's passes follow the verification in the same step.
  const std::vector<StepBatch> passes = r.draftPlanners.empty() ? std::vector<StepBatch>{} : draftPassesOf(r, batch);
  for (std::size_t c = 0; c < r.drivers.size(); ++c) {
    // Mirrors share their leader's plan (plansLike: their own would be equal).
    if (r.mirrors[c]) {
      plans[c] = plans[r.leaderOf[c]];
      continue;
    }
    StepPlan plan = r.planners[c]->plan(batch);
    for (const StepBatch& pass : passes) plan.appendDraft(r.draftPlanners[c]->plan(pass));
    plans[c] = std::make_shared<const StepPlan>(std::move(plan));
  }
  return plans;
}

double StepRunner::preparePhase(Replica& r, const StepBatch& batch,
                                const std::vector<std::shared_ptr<const StepPlan>>& plans) {
  // Decodes only (one token each on a cached context) or not: the same split as the step statistics.
  const bool prefill = std::any_of(batch.sequences.begin(), batch.sequences.end(),
                                   [](const StepSequence& q) { return !(q.decodes() && q.context > 0); });
  std::vector<const StepPlan*> simulated;
  for (std::size_t c = 0; c < plans.size(); ++c) {
    if (!r.mirrors[c]) simulated.push_back(plans[c].get());
  }
  return r.phase->prepare(prefill ? StepPhase::kPrefill : StepPhase::kDecode, simulated);
}

void StepRunner::countStep(Replica& r, const std::vector<std::shared_ptr<const StepPlan>>& plans) {
  for (const auto& plan : plans) {
    r.stats.bytes += plan->bytesMoved;
    r.stats.flops += plan->flops;
    r.stats.collectiveBytes += plan->collectiveBytes;
    r.stats.remoteKvBytes += plan->remoteKvBytes;
    r.stats.hostKvBytes += plan->hostKvBytes;
  }
}

void StepRunner::postStep(Replica& r, std::vector<std::shared_ptr<const StepPlan>> plans) {
  countStep(r, plans);
  for (std::size_t c = 0; c < r.drivers.size(); ++c) {
    const StepDriver* leader = r.mirrors[c] ? r.drivers[r.leaderOf[c]].get() : nullptr;
    r.drivers[c]->post(std::move(plans[c]), leader);
  }
}

bool StepRunner::awaitStep(const std::vector<Replica*>& replicas) {
  for (const Replica* r : replicas) {
    for (const auto& driver : r->drivers) {
      while (!driver->idle() && driver->error().empty()) sc_core::wait(driver->stepDone());
    }
  }
  return m_run.status.carryOn();
}

void StepRunner::finishStep(Replica& r, const StepBatch& batch, const sc_core::sc_time& start,
                            const sc_core::sc_time* origin) {
  m_run.statistics.stepDone(r, batch, start, origin);
  double stepFlops = 0.0, stepBytes = 0.0;
  for (const auto& driver : r.drivers) {
    stepFlops += driver->plan().flops;
    stepBytes += driver->plan().bytesMoved;
  }
  const StepDriver& lead = *r.drivers.front();
  if (const std::size_t draftOps = lead.plan().draftOps; draftOps > 0 && origin == nullptr) {
    // The draft's time: from the verification's last op (and its collective) to the step's end.
    const std::vector<StepDriver::OpTiming>& t = lead.timings();
    const std::size_t verified = t.size() - draftOps;
    const sc_core::sc_time from = verified > 0 ? t[verified - 1].collectiveEnd : start;
    r.stats.draftS += (sc_core::sc_time_stamp() - from).to_seconds();
    r.stats.draftPasses += 1;
  }
  r.phase->finished(stepFlops, stepBytes, batch.tokens(), lead.plan().computePrecision);
  if (batch.sequences.empty()) return;  // experts across replicas: an idle replica's step
  m_run.frontEnd.stepDone(r, r.scheduler->complete());
  m_run.statistics.schedulerUpdated(r);
}

}  // namespace scoville::runtime
