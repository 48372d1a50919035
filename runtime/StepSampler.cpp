#include "runtime/StepSampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "tlm/Time.h"

namespace scoville::runtime {

namespace {

/// Activity the recording leaves out: the power manager's own, which it announces again from the
/// replayed activity it hears (see the header).
bool recountedBySource(tlm::Activity activity) {
  return activity == tlm::Activity::kClockActive || activity == tlm::Activity::kWakeArrays;
}

}  // namespace

bool ActivityRecorder::Key::operator==(const Key& o) const {
  return activity == o.activity && precision == o.precision && phase == o.phase && block == o.block &&
         source == o.source && chip == o.chip && srcChip == o.srcChip &&
         std::memcmp(&toggle, &o.toggle, sizeof toggle) == 0;
}

std::size_t ActivityRecorder::KeyHash::operator()(const Key& k) const {
  uint32_t toggle = 0;
  std::memcpy(&toggle, &k.toggle, sizeof toggle);
  std::size_t h = std::hash<const void*>()(k.source);
  for (const uint64_t part : {static_cast<uint64_t>(k.activity) | (static_cast<uint64_t>(k.precision) << 8) |
                                  (static_cast<uint64_t>(k.phase) << 16) | (static_cast<uint64_t>(k.block) << 24) |
                                  (static_cast<uint64_t>(toggle) << 32),
                              static_cast<uint64_t>(static_cast<uint32_t>(k.chip)) |
                                  (static_cast<uint64_t>(static_cast<uint32_t>(k.srcChip)) << 32)}) {
    h ^= std::hash<uint64_t>()(part) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

ActivityRecorder::ActivityRecorder(tlm::ActivityBus& bus, std::vector<int> chips, double gapS)
    : m_bus(bus), m_chips(std::move(chips)), m_gap(tlm::durationCeil(gapS)) {
  std::sort(m_chips.begin(), m_chips.end());
  m_bus.subscribe(*this);
}

ActivityRecorder::~ActivityRecorder() {
  m_bus.unsubscribe(*this);
}

void ActivityRecorder::arm(const sc_core::sc_time& start) {
  m_armed = true;
  m_start = start;
  m_events.clear();
  m_latest.clear();
}

void ActivityRecorder::onActivity(const tlm::ActivityEvent& e) {
  if (!m_armed || recountedBySource(e.activity)) return;
  if (!m_chips.empty() && !std::binary_search(m_chips.begin(), m_chips.end(), e.srcChip)) return;
  // Offsets from the recording's start (nothing of a step starts before it: the step's drivers
  // and their collectives start together).
  const sc_core::sc_time start = e.start > m_start ? e.start - m_start : sc_core::SC_ZERO_TIME;
  const sc_core::sc_time end = e.time > m_start ? e.time - m_start : sc_core::SC_ZERO_TIME;
  const Key key{e.activity, e.precision, e.phase, e.block, e.source, e.chip, e.srcChip, e.toggle};
  const auto found = m_latest.find(key);
  if (found != m_latest.end()) {
    tlm::ActivityEvent& merged = m_events[found->second];
    if (start <= merged.time + m_gap) {
      merged.amount += e.amount;
      merged.start = std::min(merged.start, start);
      merged.time = std::max(merged.time, end);
      return;
    }
  }
  tlm::ActivityEvent copy = e;
  copy.start = start;
  copy.time = end;
  m_latest[key] = m_events.size();
  m_events.push_back(copy);
}

void ActivityRecorder::disarm() {
  if (!m_armed) return;
  m_armed = false;
  // In order of their starts, as the units reported them (a power manager's clock gating keeps
  // the union of busy spans as they come).
  std::stable_sort(m_events.begin(), m_events.end(),
                   [](const tlm::ActivityEvent& a, const tlm::ActivityEvent& b) { return a.start < b.start; });
}

void ActivityRecorder::replay(const sc_core::sc_time& start) const {
  for (tlm::ActivityEvent e : m_events) {
    e.start += start;
    e.time += start;
    m_bus.emit(e);
  }
}

void SamplingSummary::add(const SamplingSummary& o) {
  period = std::max(period, o.period);
  detailedSteps += o.detailedSteps;
  replayedSteps += o.replayedSteps;
  replayedS += o.replayedS;
  busyS += o.busyS;
  predictions += o.predictions;
  errorSum += o.errorSum;
  errorSquares += o.errorSquares;
  errorMaxAbs = std::max(errorMaxAbs, o.errorMaxAbs);
}

double SamplingSummary::errorSd() const {
  if (predictions < 2) return 0.0;
  const auto n = static_cast<double>(predictions);
  const double variance = (errorSquares - errorSum * errorSum / n) / (n - 1.0);
  return variance > 0.0 ? std::sqrt(variance) : 0.0;
}

double SamplingSummary::replayedErrorBound() const {
  if (replayedSteps == 0) return 0.0;
  if (predictions < 2) return errorMaxAbs;
  return std::fabs(meanError()) + 1.96 * errorSd() / std::sqrt(static_cast<double>(predictions));
}

StepSampler::StepSampler(int period, Replica& replica, platform::Platform& platform) : m_period(period) {
  m_summary.period = period;
  double gapS = 0.0;
  for (std::size_t c = 0; c < replica.chips.size(); ++c) {
    if (replica.mirrors[c]) continue;  // mirrors are reported as their leader (PowerMonitor)
    hw::Chip& chip = platform.chip(replica.chips[c]);
    const double hold = chip.config().power ? chip.config().power->clockHoldS : 0.0;
    gapS = std::max(gapS, hold);
    m_recorders.push_back(std::make_unique<ActivityRecorder>(chip.activityBus(), std::vector<int>{}, hold));
    // The power manager hears the replayed activity and counts its own; the memory controller's
    // command counts are its own record (below).
    chip.stats().collectCounters(m_counters, {"power_manager"}, {});
    m_memories.push_back(&chip.hbm());
    m_managers.push_back(&chip.powerManager());
  }
  m_recorders.push_back(std::make_unique<ActivityRecorder>(platform.networkActivity(), replica.chips, gapS));
  for (const auto& group : replica.groups) group->stats().collectCounters(m_counters, {}, {});
  for (const auto& link : replica.links) link->stats().collectCounters(m_counters, {}, {});
  m_before.assign(m_counters.size(), 0.0);
  m_delta.assign(m_counters.size(), 0.0);
  m_commandsBefore.resize(m_memories.size());
  m_commandsDelta.resize(m_memories.size());
}

StepSampler::~StepSampler() = default;

bool StepSampler::recordedPosition() const {
  return m_index == 1 || (m_index >= static_cast<uint64_t>(m_period) && m_index % static_cast<uint64_t>(m_period) == 0);
}

uint64_t StepSampler::pointChanges() const {
  uint64_t changes = 0;
  for (const hw::PowerManager* manager : m_managers) changes += manager->operatingPointChanges();
  return changes;
}

bool StepSampler::replays(const workload::StepBatch& batch) {
  // A clock moved since the recording: its time no longer holds.
  bool steady = !batch.sequences.empty() && batch.sequences.size() == m_batch.size() &&
                (!m_recorded || pointChanges() == m_recordedChanges);
  for (std::size_t i = 0; i < batch.sequences.size() && steady; ++i) {
    const workload::StepSequence& q = batch.sequences[i];
    steady = q.tokens == 1 && q.context > 0 && q.request == m_batch[i];
  }
  if (steady) {
    ++m_index;
  } else {
    // A new run (or none: prompt tokens in the step): detailed, its first step not recorded.
    m_index = 0;
    m_recorded = false;
    m_batch.clear();
    bool decodes = !batch.sequences.empty();
    for (const workload::StepSequence& q : batch.sequences) decodes = decodes && q.tokens == 1 && q.context > 0;
    if (decodes) {
      for (const workload::StepSequence& q : batch.sequences) m_batch.push_back(q.request);
    }
  }
  // Detailed: each period's last two steps, the first warming the hardware's state (open rows,
  // busy banks and ports: what the step before leaves) after the replayed ones, the second recorded.
  const bool replay = m_recorded && !recordedPosition() && (m_index + 1) % static_cast<uint64_t>(m_period) != 0;
  if (replay) {
    ++m_summary.replayedSteps;
    m_replayedSince = true;
  } else {
    ++m_summary.detailedSteps;
  }
  return replay;
}

void StepSampler::detailedStarted(const std::vector<std::shared_ptr<const workload::StepPlan>>& plans) {
  m_start = sc_core::sc_time_stamp();
  // The run's first step follows a change (prompts, a request joining or leaving): the next one is
  // the first that stands for the run.
  m_recording = !m_batch.empty() && recordedPosition();
  if (!m_recording) return;
  m_plans = plans;
  m_recordedChanges = pointChanges();
  for (const auto& recorder : m_recorders) recorder->arm(m_start);
  for (std::size_t i = 0; i < m_counters.size(); ++i) m_before[i] = m_counters[i]->value();
  for (std::size_t i = 0; i < m_memories.size(); ++i) m_commandsBefore[i] = m_memories[i]->commands();
}

void StepSampler::detailedFinished() {
  const sc_core::sc_time time = sc_core::sc_time_stamp() - m_start;
  m_summary.busyS += tlm::seconds(time);
  if (!m_recording) return;
  m_recording = false;
  for (const auto& recorder : m_recorders) recorder->disarm();
  if (pointChanges() != m_recordedChanges) {
    // A clock moved during the step: it stands for no other. The next steady step records again.
    m_recorded = false;
    m_index = 0;
    return;
  }
  for (std::size_t i = 0; i < m_counters.size(); ++i) m_delta[i] = m_counters[i]->value() - m_before[i];
  for (std::size_t i = 0; i < m_memories.size(); ++i) {
    m_commandsDelta[i] = m_memories[i]->commands().since(m_commandsBefore[i]);
  }
  if (m_recorded && m_replayedSince && time > sc_core::SC_ZERO_TIME) {
    // The steps since the last detailed one took its time: how far off was that for this one?
    const double error = (tlm::seconds(m_recordedTime) - tlm::seconds(time)) / tlm::seconds(time);
    ++m_summary.predictions;
    m_summary.errorSum += error;
    m_summary.errorSquares += error * error;
    m_summary.errorMaxAbs = std::max(m_summary.errorMaxAbs, std::fabs(error));
  }
  m_replayedSince = false;
  m_recorded = true;
  m_recordedStart = m_start;
  m_recordedTime = time;
}

void StepSampler::replayed(const sc_core::sc_time& start) {
  for (const auto& recorder : m_recorders) recorder->replay(start);
  for (std::size_t i = 0; i < m_counters.size(); ++i) {
    if (m_delta[i] != 0.0) m_counters[i]->add(m_delta[i]);
  }
  // The recorded step's refreshes (the ones that fell due since the step before it) stand for
  // those due since the last step: the channels issue them uncounted.
  const double now = tlm::seconds(sc_core::sc_time_stamp());
  for (std::size_t i = 0; i < m_memories.size(); ++i) m_memories[i]->replayed(m_commandsDelta[i], now);
  const double time = tlm::seconds(sc_core::sc_time_stamp() - start);
  m_summary.replayedS += time;
  m_summary.busyS += time;
}

}  // namespace scoville::runtime
