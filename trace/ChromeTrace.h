#pragma once
// A Perfetto / Chrome trace of a run (JSON trace-event format, loadable in ui.perfetto.dev and
// chrome://tracing). It only listens: every unit's activity events become slices on that unit's
// track, within a time window so that files stay small. docs/trace.md.
//
// Tracks: one process per chip (its tensor core, vector unit, HBM controller, SRAM, on-chip
// interconnect, and its fabric ports), one for the network (switch output ports), one for the
// serving requests, one for power counters. Transactions a unit overlaps (pipelined memory
// requests, several messages on a port) go to numbered lanes of that unit ("hbm #1"): a trace
// viewer needs the slices of one track to nest, and these do not.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tlm/ActivityBus.h"

namespace scoville::trace {

struct ChromeTraceOptions {
  double startS = 0.0;              ///< the window: activity ending before it is left out
  double endS = 1e-3;               ///< activity starting after it is left out
  std::size_t maxSlices = 1000000;  ///< a bound on the file: later slices are counted, not kept
};

class ChromeTrace : public tlm::ActivityListener {
 public:
  explicit ChromeTrace(const ChromeTraceOptions& options);

  /// Records one slice per transaction and unit: MACs, vector ops, DRAM bursts and refreshes,
  /// SRAM and interconnect bytes, link and switch bytes (the other activities of the same
  /// transaction — operand bytes, ACT/PRE, packets — are the same interval again).
  void onActivity(const tlm::ActivityEvent& event) override;

  /// A serving request: waiting and prefill (arrival to first token) and decode (to finish,
  /// or to `endS` if it had not finished). Times in seconds.
  void addRequest(uint64_t id, double arrivalS, double firstTokenS, double finishS, bool finished);
  /// A counter sample (e.g. watts) on the counters track, from `timeS` until the next sample.
  void addCounter(const std::string& name, double timeS, double value);

  std::size_t slices() const { return m_slices.size(); }
  std::size_t dropped() const { return m_dropped; }

  /// The trace as JSON (`traceEvents` and metadata naming processes and threads), deterministic.
  std::string json() const;

 private:
  struct Track {
    int process = 0;
    std::string name;
    std::vector<double> laneEnds;  // when each lane's last slice ends
    std::size_t capacity = 0;      // lanes at most
    int firstThread = 0;           // thread id of lane 0; lane k is firstThread + k
  };
  struct Slice {
    int process = 0;
    int thread = 0;
    double startUs = 0.0;
    double durationUs = 0.0;
    std::string name;
    const char* category = "";
    std::string args;  // a JSON object's members
  };

  int processOf(const std::string& name);
  Track& track(const std::string& process, const std::string& unit, std::size_t capacity);
  /// The first lane of `track` free at `startS`, now busy until `endS`, as a thread id; -1 when
  /// every lane is busy.
  int lane(Track& track, double startS, double endS);
  void addSlice(int process, int thread, double startS, double endS, std::string name, const char* category,
                std::string args);

  ChromeTraceOptions m_options;
  std::map<std::string, int> m_processes;                  // name -> pid (1, 2, ... by first use)
  std::unordered_map<std::string, std::size_t> m_trackOf;  // track key -> index
  std::vector<Track> m_tracks;
  std::map<std::pair<int, int>, std::string> m_threadNames;  // (pid, tid) -> name
  int m_nextThread = 1;
  std::vector<Slice> m_slices;
  std::vector<std::string> m_counters;  // complete "C" events
  std::size_t m_dropped = 0;
};

}  // namespace scoville::trace
