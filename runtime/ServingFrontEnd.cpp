#include "runtime/ServingFrontEnd.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace scoville::runtime {

using namespace workload;  // the load, router and scheduler types this file drives

void ServingFrontEnd::start() {
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

void ServingFrontEnd::send(const Arrival& a) {
  if (completed()) return;
  if (a.thinkS > 0.0 && m_thinking.count(a.id) == 0) {
    // The user thinks (runs its tools) before the conversation's next turn: it is sent then.
    m_thinking.insert(a.id);
    sc_core::sc_spawn(
        [this, a] {
          sc_core::wait(sc_core::sc_time(a.thinkS, sc_core::SC_SEC));
          if (!m_status.failed()) send(a);
        },
        sc_core::sc_gen_unique_name("think"));
    return;
  }
  m_thinking.erase(a.id);
  const int replica = m_router.admit(a, sc_core::sc_time_stamp().to_seconds());
  const Replica& r = m_set.at(replica);
  // The prefill pool only produces the first token; the rest is decoded after the KV moved.
  const ServingRequest request{a.id,          a.inputTokens,  r.role == ReplicaRole::kPrefill ? 1 : a.outputTokens,
                               false,         a.conversation, a.history,
                               a.sharedPrefix};
  const double delay = m_policy.delayOf(a.inputTokens);
  if (delay <= 0.0) {
    submit(replica, request);
    return;
  }
  sc_core::sc_spawn(
      [this, replica, request, delay] {
        sc_core::wait(sc_core::sc_time(delay, sc_core::SC_SEC));
        if (!m_status.failed() && !completed()) submit(replica, request);
      },
      sc_core::sc_gen_unique_name("front_end"));
}

void ServingFrontEnd::submit(int replica, const ServingRequest& request) {
  Replica& r = m_set.at(replica);
  r.scheduler->submit(request);
  r.work.notify(sc_core::SC_ZERO_TIME);
  m_anyWork.notify(sc_core::SC_ZERO_TIME);
}

void ServingFrontEnd::nextOf(int user, uint64_t finished, double now) {
  if (!m_policy.warmupBarrier || finished > m_policy.warmup) {
    send(m_load.next(user, now));
    return;
  }
  // A warm-up request finished: the user sends another warm-up request while any is left to
  // send, else waits; the last warm-up to finish releases every waiting user, in user order.
  ++m_warmupsFinished;
  if (m_load.sent() < m_policy.warmup) {
    send(m_load.next(user, now));
    return;
  }
  m_held.push_back(user);
  if (m_warmupsFinished < m_policy.warmup) return;
  std::vector<int> held;
  held.swap(m_held);
  std::sort(held.begin(), held.end());
  for (const int u : held) send(m_load.next(u, now));
}

void ServingFrontEnd::openLoopSource() {
  while (!completed()) {
    const std::optional<Arrival> a = m_load.nextOpen();
    if (!a) return;
    const sc_core::sc_time at(a->time, sc_core::SC_SEC);
    if (at > sc_core::sc_time_stamp()) sc_core::wait(at - sc_core::sc_time_stamp());
    send(*a);
  }
}

void ServingFrontEnd::stepDone(Replica& r, const std::vector<StepOutcome>& outcomes) {
  const double now = sc_core::sc_time_stamp().to_seconds();
  for (const StepOutcome& o : outcomes) {
    // Speculative decoding delivers its accepted tokens together, at the step's end.
    for (uint32_t t = 0; t < o.tokens; ++t) m_router.tokenProduced(o.request, now);
    if (!o.finished) continue;
    const RequestRecord& record = m_router.record(o.request);
    if (r.role == ReplicaRole::kPrefill && record.tokenTimes.size() < record.outputTokens) {
      // Prefilled: its KV goes to a decode replica, which produces the rest.
      const int to = m_router.nextDecoder();
      const int from = r.index;
      const uint64_t id = o.request;
      sc_core::sc_spawn([this, id, from, to] { transferKv(id, from, to); }, sc_core::sc_gen_unique_name("kv"));
      continue;
    }
    // The last measured request completes the run: nothing new is sent; steps and transfers in
    // flight finish and every thread leaves its loop (no sc_stop: threads stopped mid-wait would
    // never unwind their stacks), so the simulation ends when nothing is left to do.
    m_router.finished(o.request, now, o.preemptions);
    if (record.user >= 0 && !completed()) nextOf(record.user, o.request, now);
  }
}

void ServingFrontEnd::transferKv(uint64_t id, int from, int to) {
  Replica& src = m_set.at(from);
  Replica& dst = m_set.at(to);
  // Copied: admitting requests while this thread waits may move the records.
  const uint64_t inputTokens = m_router.record(id).inputTokens;
  const uint64_t outputTokens = m_router.record(id).outputTokens;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  // Every rank sends its slice of the prompt's KV to the same rank of the decode replica, all at once.
  auto pending = std::make_shared<int>(m_set.tp);
  auto arrived = std::make_shared<sc_core::sc_event>();
  uint64_t total = 0;
  for (int rank = 0; rank < m_set.tp; ++rank) {
    const StepPlanner& planner = *src.planners[static_cast<std::size_t>(rank)];
    const uint64_t bytes = planner.kvBytesFor(inputTokens);  // window layers: their window only
    total += bytes;
    PipelineLink* link = m_set.kvLinks.at({from, to, rank}).get();
    sc_core::sc_spawn(
        [this, link, bytes, pending, arrived] {
          if (!link->send(bytes, 0)) m_status.fail(link->error());
          if (--*pending == 0) arrived->notify();
        },
        sc_core::sc_gen_unique_name("kv_send"));
  }
  sc_core::wait(*arrived);
  if (m_status.failed()) {
    sc_core::sc_stop();
    return;
  }
  ++m_kvTransfers;
  m_kvTransferBytes += static_cast<double>(total);
  m_kvTransferTimeS += (sc_core::sc_time_stamp() - start).to_seconds();
  if (completed()) return;
  dst.scheduler->submit(ServingRequest{id, inputTokens, outputTokens, true});
  dst.work.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace scoville::runtime
