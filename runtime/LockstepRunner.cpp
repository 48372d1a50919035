#include "runtime/LockstepRunner.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file drives

void LockstepRunner::run() {
  ReplicaSet& set = m_run.set;
  const std::size_t members = set.replicas.size();
  const auto experts = static_cast<std::size_t>(m_run.model.routedExperts);
  const auto layers = static_cast<std::size_t>(m_run.model.layers);
  const sc_core::sc_time overhead = stepOverhead();
  std::vector<Replica*> all;
  for (const auto& r : set.replicas) all.push_back(r.get());
  std::vector<StepBatch> batches(members);
  // Per member: tokens its experts receive [layer][expert], bytes it dispatches and gets back [layer][member].
  std::vector<std::vector<std::vector<uint64_t>>> received(members), dispatch(members), combine(members);
  while (!m_run.frontEnd.completed()) {
    bool any = false;
    bool copies = false;
    for (std::size_t d = 0; d < members; ++d) {
      batches[d] = all[d]->scheduler->next();
      any = any || !batches[d].sequences.empty();
      copies = copies || !all[d]->scheduler->swaps().empty();
    }
    if (!any && !copies) {
      // Asynchronous scheduling: with nothing to run, the members compose with what arrived at once.
      bool arriving = false;
      for (Replica* r : all) {
        arriving = arriving || r->scheduler->arriving() > 0;
        r->scheduler->admitArrivals();
      }
      if (!arriving) sc_core::wait(m_run.frontEnd.anyWork());
      continue;
    }
    if (overhead > sc_core::SC_ZERO_TIME) sc_core::wait(overhead);
    if (!runSwaps(all)) return;  // the step's KV block copies come first
    // Asynchronous scheduling: the next step is composed as this one launches (a no-op otherwise).
    for (Replica* r : all) r->scheduler->admitArrivals();
    if (!any) continue;
    for (std::size_t d = 0; d < members; ++d) {
      received[d].assign(layers, {});
      dispatch[d].assign(layers, std::vector<uint64_t>(members, 0));
      combine[d].assign(layers, std::vector<uint64_t>(members, 0));
      Replica& r = *all[d];
      const uint64_t tokens = batches[d].tokens();
      if (tokens > 0) {
        route(r, tokens);
      } else {
        for (std::size_t l = 0; l < layers; ++l) {
          if (m_run.model.isMoeLayer(static_cast<int>(l))) r.expertTokens[l].assign(experts, 0);
        }
      }
    }
    exchange(received, dispatch, combine);
    // Every replica's plan and phase setting first; the step starts when the slowest change is done.
    std::vector<std::vector<std::shared_ptr<const StepPlan>>> plans(members);
    double stall = 0.0;
    for (std::size_t d = 0; d < members; ++d) {
      batches[d].expertTokens = &received[d];
      batches[d].dispatchBytes = &dispatch[d];
      batches[d].combineBytes = &combine[d];
      plans[d] = planStep(*all[d], batches[d]);
      stall = std::max(stall, preparePhase(*all[d], batches[d], plans[d]));
    }
    if (stall > 0.0) sc_core::wait(sc_core::sc_time(stall, sc_core::SC_SEC));
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    for (std::size_t d = 0; d < members; ++d) {
      all[d]->phase->started();
      postStep(*all[d], std::move(plans[d]));
    }
    if (!awaitStep(all)) return;
    for (std::size_t d = 0; d < members; ++d) finishStep(*all[d], batches[d], start);
  }
}

void LockstepRunner::exchange(std::vector<std::vector<std::vector<uint64_t>>>& received,
                              std::vector<std::vector<std::vector<uint64_t>>>& dispatch,
                              std::vector<std::vector<std::vector<uint64_t>>>& combine) {
  const ModelConfig& model = m_run.model;
  const ReplicaSet& set = m_run.set;
  const std::size_t members = set.replicas.size();
  const auto experts = static_cast<std::size_t>(model.routedExperts);
  const uint64_t tokenBytes = static_cast<uint64_t>(
      std::ceil(static_cast<double>(model.hidden) * tlm::bitsPerElement(model.computePrecision) / 8.0));
  const std::vector<int>& owner = set.replicas.front()->expertOwner;
  for (std::size_t l = 0; l < static_cast<std::size_t>(model.layers); ++l) {
    if (!model.isMoeLayer(static_cast<int>(l))) continue;
    std::vector<uint64_t> perChip(members, 0);
    for (std::size_t d = 0; d < members; ++d) received[d][l].assign(experts, 0);
    for (std::size_t src = 0; src < members; ++src) {
      const std::vector<uint64_t>& routed = set.replicas[src]->expertTokens[l];
      for (std::size_t e = 0; e < experts; ++e) {
        const auto dst = static_cast<std::size_t>(owner[e]);
        received[dst][l][e] += routed[e];
        perChip[dst] += routed[e];
        if (dst != src) {
          dispatch[src][l][dst] += routed[e] * tokenBytes;
          combine[dst][l][src] += routed[e] * tokenBytes;
        }
      }
    }
    m_run.statistics.chipsLoaded(perChip);
  }
}

}  // namespace scoville::runtime
