// ServingEngine's exchanges between replicas: the lockstep loop of attention data parallelism
// with the experts spread over the replicas (all-to-all dispatch and combine per MoE layer), and
// the prompt KV hand-off from the prefill to the decode pool under disaggregation.
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <memory>

#include "runtime/ServingEngine.h"

namespace scoville::runtime {

using namespace workload;  // the planner, scheduler and configuration types this file drives

void ServingEngine::lockstepLoop() {
  const std::size_t members = m_replicas.size();
  const auto experts = static_cast<std::size_t>(m_model.routedExperts);
  const auto layers = static_cast<std::size_t>(m_model.layers);
  const uint64_t tokenBytes = static_cast<uint64_t>(
      std::ceil(static_cast<double>(m_model.hidden) * tlm::bitsPerElement(m_model.computePrecision) / 8.0));
  const std::vector<int>& owner = m_replicas.front()->expertOwner;
  const sc_core::sc_time overhead(
      m_scenario.scheduler.stepOverheadS + (m_scenario.stack ? m_scenario.stack->stepOverheadS : 0.0), sc_core::SC_SEC);
  std::vector<StepBatch> batches(members);
  // Per member: tokens its experts receive [layer][expert], bytes it dispatches and gets back [layer][member].
  std::vector<std::vector<std::vector<uint64_t>>> received(members), dispatch(members), combine(members);
  while (!m_completed) {
    bool any = false;
    bool copies = false;
    for (std::size_t d = 0; d < members; ++d) {
      batches[d] = m_replicas[d]->scheduler->next();
      any = any || !batches[d].sequences.empty();
      copies = copies || !m_replicas[d]->scheduler->swaps().empty();
    }
    if (!any && !copies) {
      sc_core::wait(m_anyWork);
      continue;
    }
    if (overhead > sc_core::SC_ZERO_TIME) sc_core::wait(overhead);
    std::vector<Replica*> all;
    for (const auto& r : m_replicas) all.push_back(r.get());
    if (!runSwaps(all)) return;  // the step's KV block copies come first
    if (!any) continue;
    for (std::size_t d = 0; d < members; ++d) {
      received[d].assign(layers, {});
      dispatch[d].assign(layers, std::vector<uint64_t>(members, 0));
      combine[d].assign(layers, std::vector<uint64_t>(members, 0));
      Replica& r = *m_replicas[d];
      const uint64_t tokens = batches[d].tokens();
      if (tokens > 0) {
        route(r, tokens);
      } else {
        for (std::size_t l = 0; l < layers; ++l) {
          if (m_model.isMoeLayer(static_cast<int>(l))) r.expertTokens[l].assign(experts, 0);
        }
      }
    }
    for (std::size_t l = 0; l < layers; ++l) {
      if (!m_model.isMoeLayer(static_cast<int>(l))) continue;
      std::vector<uint64_t> perChip(members, 0);
      for (std::size_t d = 0; d < members; ++d) received[d][l].assign(experts, 0);
      for (std::size_t src = 0; src < members; ++src) {
        const std::vector<uint64_t>& routed = m_replicas[src]->expertTokens[l];
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
      uint64_t total = 0;
      for (uint64_t v : perChip) total += v;
      if (total > 0) {
        const double mean = static_cast<double>(total) / static_cast<double>(members);
        m_replicas.front()->stats.chipImbalanceSum +=
            static_cast<double>(*std::max_element(perChip.begin(), perChip.end())) / mean;
        ++m_chipImbalanceLayers;
      }
    }
    // Every replica's plan and phase setting first; the step starts when the slowest change is done.
    std::vector<std::vector<std::shared_ptr<const StepPlan>>> plans(members);
    double stall = 0.0;
    for (std::size_t d = 0; d < members; ++d) {
      batches[d].expertTokens = &received[d];
      batches[d].dispatchBytes = &dispatch[d];
      batches[d].combineBytes = &combine[d];
      plans[d] = planStep(*m_replicas[d], batches[d]);
      stall = std::max(stall, preparePhase(*m_replicas[d], batches[d], plans[d]));
    }
    if (stall > 0.0) sc_core::wait(sc_core::sc_time(stall, sc_core::SC_SEC));
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    for (std::size_t d = 0; d < members; ++d) {
      m_replicas[d]->phase->started();
      postStep(*m_replicas[d], std::move(plans[d]));
    }
    if (!awaitStep(all)) return;
    for (std::size_t d = 0; d < members; ++d) finishStep(*m_replicas[d], batches[d], start);
  }
}

void ServingEngine::transferKv(uint64_t id, int from, int to) {
  Replica& src = *m_replicas[static_cast<std::size_t>(from)];
  Replica& dst = *m_replicas[static_cast<std::size_t>(to)];
  const RequestRecord& record = m_records[id - 1];
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  // Every rank sends its slice of the prompt's KV to the same rank of the decode replica, all at once.
  auto pending = std::make_shared<int>(m_tp);
  auto arrived = std::make_shared<sc_core::sc_event>();
  uint64_t total = 0;
  for (int rank = 0; rank < m_tp; ++rank) {
    const StepPlanner& planner = *src.planners[static_cast<std::size_t>(rank)];
    const uint64_t bytes = planner.kvBytesFor(record.inputTokens);  // window layers: their window only
    total += bytes;
    PipelineLink* link = m_kvLinks.at({from, to, rank}).get();
    sc_core::sc_spawn(
        [this, link, bytes, pending, arrived] {
          if (!link->send(bytes, 0) && m_error.empty()) m_error = link->error();
          if (--*pending == 0) arrived->notify();
        },
        sc_core::sc_gen_unique_name("kv_send"));
  }
  sc_core::wait(*arrived);
  if (!m_error.empty()) {
    sc_core::sc_stop();
    return;
  }
  ++m_kvTransfers;
  m_kvTransferBytes += static_cast<double>(total);
  m_kvTransferTimeS += (sc_core::sc_time_stamp() - start).to_seconds();
  if (m_completed) return;
  dst.scheduler->submit(ServingRequest{id, record.inputTokens, record.outputTokens, true});
  dst.work.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace scoville::runtime
