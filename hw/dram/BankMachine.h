#pragma once
// The banks of one DRAM channel: which row each holds open and when it was activated, and the
// page policy that decides after each access whether the row stays open.
//
// Page policies (`hbm.page_policy`, chosen from pagePolicyNames()):
// - open: a row stays open until another row of its bank is needed (PRE + ACT, a conflict) or a
//   refresh closes it. Best for streams and locality.
// - closed: every access ends with an auto-precharge, so the next access to the bank finds it
//   closed (ACT only, a miss) and may activate once the row cycle tRC after the previous ACT is
//   over: never a conflict's tRP on the critical path, never a hit.
// - adaptive: a 2-bit saturating predictor per bank. An access that hits, or that finds its bank
//   closed by the policy but wanting the row the policy closed, counts for keeping rows open; a
//   conflict, or a closed-bank access to another row, counts against. The row stays open while
//   the counter is 2 or 3 (it starts at 2).
//
// The arrays are public to DramChannel's stream closed forms through data(): they scan and set
// many banks at once.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace scoville::hw {

/// What one access found in its bank.
enum class PageOutcome { kHit, kMiss, kConflict };

/// After each access: whether its row stays open (see above).
class PagePolicy {
 public:
  virtual ~PagePolicy() = default;
  /// `wanted` is the row the access used; `closedRow` the row the policy itself closed last in
  /// this bank (-1 if none, or if something else closed it since).
  virtual bool keepOpen(uint64_t bank, PageOutcome outcome, int64_t wanted, int64_t closedRow) = 0;
  /// True only for the open-page policy (the stream closed forms assume it).
  virtual bool isOpenPage() const = 0;
};

/// Builds the policy named `name` for `banks` banks; throws std::invalid_argument otherwise.
std::unique_ptr<PagePolicy> makePagePolicy(const std::string& name, uint64_t banks);
/// The names makePagePolicy() accepts: open, closed, adaptive.
const std::vector<std::string>& pagePolicyNames();

class BankMachine {
 public:
  BankMachine(uint64_t banks, std::unique_ptr<PagePolicy> policy);

  /// What is known of every bank at once, so that the stream closed forms need not read them:
  /// all closed (after a refresh), or bank by bank the consecutive pages [windowFirst,
  /// windowFirst + banks) open (after a long stream). Any other change to the banks forgets it.
  struct Known {
    enum State { kUnknown, kAllClosed, kWindow } state = kAllClosed;
    uint64_t windowFirst = 0;
  };

  int64_t openRow(uint64_t bank) const { return m_openRow[bank]; }
  double actAt(uint64_t bank) const { return m_actAt[bank]; }
  /// The earliest ACT of a bank the page policy closed (its row cycle); -inf otherwise.
  double reopenAt(uint64_t bank) const { return m_reopenAt[bank]; }
  /// Earliest ACT of any bank after the last all-bank refresh.
  double banksReadyAt() const { return m_banksReadyAt; }

  void open(uint64_t bank, int64_t row, double actAt) {
    m_openRow[bank] = row;
    m_actAt[bank] = actAt;
  }
  /// An all-bank refresh ending at `readyAt` closed every row.
  void closeAll(double readyAt);
  /// A per-bank refresh closed `bank`'s row; returns whether one was open (a PRE was issued).
  bool closeForRefresh(uint64_t bank);
  /// After an access to `bank` (row `row`) with `outcome`: asks the page policy, and closes the
  /// row by auto-precharge if it says so (`rowCycleEnd`: when the bank may activate again).
  /// Returns whether a precharge was issued.
  bool afterAccess(uint64_t bank, int64_t row, PageOutcome outcome, double rowCycleEnd);
  /// The row the page policy closed in `bank` (-1 if none).
  int64_t closedRow(uint64_t bank) const { return m_closedRow[bank]; }
  bool openPage() const { return m_openPage; }

  Known& known() { return m_known; }
  int64_t* openRows() { return m_openRow.data(); }
  double* actTimes() { return m_actAt.data(); }

 private:
  std::vector<int64_t> m_openRow;  ///< -1: closed
  std::vector<double> m_actAt;     ///< last ACT (for tRAS and tRCD)
  std::vector<double> m_reopenAt;  ///< earliest next ACT after an auto-precharge
  std::vector<int64_t> m_closedRow;
  double m_banksReadyAt = 0.0;
  Known m_known;
  std::unique_ptr<PagePolicy> m_policy;
  bool m_openPage;
};

}  // namespace scoville::hw
