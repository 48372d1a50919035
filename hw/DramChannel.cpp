#include "hw/DramChannel.h"

#include <algorithm>
#include <cmath>

namespace scoville::hw {

DramChannel::DramChannel(const MemoryControllerConfig& config, int index)
    : m_config(config),
      m_t(config.timing),
      m_openRow(static_cast<std::size_t>(config.banks()), -1),
      m_actAt(static_cast<std::size_t>(config.banks()), -1.0),
      m_times(static_cast<std::size_t>(config.banks()), 0.0),
      m_bankCount(static_cast<uint64_t>(config.banks())),
      m_rowBytes(static_cast<uint64_t>(config.rowBytes)),
      m_secondsPerByte(1.0 / config.channelBandwidth()),
      m_burstBytes(static_cast<uint64_t>(config.burstBytes)),
      m_secondsPerBurst(config.burstBytes / config.channelBandwidth()),
      m_lockstep(config.lockstepChannels),
      // Refresh is staggered so that channels do not all stall together.
      m_nextRefresh(config.timing.tREFI * (1.0 + static_cast<double>(index) / config.channels)) {
  m_recentActs.fill(-1e9);
  m_groupCount = static_cast<uint64_t>(config.bankGroups);
  const auto log2Exact = [](uint64_t v) {
    if (v == 0 || (v & (v - 1)) != 0) return -1;
    int shift = 0;
    while ((uint64_t{1} << shift) < v) ++shift;
    return shift;
  };
  m_bankShift = log2Exact(m_bankCount);
  m_bankMask = m_bankCount - 1;
  m_rowShift = log2Exact(m_rowBytes);
  m_burstShift = log2Exact(m_burstBytes);
  m_groupsPowerOfTwo = log2Exact(m_groupCount) >= 0;
  // Consecutive pages map to consecutive banks, hence to different bank groups when there are
  // several (group = bank mod groups, and the bank count is a multiple of the groups).
  const double rrd = config.bankGroups > 1 ? m_t.tRRDs : m_t.tRRDl;
  m_fawBinds = m_t.tFAW >= 4.0 * rrd;
  m_steadyActPeriod = std::max({rrd, m_t.tFAW / 4.0, (m_t.tRAS + m_t.tRP) / config.banks()});
  m_phi.fill(0.0);
  for (std::size_t j = 1; j < m_phi.size(); ++j) {
    m_phi[j] = m_phi[j - 1] + rrd;
    if (j >= 4) m_phi[j] = std::max(m_phi[j], m_phi[j - 4] + m_t.tFAW);
  }
}

void DramChannel::refreshUntil(double time, DramCommandCounts& counts) {
  if (m_nextRefresh > time) return;
  // Every refresh due by `time` has happened; an idle gap costs O(1), not O(gap / tREFI).
  const double missed = std::floor((time - m_nextRefresh) / m_t.tREFI) + 1.0;
  const double lastStart = m_nextRefresh + (missed - 1.0) * m_t.tREFI;
  m_blockedUntil = std::max(m_blockedUntil, lastStart) + m_t.tRFC;
  std::fill(m_openRow.begin(), m_openRow.end(), -1);
  m_banks = BanksKnown{BanksKnown::kAllClosed, 0};
  m_banksReadyAt = m_blockedUntil;
  m_nextRefresh = lastStart + m_t.tREFI;
  counts.refreshes += missed * m_lockstep;
}

double DramChannel::activate(uint64_t bank, double earliest, PageCounts& counts) {
  double at = std::max(earliest, m_banksReadyAt);
  if (m_openRow[bank] >= 0) {
    // Row conflict: precharge (not before tRAS after its ACT), then activate.
    at = std::max(at, m_actAt[bank] + m_t.tRAS) + m_t.tRP;
    ++counts.conflicts;
  } else {
    ++counts.misses;
  }
  const int group = groupOf(bank);
  if (m_lastAct >= 0) at = std::max(at, m_lastAct + (group == m_lastActGroup ? m_t.tRRDl : m_t.tRRDs));
  at = std::max(at, m_recentActs[m_recentActNext] + m_t.tFAW);  // the oldest of the last four
  m_recentActs[m_recentActNext] = at;
  m_recentActNext = (m_recentActNext + 1) & 3;
  m_lastAct = at;
  m_lastActGroup = group;
  m_actAt[bank] = at;
  return at;
}

bool DramChannel::streamPages(uint64_t firstPage, uint64_t count, double commandStart, bool keepBanks,
                              const BanksKnown& known, double latestAct, PageCounts& counts) {
  // The closed form assumes the tRRD of different groups from the newest activation on.
  const uint64_t firstBank = bankOf(firstPage);
  if (m_config.bankGroups > 1 && groupOf(firstBank) == m_lastActGroup) return false;
  // The last four activations, newest first.
  std::array<double, 4> r;
  for (std::size_t m = 0; m < 4; ++m) r[m] = m_recentActs[(static_cast<std::size_t>(m_recentActNext) + 3 - m) & 3];
  // Stream page k is activation j = k + 1 after r[0]. The recurrence ACT(i) = max(ACT(i-1) +
  // tRRD, ACT(i-4) + tFAW) gives the latest path from any of the last four: from r[m] (m steps
  // back) it is r[m] + phi[j + m]. (A path from r[m] must leave by a tFAW step, and
  // tFAW + phi[j + m - 4] = phi[j + m] when tFAW >= 4 tRRD; otherwise phi is linear and those
  // paths never bind. Terms without such a path are below r[0] + phi[j] for the same reason.)
  const double* phi = m_phi.data();
  double* t = m_times.data();  // page k's activation time (count <= banks)
  for (uint64_t k = 0; k < std::min<uint64_t>(count, 4); ++k) {
    t[k] = std::max(std::max(r[0] + phi[k + 1], r[1] + phi[k + 2]), std::max(r[2] + phi[k + 3], r[3] + phi[k + 4]));
  }
  // From the fifth page on, phi repeats: phi[j + 4] = phi[j] + tFAW when tFAW >= 4 tRRD, else
  // phi[j + 1] = phi[j] + tRRD, and so do the times.
  if (m_fawBinds) {
    for (uint64_t k = 4; k < count; ++k) t[k] = t[k - 4] + m_t.tFAW;
  } else {
    for (uint64_t k = 4; k < count; ++k) t[k] = t[k - 1] + phi[1];
  }
  int64_t* openRow = m_openRow.data();
  const double* actAt = m_actAt.data();
  const double tRas = m_t.tRAS;
  const double tRp = m_t.tRP;
  const double ready = std::max(commandStart, m_banksReadyAt);
  // The pages in two runs of consecutive banks: [0, inFirst) in banks firstBank... (row row0),
  // the rest wrapped round to banks 0... (row row0 + 1). Plain loops over each, without a wrap
  // test per page.
  const uint64_t inFirst = std::min(count, m_bankCount - firstBank);
  const int64_t row0 = rowOf(firstPage);
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
  const bool closedReady = known.state == BanksKnown::kAllClosed && ready <= t[0];
  const bool windowMissed = known.state == BanksKnown::kWindow &&
                            (firstPage + count <= known.windowFirst || firstPage >= known.windowFirst + m_bankCount) &&
                            std::max(ready, latestAct + tRas) + tRp <= t[0];
  // Otherwise, when even the newest activation before the segment (every open bank's is at or
  // before it: activations are issued in time order) has precharged by the first page's time, no
  // bank's own constraint binds, and only a page found open can break the closed form.
  const bool timingClear = std::max(ready, latestAct + tRas) + tRp <= t[0];
  if (closedReady || windowMissed) {
    open = known.state == BanksKnown::kWindow ? count : 0;
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
    double* acts = m_actAt.data();
    runs([&](uint64_t k0, uint64_t k1, uint64_t b0, int64_t row) {
      for (uint64_t k = k0, b = b0; k < k1; ++k, ++b) {
        openRow[b] = row;
        acts[b] = t[k];
      }
    });
  }
  counts.conflicts += open;
  counts.misses += count - open;
  if (count >= 4) {
    // The last four pages are the last four activations, oldest first (the next to be replaced).
    std::copy_n(t + count - 4, 4, m_recentActs.begin());
    m_recentActNext = 0;
  } else {
    for (uint64_t k = 0; k < count; ++k) {
      m_recentActs[m_recentActNext] = t[k];
      m_recentActNext = (m_recentActNext + 1) & 3;
    }
  }
  m_lastAct = t[count - 1];
  m_lastActGroup = groupOf(bankOf(firstPage + count - 1));
  return true;
}

bool DramChannel::isRowHit(const DramSegment& segment) const {
  const uint64_t page = pageOf(segment.localAddress);
  return m_openRow[bankOf(page)] == rowOf(page);
}

DramService DramChannel::serve(const DramSegment& segment, double arrival, DramCommandCounts& counts) {
  const uint64_t rowBytes = m_rowBytes;
  const uint64_t banks = m_bankCount;
  const uint64_t firstPage = pageOf(segment.localAddress);
  const uint64_t lastPage = pageOf(segment.localAddress + segment.bytes - 1);
  const uint64_t pages = lastPage - firstPage + 1;

  refreshUntil(arrival, counts);
  const double commandStart = std::max(arrival, m_blockedUntil);
  // What the stream shortcut may assume of the banks it has not touched yet.
  const BanksKnown known = m_banks;
  const double latestAct = m_lastAct;
  m_banks.state = BanksKnown::kUnknown;

  // Pages touching each bank at most once: schedule their commands exactly.
  double firstReady = 0.0;
  double lastReady = 0.0;  // when the last page's data can start
  double firstAct = -1.0;
  double lastAct = commandStart;
  const uint64_t exact = std::min(pages, banks);
  PageCounts pageCounts;  // counted locally: the bank updates below cannot alias them
  bool triedShortcut = false;
  for (uint64_t i = 0; i < exact; ++i) {
    // After the first activation, the rest of the stream in closed form where it holds.
    if (m_streamShortcut && firstAct >= 0 && !triedShortcut) {
      triedShortcut = true;
      if (streamPages(firstPage + i, exact - i, commandStart, pages <= banks, known, latestAct, pageCounts)) {
        lastAct = m_lastAct;
        lastReady = lastAct + m_t.tRCD + m_t.tCL;
        break;
      }
    }
    const uint64_t page = firstPage + i;
    const uint64_t bank = bankOf(page);
    const int64_t row = rowOf(page);
    double columnAt = 0.0;
    if (m_openRow[bank] == row) {
      ++pageCounts.hits;
      columnAt = std::max(commandStart, m_actAt[bank] + m_t.tRCD);
    } else {
      lastAct = activate(bank, commandStart, pageCounts);
      if (firstAct < 0) firstAct = lastAct;
      m_openRow[bank] = row;
      columnAt = lastAct + m_t.tRCD;
    }
    lastReady = columnAt + m_t.tCL;
    if (i == 0) firstReady = lastReady;
  }
  // A lockstep group issues each command to all of its channels.
  counts.rowHits += static_cast<double>(pageCounts.hits) * m_lockstep;
  counts.rowMisses += static_cast<double>(pageCounts.misses) * m_lockstep;
  counts.rowConflicts += static_cast<double>(pageCounts.conflicts) * m_lockstep;
  counts.precharges += static_cast<double>(pageCounts.conflicts) * m_lockstep;
  counts.activates += static_cast<double>(pageCounts.misses + pageCounts.conflicts) * m_lockstep;
  // Further pages revisit banks with a new row each time: PRE + ACT at the steady-state period.
  if (pages > banks) {
    const double period = m_steadyActPeriod;
    const uint64_t more = pages - banks;
    // ACT(i) >= ACT(i-1) + period and ACT(i) >= ACT(i - banks) + tRC.
    const double chainStart = firstAct >= 0 ? firstAct : commandStart;
    lastAct = std::max(lastAct + static_cast<double>(more) * period,
                       chainStart + m_t.tRAS + m_t.tRP + static_cast<double>(more - 1) * period);
    counts.activates += static_cast<double>(more) * m_lockstep;
    counts.precharges += static_cast<double>(more) * m_lockstep;
    counts.rowConflicts += static_cast<double>(more) * m_lockstep;
    // The last `banks` pages hold the banks, one each: page k of them (oldest first) is in bank
    // (first + k) mod banks, activated at oldest + k x period. Two plain loops (no wrap test) so
    // that they vectorise.
    const uint64_t first = bankOf(lastPage + 1 - banks);
    const int64_t row = rowOf(lastPage + 1 - banks);
    const double oldest = lastAct - static_cast<double>(banks - 1) * period;
    int64_t* openRow = m_openRow.data();
    double* actAt = m_actAt.data();
    for (uint64_t b = first; b < banks; ++b) {
      openRow[b] = row;
      actAt[b] = oldest + static_cast<double>(b - first) * period;
    }
    for (uint64_t b = 0; b < first; ++b) {
      openRow[b] = row + 1;
      actAt[b] = oldest + static_cast<double>(b + banks - first) * period;
    }
    m_banks = BanksKnown{BanksKnown::kWindow, lastPage + 1 - banks};
    m_lastAct = lastAct;
    lastReady = lastAct + m_t.tRCD + m_t.tCL;
  }

  // The data bus: after the previous transfer (plus a turnaround when the direction changes).
  double busReady = m_busFree;
  if (m_busUsed && m_lastWrite != segment.write) {
    busReady += m_lastWrite ? m_t.tWTR : m_t.tRTW;
    counts.turnarounds += m_lockstep;
  }
  // Reciprocals and integer bursts: divisions here were a third of a segment's cost.
  const uint64_t roundedUp = segment.bytes + m_burstBytes - 1;
  const auto bursts = static_cast<double>(m_burstShift >= 0 ? roundedUp >> m_burstShift : roundedUp / m_burstBytes);
  const double busTime = bursts * m_secondsPerBurst;
  const double lastPageBytes =
      static_cast<double>(segment.localAddress + segment.bytes - std::max(segment.localAddress, lastPage * rowBytes));
  DramService service;
  service.firstData = std::max(firstReady, busReady);
  service.busTime = busTime * m_lockstep;  // each channel of the group is busy that long
  service.end = std::max(service.firstData + busTime, lastReady + lastPageBytes * m_secondsPerByte);
  // Refreshes falling due while data moves stretch the transfer by tRFC each.
  while (m_nextRefresh < service.end) {
    service.end += m_t.tRFC;
    m_blockedUntil = std::max(m_blockedUntil, m_nextRefresh + m_t.tRFC);
    m_nextRefresh += m_t.tREFI;
    counts.refreshes += m_lockstep;
  }
  (segment.write ? counts.writeBursts : counts.readBursts) += bursts;
  m_busFree = service.end;
  m_lastWrite = segment.write;
  m_busUsed = true;
  return service;
}

DramRequestService serveRequest(std::vector<DramChannel>& channels, uint64_t granule, uint64_t address, uint64_t bytes,
                                bool write, double arrival, DramCommandCounts& counts) {
  // Every part at the same arrival; the request ends with its last part.
  DramRequestService request{arrival, 0.0};
  forEachSegment(static_cast<int>(channels.size()), granule, address, bytes, write, [&](const DramSegment& segment) {
    const DramService service = channels[static_cast<std::size_t>(segment.channel)].serve(segment, arrival, counts);
    request.end = std::max(request.end, service.end);
    request.busTime += service.busTime;
  });
  return request;
}

}  // namespace scoville::hw
