#pragma once
// Timing of one DRAM (pseudo-)channel, or of a lockstep group of them timed as one
// (MemoryControllerConfig::lockstepGroups): banks in bank groups with row buffers, a shared
// command timeline (tRRD, tFAW), a shared data bus with read/write turnaround, and all-bank
// refresh.
//
// Address mapping inside a channel: consecutive row-sized pages rotate over the banks
// (bank = page mod banks, bank group = bank mod groups, row = page / banks), so a sequential
// stream activates banks round-robin and hides activation behind data transfer.
//
// A request's part on this channel (a segment: one contiguous channel-local range) is served in
// one call. Its first min(pages, banks) pages are scheduled command by command against the bank
// states (row hit, miss on a closed bank, or conflict needing PRE; tRCD, tRP, tRAS, tRRD_S/L,
// tFAW); further pages of a long stream follow in closed form at the steady-state activation
// period max(tRRD_S, tFAW/4, tRC/banks), each a row conflict. Data moves at the channel's
// bandwidth once the first page is ready, never ahead of the last page's readiness. Refresh
// blocks the channel for tRFC every tREFI (staggered per channel) and closes every row. The
// model is pure C++ (seconds as double) so it can be unit-tested without a simulation.
//
// Streams take a shortcut to the same schedule. After a segment's first activation, its other
// pages (consecutive banks, so the tRRD between them is known) would activate at the times the
// tRRD/tFAW recurrence gives from the last four activations, unless a page finds its row open or
// its bank's own constraint (tRAS + tRP, refresh) is later. Those times have a closed form; when
// every page's bank is checked and none of the exceptions holds, the closed form is the schedule
// (equal up to floating-point rounding); otherwise the pages are scheduled one by one. A bank's
// own constraint cannot bind once even the newest activation before the segment has precharged
// by the first page's time (every open bank's activation is at or before it): then only pages
// found open are looked for.
// `setStreamShortcut(false)` always schedules one by one (tests compare the two).

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "hw/MemoryControllerConfig.h"

namespace scoville::hw {

/// A contiguous range of one channel's local address space.
struct DramSegment {
  int channel = 0;
  uint64_t localAddress = 0;
  uint64_t bytes = 0;
  bool write = false;
};

/// DRAM commands and events issued, for statistics and energy.
struct DramCommandCounts {
  double activates = 0;
  double precharges = 0;
  double rowHits = 0;       ///< page found open
  double rowMisses = 0;     ///< bank was closed: ACT only
  double rowConflicts = 0;  ///< another row open: PRE + ACT
  double readBursts = 0;
  double writeBursts = 0;
  double refreshes = 0;
  double turnarounds = 0;
};

/// When a served segment's data moved.
struct DramService {
  double firstData = 0.0;  ///< first data beat on the bus
  double end = 0.0;        ///< last data beat done
  double busTime = 0.0;    ///< data-bus occupancy (bytes / channel bandwidth), summed over a lockstep group
};

/// Calls `visit(segment)` for each per-channel segment of [address, address + bytes) of the
/// controller's address space (granule g of size `granule` lives on channel g mod channels), in
/// channel order from the first granule's channel. Divisions are done once, not per channel.
template <typename Visit>
void forEachSegment(int channelCount, uint64_t granule, uint64_t address, uint64_t bytes, bool write, Visit&& visit) {
  if (bytes == 0) return;
  const auto channels = static_cast<uint64_t>(channelCount);
  const uint64_t firstGranule = address / granule;
  const uint64_t lastGranule = (address + bytes - 1) / granule;
  const uint64_t granules = lastGranule - firstGranule + 1;
  // Channel offset o holds granules firstGranule + o + j * channels, j = 0 .. count(o) - 1: the
  // first `extra` offsets one more than the others.
  const uint64_t perChannel = granules / channels;
  const uint64_t extra = granules % channels;
  uint64_t channel = firstGranule % channels;
  uint64_t row = firstGranule / channels;  // the granule's index within its channel
  const uint64_t end = address + bytes;
  for (uint64_t offset = 0; offset < std::min(granules, channels); ++offset) {
    const uint64_t g = firstGranule + offset;
    const uint64_t count = perChannel + (offset < extra ? 1 : 0);
    const uint64_t lastOfChannel = g + (count - 1) * channels;
    const uint64_t begin = std::max(address, g * granule);
    const uint64_t stop = std::min(end, (lastOfChannel + 1) * granule);
    const uint64_t localBegin = row * granule + (begin - g * granule);
    const uint64_t segmentBytes = (count - 1) * granule + (stop - lastOfChannel * granule) - (begin - g * granule);
    visit(DramSegment{static_cast<int>(channel), localBegin, segmentBytes, write});
    if (++channel == channels) {
      channel = 0;
      ++row;
    }
  }
}

/// The segments of forEachSegment, collected into `out` (cleared first).
inline void splitIntoSegments(int channels, uint64_t granule, uint64_t address, uint64_t bytes, bool write,
                              std::vector<DramSegment>& out) {
  out.clear();
  forEachSegment(channels, granule, address, bytes, write, [&out](const DramSegment& s) { out.push_back(s); });
}
inline void splitIntoSegments(const MemoryControllerConfig& config, uint64_t address, uint64_t bytes, bool write,
                              std::vector<DramSegment>& out) {
  splitIntoSegments(config.channels, static_cast<uint64_t>(config.interleaveBytes), address, bytes, write, out);
}

class DramChannel;

/// A whole request on its channels: when its last part is done and the bus time it used.
struct DramRequestService {
  double end = 0.0;
  double busTime = 0.0;
};

/// Serves [address, address + bytes), arriving at `arrival`, on `channels` (interleaved at
/// `granule`), each part after what its channel served before (LT: no reordering).
DramRequestService serveRequest(std::vector<DramChannel>& channels, uint64_t granule, uint64_t address, uint64_t bytes,
                                bool write, double arrival, DramCommandCounts& counts);

class DramChannel {
 public:
  DramChannel(const MemoryControllerConfig& config, int index);

  /// Serves `segment`, arriving at `arrival` seconds, after all segments served before it on
  /// this channel. Updates bank and bus state and adds the commands it issued to `counts`.
  DramService serve(const DramSegment& segment, double arrival, DramCommandCounts& counts);

  /// True when the segment's first page is open in its bank (what FR-FCFS looks for).
  bool isRowHit(const DramSegment& segment) const;

  /// When the data bus becomes free.
  double busFree() const { return m_busFree; }

  /// Whether streams take the closed-form shortcut (default) or every page is scheduled command
  /// by command. Both give the same times up to floating-point rounding.
  void setStreamShortcut(bool enabled) { m_streamShortcut = enabled; }

 private:
  /// Page outcomes of one segment's exactly scheduled pages.
  struct PageCounts {
    uint64_t hits = 0;
    uint64_t misses = 0;     ///< closed bank: ACT
    uint64_t conflicts = 0;  ///< another row open: PRE + ACT
  };
  /// Activates `bank` (PRE first if a row is open) no earlier than `earliest`; returns the time.
  double activate(uint64_t bank, double earliest, PageCounts& counts);
  /// What is known of every bank at once, so that the stream shortcut need not read them: all
  /// closed (after a refresh), or bank by bank the consecutive pages [windowFirst, windowFirst +
  /// banks) open (after a long stream). Any other change to the banks forgets it.
  struct BanksKnown {
    enum State { kUnknown, kAllClosed, kWindow } state = kAllClosed;
    uint64_t windowFirst = 0;
  };
  /// The shortcut: activates the `count` (<= banks) pages from `firstPage` on in closed form,
  /// right after the newest activation, if that is the exact schedule; otherwise changes nothing
  /// and returns false. Without `keepBanks` the banks' rows are left for the caller to set.
  /// `known` and `latestAct` (the newest activation) describe the banks as the segment found
  /// them; the pages' banks are still in that state.
  bool streamPages(uint64_t firstPage, uint64_t count, double commandStart, bool keepBanks, const BanksKnown& known,
                   double latestAct, PageCounts& counts);
  /// Bank and row of a channel-local page (shifts when the bank count is a power of two: these
  /// run for every page of every segment).
  uint64_t bankOf(uint64_t page) const { return m_bankShift >= 0 ? page & m_bankMask : page % m_bankCount; }
  int64_t rowOf(uint64_t page) const {
    return static_cast<int64_t>(m_bankShift >= 0 ? page >> m_bankShift : page / m_bankCount);
  }
  int groupOf(uint64_t bank) const {
    return static_cast<int>(m_groupsPowerOfTwo ? bank & (m_groupCount - 1) : bank % m_groupCount);
  }
  uint64_t pageOf(uint64_t address) const { return m_rowShift >= 0 ? address >> m_rowShift : address / m_rowBytes; }
  void refreshUntil(double time, DramCommandCounts& counts);

  const MemoryControllerConfig& m_config;
  const DramTimingConfig& m_t;
  // Bank state, one entry per bank (arrays rather than structs: the stream shortcut scans them,
  // and a controller's channels should stay in cache together).
  std::vector<int64_t> m_openRow;  ///< -1: closed
  std::vector<double> m_actAt;     ///< last ACT (for tRAS and tRCD)
  std::vector<double> m_times;     ///< scratch of streamPages: its pages' activation times
  double m_banksReadyAt = 0.0;     ///< earliest ACT of any bank after the last refresh
  BanksKnown m_banks;              ///< all closed at the start
  /// phi[j]: the latest j-th activation after one at time 0 under tRRD (of different groups)
  /// and tFAW alone.
  std::array<double, 8> m_phi;
  bool m_fawBinds = false;   ///< tFAW >= 4 tRRD: phi[j + 4] = phi[j] + tFAW
  double m_steadyActPeriod;  ///< max(tRRD, tFAW / 4, tRC / banks): long streams' ACT period
  uint64_t m_bankCount;
  uint64_t m_groupCount;
  bool m_groupsPowerOfTwo = false;
  uint64_t m_bankMask = 0;
  int m_bankShift = -1;  ///< log2(banks), or -1 when not a power of two
  uint64_t m_rowBytes;
  int m_rowShift = -1;      ///< log2(row bytes), or -1
  double m_secondsPerByte;  ///< 1 / channel bandwidth
  uint64_t m_burstBytes;
  int m_burstShift = -1;  ///< log2(burst bytes), or -1
  double m_secondsPerBurst;
  double m_lockstep;                   ///< channels this one stands for (MemoryControllerConfig::lockstepGroups)
  std::array<double, 4> m_recentActs;  ///< last four ACTs, ring buffer (tFAW)
  int m_recentActNext = 0;
  double m_lastAct = -1.0;
  int m_lastActGroup = -1;
  double m_busFree = 0.0;
  bool m_lastWrite = false;
  bool m_busUsed = false;
  bool m_streamShortcut = true;
  double m_nextRefresh;
  double m_blockedUntil = 0.0;
};

}  // namespace scoville::hw
