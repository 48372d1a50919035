#pragma once
// Timing of one DRAM (pseudo-)channel: banks in bank groups with row buffers, a shared command
// timeline (tRRD, tFAW), a shared data bus with read/write turnaround, and all-bank refresh.
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
  double busTime = 0.0;    ///< data-bus occupancy (bytes / channel bandwidth)
};

/// Splits [address, address + bytes) of the controller's address space into per-channel segments
/// (granule g of size `interleave` lives on channel g mod channels).
void splitIntoSegments(int channels, uint64_t interleave, uint64_t address, uint64_t bytes, bool write,
                       std::vector<DramSegment>& out);
inline void splitIntoSegments(const MemoryControllerConfig& config, uint64_t address, uint64_t bytes, bool write,
                              std::vector<DramSegment>& out) {
  splitIntoSegments(config.channels, static_cast<uint64_t>(config.interleaveBytes), address, bytes, write, out);
}

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

 private:
  struct Bank {
    int group = 0;  ///< bank group (index mod bank_groups)
    int64_t openRow = -1;
    double actAt = -1.0;   ///< last ACT (for tRAS)
    double readyAt = 0.0;  ///< earliest next ACT when closed (after PRE or refresh)
  };

  /// Page outcomes of one segment's exactly scheduled pages.
  struct PageCounts {
    uint64_t hits = 0;
    uint64_t misses = 0;     ///< closed bank: ACT
    uint64_t conflicts = 0;  ///< another row open: PRE + ACT
  };
  double activate(Bank& bank, double earliest, PageCounts& counts);
  /// Bank and row of a channel-local page (shifts when the bank count is a power of two: these
  /// run for every page of every segment).
  uint64_t bankOf(uint64_t page) const { return m_bankShift >= 0 ? page & m_bankMask : page % m_bankCount; }
  int64_t rowOf(uint64_t page) const {
    return static_cast<int64_t>(m_bankShift >= 0 ? page >> m_bankShift : page / m_bankCount);
  }
  uint64_t pageOf(uint64_t address) const { return m_rowShift >= 0 ? address >> m_rowShift : address / m_rowBytes; }
  void refreshUntil(double time, DramCommandCounts& counts);
  double steadyActPeriod() const;

  const MemoryControllerConfig& m_config;
  const DramTimingConfig& m_t;
  double m_channelBandwidth;
  std::vector<Bank> m_banks;
  uint64_t m_bankCount;
  uint64_t m_bankMask = 0;
  int m_bankShift = -1;  ///< log2(banks), or -1 when not a power of two
  uint64_t m_rowBytes;
  int m_rowShift = -1;                 ///< log2(row bytes), or -1
  std::array<double, 4> m_recentActs;  ///< last four ACTs, ring buffer (tFAW)
  int m_recentActNext = 0;
  double m_lastAct = -1.0;
  int m_lastActGroup = -1;
  double m_busFree = 0.0;
  bool m_lastWrite = false;
  bool m_busUsed = false;
  double m_nextRefresh;
  double m_blockedUntil = 0.0;
};

}  // namespace scoville::hw
