#include "hw/dram/RefreshPolicy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "hw/dram/AddressDecoder.h"
#include "hw/dram/BankMachine.h"
#include "hw/dram/DramChannel.h"
#include "hw/dram/MemoryControllerConfig.h"
#include "hw/dram/PolicyTable.h"

namespace scoville::hw {

namespace {

/// The channel's first all-bank refresh (and the phase of its per-bank schedule).
double firstRefresh(const MemoryControllerConfig& timed, int index) {
  // Staggered so that channels do not all stall together.
  return timed.timing.tREFI * (1.0 + static_cast<double>(index) / timed.channels);
}

/// Per-bank and same-bank refresh: `slots` groups of banks refreshed in turn, each once per tREFI.
class BankSlots : public RefreshPolicy {
 public:
  BankSlots(const MemoryControllerConfig& timed, std::vector<int> slotOf, int slots, double duration, int index,
            double lockstep)
      : m_refi(timed.timing.tREFI),
        m_duration(duration),
        m_slotOf(std::move(slotOf)),
        m_slots(slots),
        m_lockstep(lockstep) {
    const double phase = firstRefresh(timed, index);
    for (int s = 0; s < slots; ++s) m_first.push_back(phase + m_refi * s / slots);
    m_before.assign(static_cast<std::size_t>(slots), 0.0);
  }

  void catchUp(double time, BankMachine& banks, DramCommandCounts& counts) override {
    if (time <= m_caughtUp) return;
    double issued = 0.0;
    for (int s = 0; s < m_slots; ++s) issued += since(s, time);
    for (std::size_t b = 0; b < m_slotOf.size(); ++b) {
      if (since(m_slotOf[b], time) > 0.0 && banks.closeForRefresh(b)) counts.precharges += m_lockstep;
    }
    counts.bankRefreshes += issued * m_lockstep;
    counts.refreshes += issued / m_slots * m_lockstep;
    m_caughtUp = time;
    m_pending.clear();
  }
  double blockedUntil() const override { return -std::numeric_limits<double>::infinity(); }
  double activateNotBefore(uint64_t bank, double at) const override {
    const double first = m_first[static_cast<std::size_t>(m_slotOf[bank])];
    if (at < first) return at;
    const double start = first + std::floor((at - first) / m_refi) * m_refi;
    return at < start + m_duration ? start + m_duration : at;
  }
  double duringTransfer(double end, DramCommandCounts&) override { return end; }
  void setRate(double time, double rate) override {
    // The refreshes started since the last catch-up stay pending for the next; each slot's
    // schedule restarts at its next refresh, at the new interval.
    const double at = std::max(time, m_caughtUp);
    if (m_pending.empty()) m_pending.assign(static_cast<std::size_t>(m_slots), 0.0);
    for (int s = 0; s < m_slots; ++s) {
      const auto i = static_cast<std::size_t>(s);
      m_pending[i] += startedBy(s, at) - startedBy(s, m_caughtUp);
      const double started = startedBy(s, at);
      m_first[i] = m_first[i] + (started - m_before[i]) * m_refi;
      m_before[i] = started;
    }
    m_caughtUp = at;
    m_refi = m_refi * m_rate / rate;
    m_rate = rate;
  }

 private:
  /// Refreshes of slot s started in (m_caughtUp, time], those pending from a rate change included.
  double since(int s, double time) const {
    const double pending = m_pending.empty() ? 0.0 : m_pending[static_cast<std::size_t>(s)];
    return pending + startedBy(s, time) - startedBy(s, m_caughtUp);
  }

  /// Refreshes of slot s that started at or before `time` (not before the last rate change).
  double startedBy(int s, double time) const {
    const auto i = static_cast<std::size_t>(s);
    const double first = m_first[i];
    return m_before[i] + (time < first ? 0.0 : std::floor((time - first) / m_refi) + 1.0);
  }

  double m_refi;
  double m_duration;
  std::vector<int> m_slotOf;  ///< bank -> slot
  int m_slots;
  double m_lockstep;
  std::vector<double> m_first;    ///< slot -> its first refresh (since the last rate change)
  std::vector<double> m_before;   ///< slot -> refreshes it started before m_first
  std::vector<double> m_pending;  ///< slot -> refreshes started before a rate change, not yet caught up
  double m_rate = 1.0;
  double m_caughtUp = -1.0;
};

std::unique_ptr<RefreshPolicy> perBank(const MemoryControllerConfig& timed, const AddressDecoder& decoder, int index,
                                       double lockstep) {
  std::vector<int> slotOf(decoder.banks());
  for (std::size_t b = 0; b < slotOf.size(); ++b) slotOf[b] = static_cast<int>(b);
  return std::make_unique<BankSlots>(timed, std::move(slotOf), static_cast<int>(decoder.banks()), timed.timing.tRFCpb,
                                     index, lockstep);
}

std::unique_ptr<RefreshPolicy> sameBank(const MemoryControllerConfig& timed, const AddressDecoder& decoder, int index,
                                        double lockstep) {
  // Slot i: the i-th bank of every bank group.
  std::vector<int> slotOf(decoder.banks());
  std::vector<int> seen(static_cast<std::size_t>(timed.bankGroups), 0);
  for (std::size_t b = 0; b < slotOf.size(); ++b) slotOf[b] = seen[static_cast<std::size_t>(decoder.groupOf(b))]++;
  return std::make_unique<BankSlots>(timed, std::move(slotOf), timed.banksPerGroup, timed.timing.tRFCsb, index,
                                     lockstep);
}

using RefreshFactory = std::unique_ptr<RefreshPolicy> (*)(const MemoryControllerConfig&, const AddressDecoder&, int,
                                                          double);
const PolicyTable<RefreshFactory>& refreshPolicies() {
  static const PolicyTable<RefreshFactory> kRegistry{
      {"all_bank",
       [](const MemoryControllerConfig& timed, const AddressDecoder&, int index, double lockstep) {
         return std::unique_ptr<RefreshPolicy>(new AllBankRefresh(timed.timing, firstRefresh(timed, index), lockstep));
       }},
      {"per_bank", perBank},
      {"same_bank", sameBank},
  };
  return kRegistry;
}

}  // namespace

void AllBankRefresh::refreshDue(double time, BankMachine& banks, DramCommandCounts& counts) {
  // Every refresh due by `time` has happened; an idle gap costs O(1), not O(gap / tREFI).
  const double missed = m_pendingRefreshes + issueDue(time);
  m_pendingRefreshes = 0.0;
  banks.closeAll(m_blockedUntil);
  counts.refreshes += missed * m_lockstep;
}

double AllBankRefresh::issueDue(double time) {
  if (m_nextRefresh > time) return 0.0;
  const double due = std::floor((time - m_nextRefresh) / m_refi) + 1.0;
  const double lastStart = m_nextRefresh + (due - 1.0) * m_refi;
  m_blockedUntil = std::max(m_blockedUntil, lastStart) + m_t.tRFC;
  m_nextRefresh = lastStart + m_refi;
  return due;
}

void AllBankRefresh::setRate(double time, double rate) {
  // The refreshes due before `time` at the old rate, counted at the next catch-up.
  m_pendingRefreshes += issueDue(time);
  m_refi = m_t.tREFI / rate;
}

std::unique_ptr<RefreshPolicy> makeRefreshPolicy(const std::string& name, const MemoryControllerConfig& timed,
                                                 const AddressDecoder& decoder, int index, double lockstep) {
  return policyFactory(refreshPolicies(), name, "HBM refresh policy")(timed, decoder, index, lockstep);
}

const std::vector<std::string>& refreshPolicyNames() {
  static const std::vector<std::string> kNames = policyNames(refreshPolicies());
  return kNames;
}

}  // namespace scoville::hw
