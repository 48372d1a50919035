#pragma once
// The latest stretch of a chip's energy, for a power governor's telemetry.

#include <cstddef>
#include <vector>

namespace scoville::power {

/// The latest stretch of energy at a fixed interval, for a DVFS governor: its bins are those of
/// an unbounded timeline (the same arithmetic), less those before a time no decision reads again.
class RecentEnergy {
 public:
  explicit RecentEnergy(double intervalS);
  /// As EnergyBins::add; the part before the dropped bins is not kept.
  void add(double joules, double startS, double endS);
  /// Energy in [from, to), edge bins in proportion; `from` must not lie before the dropped bins.
  double energyIn(double from, double to) const;
  /// Bins that end at or before `timeS` may be forgotten.
  void dropBefore(double timeS);
  std::size_t kept() const { return m_bins.size(); }

 private:
  double m_interval;
  double m_perInterval;
  std::size_t m_first = 0;  ///< index (from time 0) of m_bins[0]
  std::vector<double> m_bins;
};

}  // namespace scoville::power
