#include "hw/dram/TimingChecker.h"

#include <algorithm>

namespace scoville::hw {

TimingChecker::TimingChecker(const DramTimingConfig& timing, int banks, double streamRrd) : m_t(timing) {
  m_recentActs.fill(-1e9);
  m_fawBinds = m_t.tFAW >= 4.0 * streamRrd;
  m_steadyActPeriod = std::max({streamRrd, m_t.tFAW / 4.0, (m_t.tRAS + m_t.tRP) / banks});
  m_phi.fill(0.0);
  for (std::size_t j = 1; j < m_phi.size(); ++j) {
    m_phi[j] = m_phi[j - 1] + streamRrd;
    if (j >= 4) m_phi[j] = std::max(m_phi[j], m_phi[j - 4] + m_t.tFAW);
  }
}

void TimingChecker::recordActivations(const double* t, uint64_t count, int lastGroup) {
  if (count >= 4) {
    // The last four are the last four activations, oldest first (the next to be replaced).
    std::copy_n(t + count - 4, 4, m_recentActs.begin());
    m_recentActNext = 0;
  } else {
    for (uint64_t k = 0; k < count; ++k) {
      m_recentActs[m_recentActNext] = t[k];
      m_recentActNext = (m_recentActNext + 1) & 3;
    }
  }
  m_lastAct = t[count - 1];
  m_lastActGroup = lastGroup;
}

}  // namespace scoville::hw
