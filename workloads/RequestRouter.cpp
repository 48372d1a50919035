#include "workloads/RequestRouter.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace scoville::workload {

RequestRouter::RequestRouter(std::vector<int> entries, std::vector<int> decoders, uint64_t warmup, uint64_t measured)
    : m_entries(std::move(entries)),
      m_decoders(std::move(decoders)),
      m_firstMeasured(warmup + 1),
      m_lastMeasured(warmup + measured),
      m_measuredLeft(measured) {
  if (m_entries.empty()) throw std::invalid_argument("RequestRouter: no replica to enter at");
}

int RequestRouter::admit(const Arrival& a, double now) {
  int replica = 0;
  if (a.user >= 0) {
    replica = m_entries[static_cast<std::size_t>(a.user) % m_entries.size()];  // a user stays on its replica
  } else {
    replica = m_entries[m_nextEntry];
    m_nextEntry = (m_nextEntry + 1) % m_entries.size();
  }
  RequestRecord record;
  record.id = a.id;
  record.user = a.user;
  record.replica = replica;
  record.arrival = now;
  record.inputTokens = a.inputTokens;
  record.outputTokens = a.outputTokens;
  record.turn = a.turn;
  record.measured = a.id >= m_firstMeasured && a.id <= m_lastMeasured;
  record.tokenTimes.reserve(a.outputTokens);
  // Ids follow the load generator's order, sends need not (a user thinking before its next turn
  // sends it after a user that starts a new conversation at once).
  if (a.id == 0) throw std::invalid_argument("RequestRouter: request id 0");
  if (m_position.size() < a.id) m_position.resize(a.id, kNotSent);
  if (m_position[a.id - 1] != kNotSent) throw std::invalid_argument("RequestRouter: a request admitted twice");
  m_position[a.id - 1] = m_records.size();
  m_records.push_back(std::move(record));
  return replica;
}

int RequestRouter::nextDecoder() {
  if (m_decoders.empty()) throw std::logic_error("RequestRouter: a KV hand-off without a decode pool");
  const int to = m_decoders[m_nextDecoder];
  m_nextDecoder = (m_nextDecoder + 1) % m_decoders.size();
  return to;
}

std::size_t RequestRouter::indexOf(uint64_t id) const {
  if (id == 0 || id > m_position.size() || m_position[id - 1] == kNotSent) {
    throw std::out_of_range("RequestRouter: request never admitted");
  }
  return m_position[id - 1];
}

void RequestRouter::tokenProduced(uint64_t id, double now) {
  RequestRecord& record = m_records[indexOf(id)];
  if (record.tokenTimes.empty()) record.firstToken = now;
  record.tokenTimes.push_back(now);
}

void RequestRouter::finished(uint64_t id, double now, int preemptions) {
  RequestRecord& record = m_records[indexOf(id)];
  record.finish = now;
  record.preemptions = preemptions;
  if (record.measured && m_measuredLeft > 0 && --m_measuredLeft == 0) m_completed = true;
}

std::vector<RequestRecord> RequestRouter::metricRecords() const {
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
  const std::size_t simulated = out.size();
  uint64_t copy = 0;
  for (std::size_t f = 0; f < m_leaderOf.size(); ++f) {
    if (m_leaderOf[f] < 0) continue;
    ++copy;
    for (std::size_t i = 0; i < simulated; ++i) {
      if (out[i].replica != m_leaderOf[f]) continue;
      RequestRecord r = out[i];
      r.replica = static_cast<int>(f);
      r.id += copy * m_position.size();
      out.push_back(std::move(r));
    }
  }
  return out;
}

ServingWindow RequestRouter::window() const {
  ServingWindow w;
  if (m_position.size() < m_lastMeasured || m_lastMeasured < m_firstMeasured) return w;
  for (uint64_t id = m_firstMeasured; id <= m_lastMeasured; ++id) {
    if (m_position[id - 1] == kNotSent) return ServingWindow{};
  }
  w.start = record(m_firstMeasured).arrival;
  for (uint64_t id = m_firstMeasured; id <= m_lastMeasured; ++id) {
    w.start = std::min(w.start, record(id).arrival);
    w.end = std::max(w.end, record(id).finish);
  }
  return w;
}

}  // namespace scoville::workload
