#pragma once
// Energy binned in time at a bounded memory cost: the power model's timelines are made of these.

#include <cstddef>
#include <vector>

namespace scoville::power {

/// Energy in bins of `interval` from time 0, at most `maxBins` of them: when an event reaches past
/// the last one, adjacent pairs merge and the interval doubles. Energy is kept exactly; a long run
/// loses resolution, not joules, and its memory stays bounded.
class EnergyBins {
 public:
  EnergyBins(double intervalS, std::size_t maxBins);
  /// Adds `joules` spread evenly over [startS, endS] (all in one bin when equal).
  void add(double joules, double startS, double endS);
  /// The bin width now: the configured interval times a power of two.
  double interval() const { return m_interval; }
  std::size_t size() const { return m_bins.size(); }
  /// Energy of bin `b` (0 past the last event).
  double at(std::size_t b) const { return b < m_bins.size() ? m_bins[b] : 0.0; }
  const std::vector<double>& bins() const { return m_bins; }
  /// The bins merged to `intervalS`, a power-of-two multiple of interval().
  std::vector<double> resampled(double intervalS) const;
  /// Energy in [from, to), edge bins in proportion.
  double energyIn(double from, double to) const;

 private:
  void mergePairs();
  double m_interval;
  double m_perInterval;
  std::size_t m_maxBins;
  std::vector<double> m_bins;
};

/// Energy of `bins` (of width `interval` from time 0) in [from, to), edge bins in proportion.
double energyIn(const std::vector<double>& bins, double interval, double from, double to);

namespace detail {
/// Adds `joules` spread evenly over [s, e] to the bins numbered [first, first + size) of width
/// `interval` (bins[0] is bin `first`), growing them as needed; the part before bin `first` is
/// dropped. Bin b covers [b x interval, (b + 1) x interval).
void spread(std::vector<double>& bins, std::size_t first, double interval, double perInterval, double joules, double s,
            double e);
/// Energy in [from, to) of the bins numbered [first, first + size) of width `interval`.
double energyOf(const std::vector<double>& bins, std::size_t first, double interval, double from, double to);
/// The same over `size` bins stored `stride` values apart from `bins` (several timelines kept
/// bin-major: bin b of timeline g at b x stride + g).
double energyOf(const double* bins, std::size_t size, std::size_t stride, std::size_t first, double interval,
                double from, double to);
/// Merges adjacent pairs of the bins of `stride` timelines kept bin-major in `bins` (an odd last bin
/// stays alone): half as many bins, every joule kept.
void mergePairs(std::vector<double>& bins, std::size_t stride);
}  // namespace detail

}  // namespace scoville::power
