#pragma once
// Timing of one DRAM (pseudo-)channel, or of a lockstep group of them timed as one
// (MemoryControllerConfig::lockstepGroups). The channel joins its parts, each a concern of its
// own:
// - AddressDecoder: which bank, bank group and row a page is in (named mappings);
// - BankMachine: each bank's open row, and the page policy (open, closed, adaptive);
// - TimingChecker: the command rules of the timing set (tRCD, tRP, tCL, tRAS, tRRD_S/L, tFAW);
// - RefreshPolicy: all-bank, per-bank or same-bank refresh;
// - DataBus: the shared data bus with its read/write turnarounds.
//
// A request's part on this channel (a segment: one contiguous channel-local range) is served in
// one call. Its pages are scheduled command by command against the bank states (row hit, miss on
// a closed bank, or conflict needing PRE). Data moves at the channel's bandwidth once the first
// page is ready, never ahead of the last page's readiness. The model is pure C++ (seconds as
// double) so it can be unit-tested without a simulation.
//
// Closed forms. With the default parts (bank_group_interleaved mapping, open page, all-bank
// refresh) two closed forms stand in for the page-by-page schedule, and give the same times:
// - Only a segment's first min(pages, banks) pages are scheduled exactly; further pages of a long
//   stream follow at the steady-state activation period max(tRRD_S, tFAW/4, tRC/banks), each a
//   row conflict.
// - Streams take a shortcut. After a segment's first activation, its other pages (consecutive
//   banks, so the tRRD between them is known) would activate at the times the tRRD/tFAW
//   recurrence gives from the last four activations, unless a page finds its row open or its
//   bank's own constraint (tRAS + tRP, refresh) is later. Those times have a closed form; when
//   every page's bank is checked and none of the exceptions holds, the closed form is the
//   schedule (equal up to floating-point rounding); otherwise the pages are scheduled one by one.
//   A bank's own constraint cannot bind once even the newest activation before the segment has
//   precharged by the first page's time (every open bank's activation is at or before it): then
//   only pages found open are looked for. `setStreamShortcut(false)` always schedules one by one
//   (tests compare the two).
// Any other mapping, page policy or refresh schedules every page of every segment one by one.

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "hw/dram/AddressDecoder.h"
#include "hw/dram/BankMachine.h"
#include "hw/dram/DataBus.h"
#include "hw/dram/DramCommandCounts.h"
#include "hw/dram/MemoryControllerConfig.h"
#include "hw/dram/RefreshPolicy.h"
#include "hw/dram/TimingChecker.h"

namespace scoville::hw {

/// When a served segment's data moved.
struct DramService {
  double firstData = 0.0;  ///< first data beat on the bus
  double end = 0.0;        ///< last data beat done
  double busTime = 0.0;    ///< data-bus occupancy (bytes / channel bandwidth), summed over a lockstep group
};

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
  DramService serve(const InterleavedSegment& segment, double arrival, DramCommandCounts& counts);

  /// True when the segment's first page is open in its bank (what FR-FCFS looks for).
  bool isRowHit(const InterleavedSegment& segment) const;

  /// Whether streams take the closed-form shortcut (default) or every page is scheduled command
  /// by command. Both give the same times up to floating-point rounding.
  void setStreamShortcut(bool enabled) { m_streamShortcut = enabled; }

  /// Issues the refreshes due by `time` (closing the rows they close) and adds them to `counts`.
  void refreshUntil(double time, DramCommandCounts& counts) { m_refresh->catchUp(time, m_banks, counts); }

  /// Refreshes at `rate` times the normal rate from `time` (RefreshPolicy::setRate).
  void setRefreshRate(double time, double rate) { m_refresh->setRate(time, rate); }

 private:
  /// Page outcomes of one segment's exactly scheduled pages.
  struct PageCounts {
    uint64_t hits = 0;
    uint64_t misses = 0;      ///< closed bank: ACT
    uint64_t conflicts = 0;   ///< another row open: PRE + ACT
    uint64_t autoCloses = 0;  ///< rows the page policy closed (PRE)
  };
  /// Activates `bank` (PRE first if a row is open) no earlier than `earliest`; returns the time.
  [[gnu::always_inline]] inline double activate(uint64_t bank, double earliest, PageCounts& counts);
  /// The rest of activate() under a non-default page policy or refresh (kept out of its way).
  [[gnu::noinline]] double activateWithPolicies(uint64_t bank, int group, double at, bool conflict);
  /// The shortcut: activates the `count` (<= banks) pages from `firstPage` on in closed form,
  /// right after the newest activation, if that is the exact schedule; otherwise changes nothing
  /// and returns false. Without `keepBanks` the banks' rows are left for the caller to set.
  /// `known` and `latestAct` (the newest activation) describe the banks as the segment found
  /// them; the pages' banks are still in that state.
  bool streamPages(uint64_t firstPage, uint64_t count, double commandStart, bool keepBanks,
                   const BankMachine::Known& known, double latestAct, PageCounts& counts);
  /// The long-stream closed form: pages beyond the first `banks` revisit banks with a new row
  /// each, PRE + ACT at the steady-state period. Returns the last activation.
  double streamTail(uint64_t lastPage, uint64_t more, double firstAct, double lastAct, DramCommandCounts& counts);

  const MemoryControllerConfig& m_config;
  const DramTimingConfig& m_t;
  AddressDecoder m_decoder;
  TimingChecker m_timing;
  BankMachine m_banks;
  std::unique_ptr<RefreshPolicy> m_refresh;
  AllBankRefresh* m_allBank;  ///< m_refresh when it is all-bank (called without a virtual call), else null
  DataBus m_bus;
  std::vector<double> m_times;  ///< scratch of streamPages: its pages' activation times
  bool m_closedForms;           ///< the default parts: the closed forms above hold
  bool m_streamShortcut = true;
  uint64_t m_bankCount;
  double m_secondsPerByte;  ///< 1 / channel bandwidth
  double m_lockstep;        ///< channels this one stands for (MemoryControllerConfig::lockstepGroups)
};

}  // namespace scoville::hw
