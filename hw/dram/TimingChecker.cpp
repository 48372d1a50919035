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

}  // namespace scoville::hw
