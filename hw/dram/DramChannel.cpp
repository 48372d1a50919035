#include "hw/dram/DramChannel.h"

#include <algorithm>
#include <cmath>

namespace scoville::hw {

namespace {
/// The ACT-to-ACT gap of a stream's consecutive pages under `decoder`'s mapping.
double streamRrd(const MemoryControllerConfig& config, const AddressDecoder& decoder) {
  return config.bankGroups > 1 && decoder.rotatesGroups() ? config.timing.tRRDs : config.timing.tRRDl;
}
}  // namespace

DramChannel::DramChannel(const MemoryControllerConfig& config, int index)
    : m_config(config),
      m_t(config.timing),
      m_decoder(config),
      m_timing(config.timing, config.banks(), streamRrd(config, m_decoder)),
      m_banks(static_cast<uint64_t>(config.banks()),
              makePagePolicy(config.pagePolicy, static_cast<uint64_t>(config.banks()))),
      m_refresh(makeRefreshPolicy(config.refresh, config, m_decoder, index, config.lockstepChannels)),
      m_allBank(dynamic_cast<AllBankRefresh*>(m_refresh.get())),
      m_bus(config),
      m_times(static_cast<std::size_t>(config.banks()), 0.0),
      m_closedForms(m_decoder.rotatesGroups() && m_banks.openPage() && m_allBank != nullptr),
      m_bankCount(static_cast<uint64_t>(config.banks())),
      m_secondsPerByte(1.0 / config.channelBandwidth()),
      m_lockstep(config.lockstepChannels) {}

double DramChannel::activate(uint64_t bank, double earliest, PageCounts& counts) {
  double at = std::max(earliest, m_banks.banksReadyAt());
  const bool conflict = m_banks.openRow(bank) >= 0;
  if (conflict) {
    // Row conflict: precharge (not before tRAS after its ACT), then activate.
    at = m_timing.afterPrecharge(at, m_banks.actAt(bank));
    ++counts.conflicts;
  } else {
    ++counts.misses;
  }
  const int group = m_decoder.groupOf(bank);
  if (m_closedForms) return m_timing.activate(group, at);
  return activateWithPolicies(bank, group, at, conflict);
}

double DramChannel::activateWithPolicies(uint64_t bank, int group, double at, bool conflict) {
  // A bank the page policy closed waits for its row cycle; a bank being refreshed for its
  // refresh. Pushing past a refresh can meet tRRD/tFAW again, and the other way round.
  if (!conflict) at = std::max(at, m_banks.reopenAt(bank));
  for (;;) {
    const double clear = m_refresh->activateNotBefore(bank, at);
    at = m_timing.earliestActivate(group, clear);
    if (at == clear) break;
  }
  m_timing.recordActivate(group, at);
  return at;
}

bool DramChannel::streamPages(uint64_t firstPage, uint64_t count, double commandStart, bool keepBanks,
                              const BankMachine::Known& known, double latestAct, PageCounts& counts) {
  // The closed form assumes the tRRD of different groups from the newest activation on.
  const uint64_t firstBank = m_decoder.bankOf(firstPage);
  if (m_config.bankGroups > 1 && m_decoder.groupOf(firstBank) == m_timing.lastActGroup()) return false;
  // The last four activations, newest first.
  std::array<double, 4> r;
  for (std::size_t m = 0; m < 4; ++m) r[m] = m_timing.recentAct(m);
  // Stream page k is activation j = k + 1 after r[0]. The recurrence ACT(i) = max(ACT(i-1) +
  // tRRD, ACT(i-4) + tFAW) gives the latest path from any of the last four: from r[m] (m steps
  // back) it is r[m] + phi[j + m]. (A path from r[m] must leave by a tFAW step, and
  // tFAW + phi[j + m - 4] = phi[j + m] when tFAW >= 4 tRRD; otherwise phi is linear and those
  // paths never bind. Terms without such a path are below r[0] + phi[j] for the same reason.)
  const double* phi = m_timing.phi().data();
  double* t = m_times.data();  // page k's activation time (count <= banks)
  for (uint64_t k = 0; k < std::min<uint64_t>(count, 4); ++k) {
    t[k] = std::max(std::max(r[0] + phi[k + 1], r[1] + phi[k + 2]), std::max(r[2] + phi[k + 3], r[3] + phi[k + 4]));
  }
  // From the fifth page on, phi repeats: phi[j + 4] = phi[j] + tFAW when tFAW >= 4 tRRD, else
  // phi[j + 1] = phi[j] + tRRD, and so do the times.
  if (m_timing.fawBinds()) {
    for (uint64_t k = 4; k < count; ++k) t[k] = t[k - 4] + m_t.tFAW;
  } else {
    for (uint64_t k = 4; k < count; ++k) t[k] = t[k - 1] + phi[1];
  }
  int64_t* openRow = m_banks.openRows();
  const double* actAt = m_banks.actTimes();
  const double tRas = m_t.tRAS;
  const double tRp = m_t.tRP;
  const double ready = std::max(commandStart, m_banks.banksReadyAt());
  // The pages in two runs of consecutive banks: [0, inFirst) in banks firstBank... (row row0),
  // the rest wrapped round to banks 0... (row row0 + 1). Plain loops over each, without a wrap
  // test per page.
  const uint64_t inFirst = std::min(count, m_bankCount - firstBank);
  const int64_t row0 = m_decoder.rowOf(firstPage);
  const auto runs = [&](auto&& visit) {
    visit(uint64_t{0}, inFirst, firstBank, row0);
    visit(inFirst, count, uint64_t{0}, row0 + 1);
  };
  // Pass 1, without stores to the banks: whether any page is open already (a hit) or any bank's
  // own constraint is later than its time. Branch-free: every page is checked (they fall in
  // different banks: count <= banks).
  bool exception = false;
  uint64_t open = 0;
  // Without reading the banks when what is known of them settles it (page times only grow, so
  // the first page's time is the tightest): every bank closed and ready by then; or every bank
  // holding a page of a window this stream does not touch (no hit) with even the newest
  // activation before the segment precharged by then.
  const bool closedReady = known.state == BankMachine::Known::kAllClosed && ready <= t[0];
  const bool windowMissed = known.state == BankMachine::Known::kWindow &&
                            (firstPage + count <= known.windowFirst || firstPage >= known.windowFirst + m_bankCount) &&
                            std::max(ready, latestAct + tRas) + tRp <= t[0];
  // Otherwise, when even the newest activation before the segment (every open bank's is at or
  // before it: activations are issued in time order) has precharged by the first page's time, no
  // bank's own constraint binds, and only a page found open can break the closed form.
  const bool timingClear = std::max(ready, latestAct + tRas) + tRp <= t[0];
  if (closedReady || windowMissed) {
    open = known.state == BankMachine::Known::kWindow ? count : 0;
  } else if (timingClear) {
    runs([&](uint64_t k0, uint64_t k1, uint64_t b0, int64_t row) {
      for (uint64_t k = k0, b = b0; k < k1; ++k, ++b) {
        exception |= openRow[b] == row;
        open += openRow[b] >= 0 ? 1 : 0;
      }
    });
  } else {
    runs([&](uint64_t k0, uint64_t k1, uint64_t b0, int64_t row) {
      for (uint64_t k = k0, b = b0; k < k1; ++k, ++b) {
        const bool isOpen = openRow[b] >= 0;
        const double own = isOpen ? std::max(ready, actAt[b] + tRas) + tRp : ready;
        exception |= (own > t[k]) | (openRow[b] == row);
        open += isOpen ? 1 : 0;
      }
    });
  }
  if (exception) return false;
  // Pass 2: the banks take their rows (unless the segment goes on to take every bank anyway).
  if (keepBanks) {
    double* acts = m_banks.actTimes();
    runs([&](uint64_t k0, uint64_t k1, uint64_t b0, int64_t row) {
      for (uint64_t k = k0, b = b0; k < k1; ++k, ++b) {
        openRow[b] = row;
        acts[b] = t[k];
      }
    });
  }
  counts.conflicts += open;
  counts.misses += count - open;
  m_timing.recordActivations(t, count, m_decoder.groupOf(m_decoder.bankOf(firstPage + count - 1)));
  return true;
}

double DramChannel::streamTail(uint64_t lastPage, uint64_t more, double firstAct, double lastAct,
                               DramCommandCounts& counts) {
  const uint64_t banks = m_bankCount;
  const double period = m_timing.steadyActPeriod();
  // ACT(i) >= ACT(i-1) + period and ACT(i) >= ACT(i - banks) + tRC.
  lastAct = std::max(lastAct + static_cast<double>(more) * period,
                     firstAct + m_t.tRAS + m_t.tRP + static_cast<double>(more - 1) * period);
  counts.activates += static_cast<double>(more) * m_lockstep;
  counts.precharges += static_cast<double>(more) * m_lockstep;
  counts.rowConflicts += static_cast<double>(more) * m_lockstep;
  // The last `banks` pages hold the banks, one each: page k of them (oldest first) is in bank
  // (first + k) mod banks, activated at oldest + k x period. Two plain loops (no wrap test) so
  // that they vectorise.
  const uint64_t first = m_decoder.bankOf(lastPage + 1 - banks);
  const int64_t row = m_decoder.rowOf(lastPage + 1 - banks);
  const double oldest = lastAct - static_cast<double>(banks - 1) * period;
  int64_t* openRow = m_banks.openRows();
  double* actAt = m_banks.actTimes();
  for (uint64_t b = first; b < banks; ++b) {
    openRow[b] = row;
    actAt[b] = oldest + static_cast<double>(b - first) * period;
  }
  for (uint64_t b = 0; b < first; ++b) {
    openRow[b] = row + 1;
    actAt[b] = oldest + static_cast<double>(b + banks - first) * period;
  }
  m_banks.known() = BankMachine::Known{BankMachine::Known::kWindow, lastPage + 1 - banks};
  m_timing.setLastActivation(lastAct);
  return lastAct;
}

bool DramChannel::isRowHit(const InterleavedSegment& segment) const {
  const uint64_t page = m_decoder.pageOf(segment.localAddress);
  return m_banks.openRow(m_decoder.bankOf(page)) == m_decoder.rowOf(page);
}

DramService DramChannel::serve(const InterleavedSegment& segment, double arrival, DramCommandCounts& counts) {
  const uint64_t rowBytes = m_decoder.rowBytes();
  const uint64_t banks = m_bankCount;
  const uint64_t firstPage = m_decoder.pageOf(segment.localAddress);
  const uint64_t lastPage = m_decoder.pageOf(segment.localAddress + segment.bytes - 1);
  const uint64_t pages = lastPage - firstPage + 1;

  if (m_allBank != nullptr) {
    m_allBank->catchUp(arrival, m_banks, counts);
  } else {
    m_refresh->catchUp(arrival, m_banks, counts);
  }
  const double commandStart =
      std::max(arrival, m_allBank != nullptr ? m_allBank->blockedUntil() : m_refresh->blockedUntil());
  // What the stream shortcut may assume of the banks it has not touched yet.
  const BankMachine::Known known = m_banks.known();
  const double latestAct = m_timing.lastAct();
  m_banks.known().state = BankMachine::Known::kUnknown;

  // Pages touching each bank at most once (every page without the closed forms): schedule their
  // commands exactly.
  double firstReady = 0.0;
  double lastReady = 0.0;  // when the last page's data can start
  double firstAct = -1.0;
  double lastAct = commandStart;
  const uint64_t exact = m_closedForms ? std::min(pages, banks) : pages;
  PageCounts pageCounts;  // counted locally: the bank updates below cannot alias them
  bool triedShortcut = !m_closedForms;
  for (uint64_t i = 0; i < exact; ++i) {
    // After the first activation, the rest of the stream in closed form where it holds.
    if (m_streamShortcut && firstAct >= 0 && !triedShortcut) {
      triedShortcut = true;
      if (streamPages(firstPage + i, exact - i, commandStart, pages <= banks, known, latestAct, pageCounts)) {
        lastAct = m_timing.lastAct();
        lastReady = lastAct + m_t.tRCD + m_t.tCL;
        break;
      }
    }
    const uint64_t page = firstPage + i;
    const uint64_t bank = m_decoder.bankOf(page);
    const int64_t row = m_decoder.rowOf(page);
    double columnAt = 0.0;
    PageOutcome outcome = PageOutcome::kHit;
    if (m_banks.openRow(bank) == row) {
      ++pageCounts.hits;
      columnAt = std::max(commandStart, m_banks.actAt(bank) + m_t.tRCD);
    } else {
      outcome = m_banks.openRow(bank) >= 0 ? PageOutcome::kConflict : PageOutcome::kMiss;
      lastAct = activate(bank, commandStart, pageCounts);
      if (firstAct < 0) firstAct = lastAct;
      m_banks.open(bank, row, lastAct);
      columnAt = lastAct + m_t.tRCD;
    }
    if (!m_closedForms && m_banks.afterAccess(bank, row, outcome, m_timing.rowCycleEnd(m_banks.actAt(bank)))) {
      ++pageCounts.autoCloses;
    }
    lastReady = columnAt + m_t.tCL;
    if (i == 0) firstReady = lastReady;
  }
  // A lockstep group issues each command to all of its channels.
  counts.rowHits += static_cast<double>(pageCounts.hits) * m_lockstep;
  counts.rowMisses += static_cast<double>(pageCounts.misses) * m_lockstep;
  counts.rowConflicts += static_cast<double>(pageCounts.conflicts) * m_lockstep;
  counts.precharges += static_cast<double>(pageCounts.conflicts + pageCounts.autoCloses) * m_lockstep;
  counts.activates += static_cast<double>(pageCounts.misses + pageCounts.conflicts) * m_lockstep;
  // Further pages revisit banks with a new row each time: PRE + ACT at the steady-state period.
  if (pages > exact) {
    lastAct = streamTail(lastPage, pages - banks, firstAct >= 0 ? firstAct : commandStart, lastAct, counts);
    lastReady = lastAct + m_t.tRCD + m_t.tCL;
  }

  // The data bus: after the previous transfer (plus a turnaround when the direction changes).
  const double busReady = m_bus.readyFor(segment.write, counts.turnarounds, m_lockstep);
  const auto bursts = static_cast<double>(m_bus.bursts(segment.bytes));
  const double busTime = bursts * m_bus.secondsPerBurst();
  const double lastPageBytes =
      static_cast<double>(segment.localAddress + segment.bytes - std::max(segment.localAddress, lastPage * rowBytes));
  DramService service;
  service.firstData = std::max(firstReady, busReady);
  service.busTime = busTime * m_lockstep;  // each channel of the group is busy that long
  // Refreshes falling due while data moves stretch the transfer (all-bank refresh).
  const double dataEnd = std::max(service.firstData + busTime, lastReady + lastPageBytes * m_secondsPerByte);
  service.end =
      m_allBank != nullptr ? m_allBank->duringTransfer(dataEnd, counts) : m_refresh->duringTransfer(dataEnd, counts);
  (segment.write ? counts.writeBursts : counts.readBursts) += bursts;
  m_bus.occupy(service.end, segment.write);
  return service;
}

DramRequestService serveRequest(std::vector<DramChannel>& channels, uint64_t granule, uint64_t address, uint64_t bytes,
                                bool write, double arrival, DramCommandCounts& counts) {
  // Every part at the same arrival; the request ends with its last part.
  DramRequestService request{arrival, 0.0};
  forEachSegment(static_cast<int>(channels.size()), granule, address, bytes, write, [&](const InterleavedSegment& segment) {
    const DramService service = channels[static_cast<std::size_t>(segment.channel)].serve(segment, arrival, counts);
    request.end = std::max(request.end, service.end);
    request.busTime += service.busTime;
  });
  return request;
}

}  // namespace scoville::hw
