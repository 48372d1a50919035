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
  }

  void catchUp(double time, BankMachine& banks, DramCommandCounts& counts) override {
    if (time <= m_caughtUp) return;
    double issued = 0.0;
    for (int s = 0; s < m_slots; ++s) issued += startedBy(s, time) - startedBy(s, m_caughtUp);
    for (std::size_t b = 0; b < m_slotOf.size(); ++b) {
      const int s = m_slotOf[b];
      if (startedBy(s, time) > startedBy(s, m_caughtUp) && banks.closeForRefresh(b)) counts.precharges += m_lockstep;
    }
    counts.bankRefreshes += issued * m_lockstep;
    counts.refreshes += issued / m_slots * m_lockstep;
    m_caughtUp = time;
  }
  double blockedUntil() const override { return -std::numeric_limits<double>::infinity(); }
  double activateNotBefore(uint64_t bank, double at) const override {
    const double first = m_first[static_cast<std::size_t>(m_slotOf[bank])];
    if (at < first) return at;
    const double start = first + std::floor((at - first) / m_refi) * m_refi;
    return at < start + m_duration ? start + m_duration : at;
  }
  double duringTransfer(double end, DramCommandCounts&) override { return end; }

 private:
  /// Refreshes of slot s that started at or before `time`.
  double startedBy(int s, double time) const {
    const double first = m_first[static_cast<std::size_t>(s)];
    return time < first ? 0.0 : std::floor((time - first) / m_refi) + 1.0;
  }

  double m_refi;
  double m_duration;
  std::vector<int> m_slotOf;  ///< bank -> slot
  int m_slots;
  double m_lockstep;
  std::vector<double> m_first;  ///< slot -> its first refresh
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
  const double missed = std::floor((time - m_nextRefresh) / m_t.tREFI) + 1.0;
  const double lastStart = m_nextRefresh + (missed - 1.0) * m_t.tREFI;
  m_blockedUntil = std::max(m_blockedUntil, lastStart) + m_t.tRFC;
  banks.closeAll(m_blockedUntil);
  m_nextRefresh = lastStart + m_t.tREFI;
  counts.refreshes += missed * m_lockstep;
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
