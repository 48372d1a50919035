#pragma once
// Refresh of one DRAM channel (`hbm.refresh`, chosen from refreshPolicyNames()):
// - all_bank: every tREFI the whole channel stops for tRFC and every row closes. The first refresh
//   of channel c of C is due at tREFI x (1 + c / C), staggering the channels. Refreshes due before
//   a request arrives block its commands until they end; refreshes falling due while its data
//   moves stretch the transfer by tRFC each.
// - per_bank: each bank is refreshed once per tREFI on its own (REFpb, as HBM3 and LPDDR5 allow):
//   bank b of B at the channel's phase + tREFI x b / B + k tREFI, for t_rfc_pb, closing its row.
//   Only that bank waits; the others and the data bus go on.
// - same_bank: the banks of one index in every bank group together (REFsb, as DDR5): index i of
//   banks_per_group at the channel's phase + tREFI x i / banks_per_group + k tREFI, for t_rfc_sb.
// Rows closed by a per-bank or same-bank refresh are closed when a request arrives after it.
//
// The counts: `refreshes` in all-bank equivalents (a per-bank refresh counts 1 / banks, a
// same-bank one 1 / banks_per_group: that is how refresh energy scales), `bankRefreshes` in
// REFpb / REFsb commands.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/dram/DramCommandCounts.h"
#include "hw/dram/MemoryControllerConfig.h"

namespace scoville::hw {

class AddressDecoder;
class BankMachine;

class RefreshPolicy {
 public:
  virtual ~RefreshPolicy() = default;
  /// Issues the refreshes due by `time` (a request arrives) and closes the rows they close.
  virtual void catchUp(double time, BankMachine& banks, DramCommandCounts& counts) = 0;
  /// Until when the channel may issue no command (all-bank refresh).
  virtual double blockedUntil() const = 0;
  /// The earliest time at or after `at` when `bank` is not being refreshed.
  virtual double activateNotBefore(uint64_t bank, double at) const = 0;
  /// A data transfer would end at `end`: returns its end after the refreshes that fall due
  /// meanwhile (all-bank refresh stretches it).
  virtual double duringTransfer(double end, DramCommandCounts& counts) = 0;
  /// Refreshes at `rate` times the normal rate (every tREFI / rate) from `time` on (the memory
  /// controller doubles it above the stacks' refresh temperature limit). Refreshes due before
  /// `time` keep the rate they had.
  virtual void setRate(double time, double rate) = 0;
};

/// All-bank refresh (see above). Declared here, final and inline, so that the channel's default path
/// calls it without a virtual call: it runs for every segment.
class AllBankRefresh final : public RefreshPolicy {
 public:
  AllBankRefresh(const DramTimingConfig& timing, double firstRefresh, double lockstep)
      : m_t(timing), m_refi(timing.tREFI), m_lockstep(lockstep), m_nextRefresh(firstRefresh) {}

  void catchUp(double time, BankMachine& banks, DramCommandCounts& counts) override {
    // Most segments find none due.
    if (m_nextRefresh <= time || m_pendingRefreshes > 0.0) refreshDue(time, banks, counts);
  }
  double blockedUntil() const override { return m_blockedUntil; }
  double activateNotBefore(uint64_t, double at) const override { return at; }
  double duringTransfer(double end, DramCommandCounts& counts) override {
    while (m_nextRefresh < end) {
      end += m_t.tRFC;
      m_blockedUntil = std::max(m_blockedUntil, m_nextRefresh + m_t.tRFC);
      m_nextRefresh += m_refi;
      counts.refreshes += m_lockstep;
    }
    return end;
  }
  void setRate(double time, double rate) override;

 private:
  /// catchUp once a refresh is due by `time`.
  void refreshDue(double time, BankMachine& banks, DramCommandCounts& counts);
  /// Moves the schedule past the refreshes due by `time` (the channel blocked for the last one's
  /// tRFC); returns how many there were.
  double issueDue(double time);

  const DramTimingConfig& m_t;
  double m_refi;  ///< tREFI / rate
  double m_lockstep;
  double m_nextRefresh;
  double m_blockedUntil = 0.0;
  /// Refreshes at the old rate that fell due before a rate change and are not yet counted.
  double m_pendingRefreshes = 0.0;
};

/// Builds the policy `name` for channel `index` of the channels `timed` describes (a lockstep
/// group counts each refresh `lockstep` times); throws std::invalid_argument for an unknown name.
std::unique_ptr<RefreshPolicy> makeRefreshPolicy(const std::string& name, const MemoryControllerConfig& timed,
                                                 const AddressDecoder& decoder, int index, double lockstep);
/// The names makeRefreshPolicy() accepts: all_bank, per_bank, same_bank.
const std::vector<std::string>& refreshPolicyNames();

}  // namespace scoville::hw
