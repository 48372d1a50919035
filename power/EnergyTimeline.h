#pragma once
// A chip's (or the switches') dynamic energy over time: fine bins for peak and sustained power,
// coarse bins per phase for the energy inside a serving run's measurement window.

#include <array>
#include <cstddef>
#include <vector>

#include "power/EnergyBins.h"
#include "power/PowerConfig.h"

namespace scoville::power {

/// Phases dynamic energy is attributed to (tlm::LlmPhase order).
inline constexpr std::size_t kPhases = 3;
const char* phaseName(std::size_t phase);

/// Energy binned in time: all dynamic energy at the fine `interval` (for peak and sustained power),
/// and per phase and per group (a chip's levels) at a coarse interval (for energy inside a
/// measurement window). All are EnergyBins: past `maxBins` their intervals double.
class EnergyTimeline {
 public:
  /// The coarse bins are a whole number of fine ones, about 1 ms; `groups` coarse timelines besides
  /// the phases'.
  EnergyTimeline(double intervalS, std::size_t maxBins = kDefaultMaxBins, std::size_t groups = 0);
  /// Adds `joules` of `phase`, spread evenly over [startS, endS] (all in one bin when equal).
  void add(double joules, std::size_t phase, double startS, double endS) {
    if (joules == 0.0) return;
    m_fine.add(joules, startS, endS);
    m_coarse[phase < kPhases ? phase : kPhases - 1].add(joules, startS, endS);
  }
  /// The groups' coarse bin of `atS` (groups() values), to add a group's energy to directly (the
  /// caller adds the total with add()); valid until the next call. An event's whole energy goes to
  /// the bin of its middle: a group's energy in a window is then exact but for the events that
  /// straddle the window's edges, which it takes whole or not at all.
  double* groupsAt(double atS) {
    const auto bin = static_cast<std::size_t>(atS > 0.0 ? atS * m_perGroupInterval : 0.0);
    if ((bin + 1) * m_groups <= m_groupBins.size()) return &m_groupBins[bin * m_groups];
    return growGroupsTo(atS);
  }
  std::size_t groups() const { return m_groups; }
  /// Energy of group `group` in [startS, endS), coarse bins cut in proportion at the edges.
  double groupEnergy(std::size_t group, double startS, double endS) const;
  double interval() const { return m_fine.interval(); }
  double coarseInterval() const { return m_coarse[0].interval(); }
  std::size_t bins() const { return m_fine.size(); }
  /// Dynamic energy of fine bin `b`.
  double at(std::size_t b) const { return m_fine.at(b); }
  /// The fine bins (of width interval()).
  const std::vector<double>& fine() const { return m_fine.bins(); }
  const EnergyBins& fineBins() const { return m_fine; }
  /// Dynamic energy of `phase` in [startS, endS), coarse bins cut in proportion at the edges.
  double phaseEnergy(std::size_t phase, double startS, double endS) const;

 private:
  /// `coarse`: an empty phase timeline (each phase and group starts as a copy).
  EnergyTimeline(double intervalS, const EnergyBins& coarse, std::size_t maxBins, std::size_t groups);
  /// groupsAt() past the groups' last bin: grows them (merging past the cap) first.
  double* growGroupsTo(double atS);
  EnergyBins m_fine;
  std::array<EnergyBins, kPhases> m_coarse;
  /// The groups' coarse bins, bin-major (bin b of group g at b x groups + g), of width m_groupInterval:
  /// a whole event lands in one bin (cheaper than spreading it: the groups see every event).
  std::size_t m_groups;
  double m_groupInterval;
  double m_perGroupInterval;
  std::size_t m_maxBins;
  std::vector<double> m_groupBins;
};

}  // namespace scoville::power
