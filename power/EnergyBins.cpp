#include "power/EnergyBins.h"

#include <algorithm>
#include <cmath>

namespace scoville::power {

namespace detail {

void spread(std::vector<double>& bins, std::size_t first, double interval, double perInterval, double joules, double s,
            double e) {
  const auto from = static_cast<std::size_t>(s * perInterval);
  const auto last = e > s ? static_cast<std::size_t>(e * perInterval) : from;
  if (last < first) return;
  if (bins.size() <= last - first) bins.resize(last - first + 1, 0.0);
  if (from == last) {
    bins[from - first] += joules;
    return;
  }
  const double rate = joules / (e - s);
  for (std::size_t b = std::max(from, first); b <= last; ++b) {
    const double lo = std::max(s, static_cast<double>(b) * interval);
    const double hi = std::min(e, static_cast<double>(b + 1) * interval);
    if (hi > lo) bins[b - first] += rate * (hi - lo);
  }
}

double energyOf(const std::vector<double>& bins, std::size_t first, double interval, double from, double to) {
  return energyOf(bins.data(), bins.size(), 1, first, interval, from, to);
}

double energyOf(const double* bins, std::size_t size, std::size_t stride, std::size_t first, double interval,
                double from, double to) {
  double sum = 0.0;
  for (auto b = std::max(first, static_cast<std::size_t>(std::max(0.0, from) / interval));
       b - first < size && static_cast<double>(b) * interval < to; ++b) {
    const double lo = std::max(from, static_cast<double>(b) * interval);
    const double hi = std::min(to, static_cast<double>(b + 1) * interval);
    if (hi > lo) sum += bins[(b - first) * stride] * (hi - lo) / interval;
  }
  return sum;
}

void mergePairs(std::vector<double>& bins, std::size_t stride) {
  const std::size_t size = bins.size() / stride;
  const std::size_t half = (size + 1) / 2;
  for (std::size_t b = 0; b < half; ++b) {
    for (std::size_t g = 0; g < stride; ++g) {
      const double second = 2 * b + 1 < size ? bins[(2 * b + 1) * stride + g] : 0.0;
      bins[b * stride + g] = bins[2 * b * stride + g] + second;
    }
  }
  bins.resize(half * stride);
}

}  // namespace detail

EnergyBins::EnergyBins(double intervalS, std::size_t maxBins)
    : m_interval(intervalS), m_perInterval(1.0 / intervalS), m_maxBins(std::max<std::size_t>(2, maxBins)) {}

void EnergyBins::add(double joules, double startS, double endS) {
  if (joules == 0.0) return;
  const double end = std::max(startS, endS);
  while (static_cast<std::size_t>(end * m_perInterval) >= m_maxBins) mergePairs();
  const auto last = static_cast<std::size_t>(end * m_perInterval);
  // Grow geometrically, but never past the cap.
  if (last >= m_bins.capacity()) m_bins.reserve(std::min(m_maxBins, std::max(last + 1, 2 * m_bins.capacity())));
  detail::spread(m_bins, 0, m_interval, m_perInterval, joules, startS, endS);
}

void EnergyBins::mergePairs() {
  detail::mergePairs(m_bins, 1);
  m_interval *= 2.0;
  m_perInterval = 1.0 / m_interval;
}

std::vector<double> EnergyBins::resampled(double intervalS) const {
  const auto factor = static_cast<std::size_t>(std::llround(intervalS / m_interval));
  if (factor <= 1) return m_bins;
  std::vector<double> out((m_bins.size() + factor - 1) / factor, 0.0);
  for (std::size_t b = 0; b < m_bins.size(); ++b) out[b / factor] += m_bins[b];
  return out;
}

double EnergyBins::energyIn(double from, double to) const {
  return detail::energyOf(m_bins, 0, m_interval, from, to);
}

double energyIn(const std::vector<double>& bins, double interval, double from, double to) {
  return detail::energyOf(bins, 0, interval, from, to);
}

}  // namespace scoville::power
