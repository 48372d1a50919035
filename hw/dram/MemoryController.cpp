#include "hw/dram/MemoryController.h"

#include <algorithm>

#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

namespace {
sc_core::sc_time atSeconds(double seconds) {
  return tlm::durationCeil(seconds);
}
}  // namespace

MemoryController::MemoryController(const sc_core::sc_module_name& name, const MemoryControllerConfig& config)
    : TimedTarget(name),
      m_config(config),
      m_timed(config.lockstepGroups()),
      m_scheduler(makeDramScheduler(config.scheduler)),
      m_queues(static_cast<std::size_t>(m_timed.channels)),
      m_channelReadyAt(static_cast<std::size_t>(m_timed.channels), 0.0),
      m_stats("hbm", "HBM memory controller"),
      m_reads(m_stats.counter("reads", "", "read requests (weights, activations, KV)")),
      m_writes(m_stats.counter("writes", "", "write requests")),
      m_bytesRead(m_stats.counter("bytes_read", "B", "bytes read")),
      m_bytesWritten(m_stats.counter("bytes_written", "B", "bytes written")),
      m_kvBytesRead(m_stats.counter("kv_bytes_read", "B", "bytes read on behalf of the KV cache")),
      m_kvBytesWritten(m_stats.counter("kv_bytes_written", "B", "bytes written on behalf of the KV cache")),
      m_busBusyTime(m_stats.counter("bus_busy_time", "s", "data-bus time summed over channels")) {
  m_channels.reserve(static_cast<std::size_t>(m_timed.channels));
  for (int c = 0; c < m_timed.channels; ++c) m_channels.emplace_back(m_timed, c);
  const auto command = [this](const char* name, const char* description, const double DramCommandCounts::*field) {
    m_stats.formula(name, "", description, [this, field] { return m_commands.*field; });
  };
  command("activates", "ACT commands", &DramCommandCounts::activates);
  command("precharges", "PRE commands", &DramCommandCounts::precharges);
  command("row_hits", "pages found open", &DramCommandCounts::rowHits);
  command("row_misses", "pages in a closed bank (ACT)", &DramCommandCounts::rowMisses);
  command("row_conflicts", "pages behind another open row (PRE + ACT)", &DramCommandCounts::rowConflicts);
  command("read_bursts", "read bursts", &DramCommandCounts::readBursts);
  command("write_bursts", "write bursts", &DramCommandCounts::writeBursts);
  command("refreshes", "all-bank refreshes summed over channels", &DramCommandCounts::refreshes);
  command("turnarounds", "read/write bus turnarounds", &DramCommandCounts::turnarounds);
  m_stats.formula("bandwidth_utilization", "", "data-bus busy time / (channels x simulated time)", [this] {
    const double elapsed = sc_core::sc_time_stamp().to_seconds();
    return elapsed > 0 ? m_busBusyTime.value() / (m_config.channels * elapsed) : 0.0;
  });
  SC_HAS_PROCESS(MemoryController);
  SC_METHOD(schedule);
  sensitive << m_wake;
  dont_initialize();
}

bool MemoryController::validate(::tlm::tlm_generic_payload& payload, bool& write) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  write = tlm::isMemoryWrite(op.kind);
  if (!write && !tlm::isMemoryRead(op.kind)) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return false;
  }
  if (op.bytes == 0 ||
      static_cast<double>(payload.get_address()) + static_cast<double>(op.bytes) > m_config.capacityBytes) {
    payload.set_response_status(::tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  return true;
}

void MemoryController::account(const ::tlm::tlm_generic_payload& payload, bool write) {
  const tlm::OpExtension& op = *payload.get_extension<tlm::OpExtension>();
  const auto bytes = static_cast<double>(op.bytes);
  if (write) {
    m_writes.add();
    m_bytesWritten.add(bytes);
    if (op.kind == tlm::OpKind::kKvAppend) m_kvBytesWritten.add(bytes);
  } else {
    m_reads.add();
    m_bytesRead.add(bytes);
    if (op.kind == tlm::OpKind::kKvRead) m_kvBytesRead.add(bytes);
  }
}

sc_core::sc_time MemoryController::serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) {
  bool write = false;
  if (!validate(payload, write)) return arrival;
  const double at = tlm::seconds(arrival) + m_config.controllerLatencyS;
  const DramCommandCounts before = m_commands;
  const DramRequestService request =
      serveRequest(m_channels, static_cast<uint64_t>(m_timed.interleaveBytes), payload.get_address(),
                   tlm::opOf(payload).bytes, write, at, m_commands);
  const double done = request.end;
  m_busBusyTime.add(request.busTime);
  account(payload, write);
  emitCommands(before, tlm::opOf(payload), atSeconds(at), atSeconds(done));
  return atSeconds(done);
}

void MemoryController::emitCommands(const DramCommandCounts& before, const tlm::OpExtension& op,
                                    const sc_core::sc_time& start, const sc_core::sc_time& when) const {
  if (!m_activity.listening()) return;
  // One event, sent once per command kind that occurred (they differ only in kind and amount).
  tlm::ActivityEvent e = m_activity.event(tlm::Activity::kDramActivates, 0.0, op, start, when);
  const auto send = [&](tlm::Activity activity, double amount) {
    if (amount == 0.0) return;
    e.activity = activity;
    e.amount = amount;
    m_activity.send(e);
  };
  send(tlm::Activity::kDramActivates, m_commands.activates - before.activates);
  send(tlm::Activity::kDramPrecharges, m_commands.precharges - before.precharges);
  send(tlm::Activity::kDramReadBursts, m_commands.readBursts - before.readBursts);
  send(tlm::Activity::kDramWriteBursts, m_commands.writeBursts - before.writeBursts);
  send(tlm::Activity::kDramRefreshes, m_commands.refreshes - before.refreshes);
}

void MemoryController::replayed(const DramCommandCounts& counts, double timeS) {
  m_commands += counts;
  DramCommandCounts counted;  // the recorded step's refreshes stand for these
  for (DramChannel& channel : m_channels) channel.refreshUntil(timeS, counted);
}

bool MemoryController::admit() {
  if (m_inFlight >= m_config.queueDepth) return false;
  ++m_inFlight;
  return true;
}

void MemoryController::startAt(::tlm::tlm_generic_payload& payload) {
  bool write = false;
  if (!validate(payload, write)) {
    m_at.respond(payload, sc_core::sc_time_stamp());
    m_completions.insert(sc_core::sc_time_stamp().to_seconds());
    rearm();
    return;
  }
  account(payload, write);
  const uint64_t id = m_nextRequest++;
  splitIntoSegments(m_timed, payload.get_address(), tlm::opOf(payload).bytes, write, m_segments);
  m_requests[id] = Request{&payload, static_cast<int>(m_segments.size()), 0.0};
  const double at = sc_core::sc_time_stamp().to_seconds() + m_config.controllerLatencyS;
  for (const InterleavedSegment& segment : m_segments) {
    const auto c = static_cast<std::size_t>(segment.channel);
    if (m_queues[c].empty()) m_readyOrder.emplace(m_channelReadyAt[c], segment.channel);
    m_queues[c].push_back(QueuedPart{segment, at, id});
  }
  schedule();
}

void MemoryController::dispatch(int channel) {
  const auto c = static_cast<std::size_t>(channel);
  std::deque<QueuedPart>& queue = m_queues[c];
  const auto pick = queue.begin() + static_cast<std::ptrdiff_t>(m_scheduler->pick(queue.size(), [&](std::size_t i) {
                      return m_channels[c].isRowHit(queue[i].segment);
                    }));
  const QueuedPart part = *pick;
  queue.erase(pick);
  const DramCommandCounts before = m_commands;
  const DramService service = m_channels[c].serve(part.segment, part.arrival, m_commands);
  m_busBusyTime.add(service.busTime);
  Request& request = m_requests.at(part.request);
  emitCommands(before, tlm::opOf(*request.payload), atSeconds(std::min(part.arrival, service.firstData)),
               atSeconds(service.end));
  // The next part may be picked once this one's data has started (its commands can overlap).
  m_channelReadyAt[c] = service.firstData;
  if (!queue.empty()) m_readyOrder.emplace(m_channelReadyAt[c], channel);

  request.done = std::max(request.done, service.end);
  if (--request.partsLeft == 0) {
    m_at.respond(*request.payload, atSeconds(request.done));
    m_completions.insert(request.done);
    m_requests.erase(part.request);
  }
}

void MemoryController::schedule() {
  // Requests whose response time has come free their queue slot.
  bool freed = false;
  while (!m_completions.empty() && atSeconds(*m_completions.begin()) <= sc_core::sc_time_stamp()) {
    m_completions.erase(m_completions.begin());
    --m_inFlight;
    freed = true;
  }
  while (!m_readyOrder.empty() && atSeconds(m_readyOrder.begin()->first) <= sc_core::sc_time_stamp()) {
    const int channel = m_readyOrder.begin()->second;
    m_readyOrder.erase(m_readyOrder.begin());
    dispatch(channel);
  }
  if (freed) m_at.retry();
  rearm();
}

void MemoryController::rearm() {
  double next = -1.0;
  if (!m_completions.empty()) next = *m_completions.begin();
  if (!m_readyOrder.empty() && (next < 0 || m_readyOrder.begin()->first < next)) next = m_readyOrder.begin()->first;
  if (next < 0) return;
  const sc_core::sc_time when = atSeconds(next);
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  m_wake.notify(when > now ? when - now : sc_core::SC_ZERO_TIME);
}

}  // namespace scoville::hw
