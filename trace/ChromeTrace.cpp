#include "trace/ChromeTrace.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "trace/UnitName.h"

namespace scoville::trace {

using namespace tlm;  // the activity events, ops and phases this file reads

namespace {

/// Transactions one unit overlaps at most on the trace (more are counted as dropped), and
/// requests in flight at once.
constexpr std::size_t kUnitLanes = 64;
constexpr std::size_t kRequestLanes = 4096;

const char* phaseCategory(LlmPhase phase) {
  switch (phase) {
    case LlmPhase::kPrefill: return "prefill";
    case LlmPhase::kDecode: return "decode";
    case LlmPhase::kCommunication: return "communication";
  }
  return "other";
}

/// The activities that stand for their transaction on the trace (one slice each).
bool traced(Activity activity) {
  switch (activity) {
    case Activity::kMacs:
    case Activity::kVectorOps:
    case Activity::kSramReadBytes:
    case Activity::kSramWriteBytes:
    case Activity::kDramReadBursts:
    case Activity::kDramWriteBursts:
    case Activity::kDramRefreshes:
    case Activity::kNocMemoryBytes:
    case Activity::kNocSramBytes:
    case Activity::kLinkBytes:
    case Activity::kSwitchBytes: return true;
    default: return false;
  }
}

/// JSON string contents (names here are module names and fixed words; escape what JSON needs).
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

ChromeTrace::ChromeTrace(const ChromeTraceOptions& options) : m_options(options) {}

int ChromeTrace::processOf(const std::string& name) {
  const auto it = m_processes.find(name);
  if (it != m_processes.end()) return it->second;
  const int pid = static_cast<int>(m_processes.size()) + 1;
  m_processes.emplace(name, pid);
  return pid;
}

int ChromeTrace::lane(Track& track, double startS, double endS) {
  std::size_t lane = 0;
  while (lane < track.laneEnds.size() && track.laneEnds[lane] > startS) ++lane;
  if (lane == track.laneEnds.size()) {
    if (track.laneEnds.size() == track.capacity) return -1;
    track.laneEnds.push_back(0.0);
  }
  track.laneEnds[lane] = endS;
  const int thread = track.firstThread + static_cast<int>(lane);
  const auto key = std::make_pair(track.process, thread);
  if (m_threadNames.count(key) == 0) {
    m_threadNames[key] = lane == 0 ? track.name : fmt::format("{} #{}", track.name, lane);
  }
  return thread;
}

ChromeTrace::Track& ChromeTrace::track(const std::string& process, const std::string& unit, std::size_t capacity) {
  const std::string key = process + "/" + unit;
  auto it = m_trackOf.find(key);
  if (it == m_trackOf.end()) {
    Track t;
    t.process = processOf(process);
    t.name = unit;
    t.capacity = capacity;
    t.firstThread = m_nextThread;
    m_nextThread += static_cast<int>(capacity);
    it = m_trackOf.emplace(key, m_tracks.size()).first;
    m_tracks.push_back(std::move(t));
  }
  return m_tracks[it->second];
}

void ChromeTrace::addSlice(int process, int thread, double startS, double endS, std::string name, const char* category,
                           std::string args) {
  if (m_slices.size() >= m_options.maxSlices) {
    ++m_dropped;
    return;
  }
  m_slices.push_back(
      Slice{process, thread, startS * 1e6, (endS - startS) * 1e6, std::move(name), category, std::move(args)});
}

void ChromeTrace::onActivity(const ActivityEvent& e) {
  if (!traced(e.activity)) return;
  const double start = e.start.to_seconds();
  const double end = e.time.to_seconds();
  if (end < m_options.startS || start > m_options.endS) return;

  // The track: a unit of a chip ("platform.chip3.hbm" -> chip3 / hbm), a chip's fabric port
  // (network modules name the chip), or a network module of its own.
  const UnitName source = unitNameOf(e.source);
  std::string process = source.chip >= 0 ? fmt::format("chip{}", source.chip) : "network";
  std::string unit = source.unit;
  if (e.chip >= 0) {
    process = fmt::format("chip{}", e.chip);
    unit = e.chip == e.srcChip ? "fabric send" : "fabric receive";
  }
  Track& unitTrack = track(process, unit, kUnitLanes);
  const int thread = lane(unitTrack, start, end);
  if (thread < 0) {
    ++m_dropped;  // more transactions at once on one unit than it has lanes
    return;
  }

  std::string name = e.activity == Activity::kDramRefreshes
                         ? std::string("refresh")
                         : fmt::format("{} {}", opKindName(e.kind), opBlockName(e.block));
  std::string args = fmt::format("\"{}\":{},\"layer\":{}", activityName(e.activity), e.amount, e.layer);
  if (e.request != 0) args += fmt::format(",\"request\":{}", e.request);
  if (e.kind == OpKind::kSend) args += fmt::format(",\"from_chip\":{},\"to_chip\":{}", e.srcChip, e.dstChip);
  addSlice(unitTrack.process, thread, start, end, std::move(name), phaseCategory(e.phase), std::move(args));
}

void ChromeTrace::addRequest(uint64_t id, double arrivalS, double firstTokenS, double finishS, bool finished) {
  const double end = finished ? finishS : m_options.endS;
  if (end < m_options.startS || arrivalS > m_options.endS) return;
  Track& requests = track("requests", "requests", kRequestLanes);
  const int thread = lane(requests, arrivalS, end);
  if (thread < 0) {
    m_dropped += 2;
    return;
  }
  const std::string args = fmt::format("\"request\":{}", id);
  const bool prefilled = firstTokenS > 0.0 || finished;
  addSlice(requests.process, thread, arrivalS, prefilled ? firstTokenS : end,
           fmt::format("request {} wait+prefill", id), "request", args);
  if (prefilled) {
    addSlice(requests.process, thread, firstTokenS, end, fmt::format("request {} decode", id), "request", args);
  }
}

void ChromeTrace::addCounter(const std::string& name, double timeS, double value) {
  if (timeS < m_options.startS || timeS > m_options.endS) return;
  const int pid = processOf("power");
  m_counters.push_back(fmt::format("{{\"ph\":\"C\",\"pid\":{},\"name\":\"{}\",\"ts\":{:.3f},\"args\":{{\"W\":{}}}}}",
                                   pid, escaped(name), timeS * 1e6, value));
}

std::string ChromeTrace::json() const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{";
  out += fmt::format(
      "\"generator\":\"scoville\",\"window_start_s\":{},\"window_end_s\":{},\"slices\":{},"
      "\"slices_dropped\":{}}},\n\"traceEvents\":[\n",
      m_options.startS, m_options.endS, m_slices.size(), m_dropped);
  bool first = true;
  const auto line = [&](const std::string& event) {
    out += first ? "" : ",\n";
    out += event;
    first = false;
  };
  for (const auto& [name, pid] : m_processes) {
    line(fmt::format("{{\"ph\":\"M\",\"pid\":{},\"name\":\"process_name\",\"args\":{{\"name\":\"{}\"}}}}", pid,
                     escaped(name)));
    line(fmt::format("{{\"ph\":\"M\",\"pid\":{},\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{}}}}}", pid,
                     pid));
  }
  for (const auto& [key, name] : m_threadNames) {
    line(fmt::format("{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"{}\"}}}}",
                     key.first, key.second, escaped(name)));
  }
  for (const Slice& s : m_slices) {
    line(
        fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{:.4f},\"dur\":{:.4f},\"name\":\"{}\",\"cat\":\"{}\","
                    "\"args\":{{{}}}}}",
                    s.process, s.thread, s.startUs, s.durationUs, escaped(s.name), s.category, s.args));
  }
  for (const std::string& c : m_counters) line(c);
  out += "\n]}\n";
  return out;
}

}  // namespace scoville::trace
