#include "hw/DramChannel.h"

#include <algorithm>
#include <cmath>

namespace scoville::hw {

void splitIntoSegments(int channelCount, uint64_t granule, uint64_t address, uint64_t bytes, bool write,
                       std::vector<DramSegment>& out) {
  out.clear();
  if (bytes == 0) return;
  const auto channels = static_cast<uint64_t>(channelCount);
  const uint64_t firstGranule = address / granule;
  const uint64_t lastGranule = (address + bytes - 1) / granule;
  const uint64_t granules = lastGranule - firstGranule + 1;
  // Channel offset o holds granules firstGranule + o + j * channels, j = 0 .. count(o) - 1: the
  // first `extra` offsets one more than the others. Divisions are done once, not per channel.
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
    out.push_back(DramSegment{static_cast<int>(channel), localBegin, segmentBytes, write});
    if (++channel == channels) {
      channel = 0;
      ++row;
    }
  }
}

DramChannel::DramChannel(const MemoryControllerConfig& config, int index)
    : m_config(config),
      m_t(config.timing),
      m_channelBandwidth(config.channelBandwidth()),
      m_banks(static_cast<std::size_t>(config.banks())),
      m_bankCount(static_cast<uint64_t>(config.banks())),
      m_rowBytes(static_cast<uint64_t>(config.rowBytes)),
      // Refresh is staggered so that channels do not all stall together.
      m_nextRefresh(config.timing.tREFI * (1.0 + static_cast<double>(index) / config.channels)) {
  m_recentActs.fill(-1e9);
  for (std::size_t i = 0; i < m_banks.size(); ++i) m_banks[i].group = static_cast<int>(i) % config.bankGroups;
  const auto log2Exact = [](uint64_t v) {
    if (v == 0 || (v & (v - 1)) != 0) return -1;
    int shift = 0;
    while ((uint64_t{1} << shift) < v) ++shift;
    return shift;
  };
  m_bankShift = log2Exact(m_bankCount);
  m_bankMask = m_bankCount - 1;
  m_rowShift = log2Exact(m_rowBytes);
}

double DramChannel::steadyActPeriod() const {
  const double rrd = m_config.bankGroups > 1 ? m_t.tRRDs : m_t.tRRDl;
  return std::max({rrd, m_t.tFAW / 4.0, (m_t.tRAS + m_t.tRP) / m_config.banks()});
}

void DramChannel::refreshUntil(double time, DramCommandCounts& counts) {
  if (m_nextRefresh > time) return;
  // Every refresh due by `time` has happened; an idle gap costs O(1), not O(gap / tREFI).
  const double missed = std::floor((time - m_nextRefresh) / m_t.tREFI) + 1.0;
  const double lastStart = m_nextRefresh + (missed - 1.0) * m_t.tREFI;
  m_blockedUntil = std::max(m_blockedUntil, lastStart) + m_t.tRFC;
  for (Bank& bank : m_banks) {
    bank.openRow = -1;
    bank.readyAt = m_blockedUntil;
  }
  m_nextRefresh = lastStart + m_t.tREFI;
  counts.refreshes += missed;
}

double DramChannel::activate(Bank& bank, double earliest, PageCounts& counts) {
  double at = std::max(earliest, bank.readyAt);
  if (bank.openRow >= 0) {
    // Row conflict: precharge (not before tRAS after its ACT), then activate.
    at = std::max(at, bank.actAt + m_t.tRAS) + m_t.tRP;
    ++counts.conflicts;
  } else {
    ++counts.misses;
  }
  const int group = bank.group;
  if (m_lastAct >= 0) at = std::max(at, m_lastAct + (group == m_lastActGroup ? m_t.tRRDl : m_t.tRRDs));
  at = std::max(at, m_recentActs[m_recentActNext] + m_t.tFAW);  // the oldest of the last four
  m_recentActs[m_recentActNext] = at;
  m_recentActNext = (m_recentActNext + 1) & 3;
  m_lastAct = at;
  m_lastActGroup = group;
  bank.actAt = at;
  return at;
}

bool DramChannel::isRowHit(const DramSegment& segment) const {
  const uint64_t page = pageOf(segment.localAddress);
  return m_banks[bankOf(page)].openRow == rowOf(page);
}

DramService DramChannel::serve(const DramSegment& segment, double arrival, DramCommandCounts& counts) {
  const uint64_t rowBytes = m_rowBytes;
  const uint64_t banks = m_bankCount;
  const uint64_t firstPage = pageOf(segment.localAddress);
  const uint64_t lastPage = pageOf(segment.localAddress + segment.bytes - 1);
  const uint64_t pages = lastPage - firstPage + 1;

  refreshUntil(arrival, counts);
  const double commandStart = std::max(arrival, m_blockedUntil);

  // Pages touching each bank at most once: schedule their commands exactly.
  double firstReady = 0.0;
  double lastReady = 0.0;  // when the last page's data can start
  double firstAct = -1.0;
  double lastAct = commandStart;
  const uint64_t exact = std::min(pages, banks);
  PageCounts pageCounts;  // counted locally: the bank updates below cannot alias them
  for (uint64_t i = 0; i < exact; ++i) {
    const uint64_t page = firstPage + i;
    Bank& bank = m_banks[bankOf(page)];
    const int64_t row = rowOf(page);
    double columnAt = 0.0;
    if (bank.openRow == row) {
      ++pageCounts.hits;
      columnAt = std::max(commandStart, bank.actAt + m_t.tRCD);
    } else {
      lastAct = activate(bank, commandStart, pageCounts);
      if (firstAct < 0) firstAct = lastAct;
      bank.openRow = row;
      columnAt = lastAct + m_t.tRCD;
    }
    lastReady = columnAt + m_t.tCL;
    if (i == 0) firstReady = lastReady;
  }
  counts.rowHits += static_cast<double>(pageCounts.hits);
  counts.rowMisses += static_cast<double>(pageCounts.misses);
  counts.rowConflicts += static_cast<double>(pageCounts.conflicts);
  counts.precharges += static_cast<double>(pageCounts.conflicts);
  counts.activates += static_cast<double>(pageCounts.misses + pageCounts.conflicts);
  // Further pages revisit banks with a new row each time: PRE + ACT at the steady-state period.
  if (pages > banks) {
    const double period = steadyActPeriod();
    const uint64_t more = pages - banks;
    // ACT(i) >= ACT(i-1) + period and ACT(i) >= ACT(i - banks) + tRC.
    const double chainStart = firstAct >= 0 ? firstAct : commandStart;
    lastAct = std::max(lastAct + static_cast<double>(more) * period,
                       chainStart + m_t.tRAS + m_t.tRP + static_cast<double>(more - 1) * period);
    counts.activates += static_cast<double>(more);
    counts.precharges += static_cast<double>(more);
    counts.rowConflicts += static_cast<double>(more);
    for (uint64_t page = lastPage + 1 - banks; page <= lastPage; ++page) {
      Bank& bank = m_banks[bankOf(page)];
      bank.openRow = rowOf(page);
      bank.actAt = lastAct - static_cast<double>(lastPage - page) * period;
    }
    m_lastAct = lastAct;
    lastReady = lastAct + m_t.tRCD + m_t.tCL;
  }

  // The data bus: after the previous transfer (plus a turnaround when the direction changes).
  double busReady = m_busFree;
  if (m_busUsed && m_lastWrite != segment.write) {
    busReady += m_lastWrite ? m_t.tWTR : m_t.tRTW;
    counts.turnarounds += 1;
  }
  const double bursts = std::ceil(static_cast<double>(segment.bytes) / m_config.burstBytes);
  const double busTime = bursts * m_config.burstBytes / m_channelBandwidth;
  const double lastPageBytes =
      static_cast<double>(segment.localAddress + segment.bytes - std::max(segment.localAddress, lastPage * rowBytes));
  DramService service;
  service.firstData = std::max(firstReady, busReady);
  service.busTime = busTime;
  service.end = std::max(service.firstData + busTime, lastReady + lastPageBytes / m_channelBandwidth);
  // Refreshes falling due while data moves stretch the transfer by tRFC each.
  while (m_nextRefresh < service.end) {
    service.end += m_t.tRFC;
    m_blockedUntil = std::max(m_blockedUntil, m_nextRefresh + m_t.tRFC);
    m_nextRefresh += m_t.tREFI;
    counts.refreshes += 1;
  }
  (segment.write ? counts.writeBursts : counts.readBursts) += bursts;
  m_busFree = service.end;
  m_lastWrite = segment.write;
  m_busUsed = true;
  return service;
}

}  // namespace scoville::hw
