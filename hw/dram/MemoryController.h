#pragma once
// HBM memory controller: splits each request over its channels (address interleaving) and times
// every channel's part with a DramChannel (banks, row buffers, tRCD/tRP/tCL/tRAS/tRRD/tFAW,
// read/write turnaround, refresh). Achieved bandwidth therefore emerges: a long sequential stream
// keeps every channel's data bus busy with activations hidden by bank parallelism (about 90% of
// peak after refresh with HBM3-class timings), while scattered small reads are bound by
// activations and latency; concurrent streams interleave on the channels.
//
// Loosely timed, requests are served on arrival, in call order (FCFS). Approximately timed, a
// request is accepted (END_REQ) while fewer than `queue_depth` requests are in flight — otherwise
// it waits (backpressure) — and its parts join per-channel queues. A channel picks its next part
// by the configured policy once the data of its previous part has started: FCFS takes the oldest,
// FR-FCFS the oldest row hit, else the oldest. The response is sent when all parts are done. An
// uncontended request sees the same timing in both modes. The controller latency is paid once per
// request on the way in.
//
// Simulation speed: with `lockstep_channels: N`, N adjacent channels are timed as one channel N
// times as wide (interleave granule, row and bandwidth; the same banks, timings and bursts),
// counting each of its commands N times. An interleaved stream spread evenly over the channels
// puts the same pages on each channel of a group at the same times, so the group's schedule is
// theirs, save that the group refreshes together where real channels are staggered. Small
// scattered accesses are coarser: a group activates and refreshes as a whole, so it has 1/N of
// the channels' bank parallelism. A request's cost in wall time is per timed channel touched.

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "hw/TimedTarget.h"
#include "hw/dram/DramChannel.h"
#include "hw/dram/DramScheduler.h"
#include "hw/dram/MemoryControllerConfig.h"
#include "stats/StatsGroup.h"

namespace scoville::hw {

/// Accepts kRead, kWrite, kKvRead and kKvAppend payloads; the size is OpExtension::bytes.
class MemoryController : public TimedTarget {
 public:
  MemoryController(const sc_core::sc_module_name& name, const MemoryControllerConfig& config);

  const MemoryControllerConfig& config() const { return m_config; }
  const stats::Group& stats() const { return m_stats; }
  /// Every channel refreshes at `rate` times the normal rate from `timeS` (temperature-controlled
  /// refresh: the chip's thermal control doubles it above the stacks' refresh limit).
  /// The commands issued so far (the `hbm` stats' counts).
  const DramCommandCounts& commands() const { return m_commands; }
  /// A serving run's sampled step replayed a recorded one (runtime/StepSampler.h) up to `timeS`:
  /// counts the commands `counts` it issued (the recorded step's, refreshes included) and issues
  /// the refreshes that fell due meanwhile without counting them again.
  void replayed(const DramCommandCounts& counts, double timeS);
  void setRefreshRate(double timeS, double rate) {
    for (DramChannel& channel : m_channels) channel.setRefreshRate(timeS, rate);
  }

 private:
  struct Request {
    ::tlm::tlm_generic_payload* payload = nullptr;
    int partsLeft = 0;
    double done = 0.0;  ///< latest end of its parts so far (seconds)
  };
  struct QueuedPart {
    InterleavedSegment segment;
    double arrival = 0.0;
    uint64_t request = 0;
  };

  sc_core::sc_time serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) override;
  bool admit() override;
  void startAt(::tlm::tlm_generic_payload& payload) override;
  /// Checks command and range; returns false (status set) for a bad request.
  bool validate(::tlm::tlm_generic_payload& payload, bool& write);
  void account(const ::tlm::tlm_generic_payload& payload, bool write);
  /// Emits the DRAM commands issued since `before` as activity of `op`.
  void emitCommands(const DramCommandCounts& before, const tlm::OpExtension& op, const sc_core::sc_time& start,
                    const sc_core::sc_time& when) const;
  /// Dispatches queued parts whose channel is ready; retires finished requests.
  void schedule();
  void dispatch(int channel);
  void rearm();

  MemoryControllerConfig m_config;
  MemoryControllerConfig m_timed;  ///< the channels as timed: lockstep groups of m_config's
  std::unique_ptr<DramScheduler> m_scheduler;
  std::vector<DramChannel> m_channels;
  std::vector<InterleavedSegment> m_segments;  // scratch
  DramCommandCounts m_commands;

  // Approximately-timed state.
  std::vector<std::deque<QueuedPart>> m_queues;
  std::vector<double> m_channelReadyAt;           // when a channel may pick its next part
  std::set<std::pair<double, int>> m_readyOrder;  // (ready time, channel) of channels with queued parts
  std::unordered_map<uint64_t, Request> m_requests;
  std::multiset<double> m_completions;  // done times of requests whose parts are all dispatched
  uint64_t m_nextRequest = 0;
  int m_inFlight = 0;
  sc_core::sc_event m_wake;

  stats::Group m_stats;
  stats::Counter& m_reads;
  stats::Counter& m_writes;
  stats::Counter& m_bytesRead;
  stats::Counter& m_bytesWritten;
  stats::Counter& m_kvBytesRead;
  stats::Counter& m_kvBytesWritten;
  stats::Counter& m_busBusyTime;
};

}  // namespace scoville::hw
