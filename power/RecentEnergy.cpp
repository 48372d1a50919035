#include "power/RecentEnergy.h"

#include <algorithm>

#include "power/EnergyBins.h"

namespace scoville::power {

RecentEnergy::RecentEnergy(double intervalS) : m_interval(intervalS), m_perInterval(1.0 / intervalS) {}

void RecentEnergy::add(double joules, double startS, double endS) {
  detail::spread(m_bins, m_first, m_interval, m_perInterval, joules, startS, endS);
}

double RecentEnergy::energyIn(double from, double to) const {
  return detail::energyOf(m_bins, m_first, m_interval, from, to);
}

void RecentEnergy::dropBefore(double timeS) {
  const auto keepFrom = static_cast<std::size_t>(std::max(0.0, timeS) * m_perInterval);
  if (keepFrom <= m_first) return;
  const std::size_t drop = std::min(keepFrom - m_first, m_bins.size());
  // Erase in large steps only, so that dropping stays amortised O(1) per bin.
  if (drop < 4096 || 2 * drop < m_bins.size()) return;
  m_bins.erase(m_bins.begin(), m_bins.begin() + static_cast<std::ptrdiff_t>(drop));
  m_first += drop;
}

}  // namespace scoville::power
