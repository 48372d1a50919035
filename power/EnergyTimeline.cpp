#include "power/EnergyTimeline.h"

#include <algorithm>
#include <cmath>

namespace scoville::power {

namespace {
/// The groups' bins are this many coarse bins (about 10 ms): every event lands in one, and a run's
/// groups stay small enough to stay in cache.
constexpr double kGroupBinsPerCoarse = 10.0;
}  // namespace

const char* phaseName(std::size_t phase) {
  static constexpr std::array<const char*, kPhases> kNames{"prefill", "decode", "communication"};
  return phase < kPhases ? kNames[phase] : "?";
}

EnergyTimeline::EnergyTimeline(double intervalS, std::size_t maxBins, std::size_t groups)
    : EnergyTimeline(intervalS, EnergyBins(intervalS * std::max(1.0, std::round(1e-3 / intervalS)), maxBins), maxBins,
                     groups) {}

EnergyTimeline::EnergyTimeline(double intervalS, const EnergyBins& coarse, std::size_t maxBins, std::size_t groups)
    : m_fine(intervalS, maxBins),
      m_coarse{coarse, coarse, coarse},
      m_groups(groups),
      m_groupInterval(coarse.interval() * kGroupBinsPerCoarse),
      m_perGroupInterval(1.0 / (coarse.interval() * kGroupBinsPerCoarse)),
      m_maxBins(std::max<std::size_t>(2, maxBins)) {}

double* EnergyTimeline::growGroupsTo(double atS) {
  auto bin = static_cast<std::size_t>(std::max(0.0, atS) * m_perGroupInterval);
  while (bin >= m_maxBins) {
    // Past the cap, adjacent bins merge and the interval doubles (as EnergyBins does).
    detail::mergePairs(m_groupBins, m_groups);
    m_groupInterval *= 2.0;
    m_perGroupInterval = 1.0 / m_groupInterval;
    bin = static_cast<std::size_t>(std::max(0.0, atS) * m_perGroupInterval);
  }
  if ((bin + 1) * m_groups > m_groupBins.size()) m_groupBins.resize((bin + 1) * m_groups, 0.0);
  return &m_groupBins[bin * m_groups];
}

double EnergyTimeline::groupEnergy(std::size_t group, double startS, double endS) const {
  if (group >= m_groups || m_groupBins.empty()) return 0.0;
  return detail::energyOf(m_groupBins.data() + group, m_groupBins.size() / m_groups, m_groups, 0, m_groupInterval,
                          startS, endS);
}

double EnergyTimeline::phaseEnergy(std::size_t phase, double startS, double endS) const {
  return m_coarse[phase].energyIn(startS, endS);
}

}  // namespace scoville::power
