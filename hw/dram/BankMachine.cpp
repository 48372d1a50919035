#include "hw/dram/BankMachine.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "hw/dram/PolicyTable.h"

namespace scoville::hw {

namespace {

class OpenPage : public PagePolicy {
 public:
  bool keepOpen(uint64_t, PageOutcome, int64_t, int64_t) override { return true; }
  bool isOpenPage() const override { return true; }
};

class ClosedPage : public PagePolicy {
 public:
  bool keepOpen(uint64_t, PageOutcome, int64_t, int64_t) override { return false; }
  bool isOpenPage() const override { return false; }
};

class AdaptivePage : public PagePolicy {
 public:
  explicit AdaptivePage(uint64_t banks) : m_counter(banks, 2) {}
  bool keepOpen(uint64_t bank, PageOutcome outcome, int64_t wanted, int64_t closedRow) override {
    int& c = m_counter[bank];
    const bool locality = outcome == PageOutcome::kHit || (outcome == PageOutcome::kMiss && closedRow == wanted);
    const bool noLocality =
        outcome == PageOutcome::kConflict || (outcome == PageOutcome::kMiss && closedRow >= 0 && closedRow != wanted);
    if (locality) c = std::min(c + 1, 3);
    if (noLocality) c = std::max(c - 1, 0);
    return c >= 2;
  }
  bool isOpenPage() const override { return false; }

 private:
  std::vector<int> m_counter;
};

using PagePolicyFactory = std::unique_ptr<PagePolicy> (*)(uint64_t);
const PolicyTable<PagePolicyFactory>& pagePolicies() {
  static const PolicyTable<PagePolicyFactory> kRegistry{
      {"open", [](uint64_t) { return std::unique_ptr<PagePolicy>(new OpenPage()); }},
      {"closed", [](uint64_t) { return std::unique_ptr<PagePolicy>(new ClosedPage()); }},
      {"adaptive", [](uint64_t banks) { return std::unique_ptr<PagePolicy>(new AdaptivePage(banks)); }},
  };
  return kRegistry;
}

}  // namespace

std::unique_ptr<PagePolicy> makePagePolicy(const std::string& name, uint64_t banks) {
  return policyFactory(pagePolicies(), name, "HBM page policy")(banks);
}

const std::vector<std::string>& pagePolicyNames() {
  static const std::vector<std::string> kNames = policyNames(pagePolicies());
  return kNames;
}

BankMachine::BankMachine(uint64_t banks, std::unique_ptr<PagePolicy> policy)
    : m_openRow(banks, -1),
      m_actAt(banks, -1.0),
      m_reopenAt(banks, -std::numeric_limits<double>::infinity()),
      m_closedRow(banks, -1),
      m_policy(std::move(policy)),
      m_openPage(m_policy->isOpenPage()) {}

void BankMachine::closeAll(double readyAt) {
  std::fill(m_openRow.begin(), m_openRow.end(), -1);
  if (!m_openPage) std::fill(m_closedRow.begin(), m_closedRow.end(), -1);
  m_known = Known{Known::kAllClosed, 0};
  m_banksReadyAt = readyAt;
}

bool BankMachine::closeForRefresh(uint64_t bank) {
  m_closedRow[bank] = -1;
  m_known.state = Known::kUnknown;
  if (m_openRow[bank] < 0) return false;
  m_openRow[bank] = -1;
  return true;
}

bool BankMachine::afterAccess(uint64_t bank, int64_t row, PageOutcome outcome, double rowCycleEnd) {
  if (m_openPage) return false;
  if (m_policy->keepOpen(bank, outcome, row, m_closedRow[bank])) {
    m_closedRow[bank] = -1;
    return false;
  }
  m_openRow[bank] = -1;
  m_closedRow[bank] = row;
  m_reopenAt[bank] = rowCycleEnd;
  return true;
}

}  // namespace scoville::hw
