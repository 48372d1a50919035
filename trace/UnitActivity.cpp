#include "trace/UnitActivity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "trace/UnitName.h"

namespace scoville::trace {

using namespace tlm;  // the activity events, ops and phases this file reads

UnitActivity::UnitActivity(double startS, double endS, double intervalS, std::vector<double> burstBytes)
    : m_start(startS),
      m_interval(intervalS),
      m_bins(static_cast<std::size_t>(std::ceil((endS - startS) / intervalS - 1e-9))),
      m_burstBytes(std::move(burstBytes)),
      m_values(m_burstBytes.size()) {
  for (auto& chip : m_values) {
    for (auto& quantity : chip) quantity.assign(m_bins, 0.0);
  }
}

UnitActivity::Target UnitActivity::targetOf(const ActivityEvent& e) {
  const auto it = m_targets.find(e.source);
  if (it != m_targets.end()) return it->second;
  Target target;
  const UnitName source = unitNameOf(e.source);
  target.chip = source.chip;
  if (source.unit == "tensor_core") target.quantity = kTensorBusyS;
  if (source.unit == "vector_unit") target.quantity = kVectorBusyS;
  if (source.unit == "hbm") target.quantity = kHbmBytes;
  m_targets.emplace(e.source, target);
  return target;
}

void UnitActivity::spread(std::vector<double>& bins, double amount, double startS, double endS) const {
  const double windowEnd = m_start + m_interval * static_cast<double>(m_bins);
  const double from = std::max(startS, m_start);
  const double to = std::min(endS, windowEnd);
  if (endS <= startS) {
    // An instantaneous event counts in the bin it falls in.
    if (startS < m_start || startS >= windowEnd) return;
    bins[std::min(m_bins - 1, static_cast<std::size_t>((startS - m_start) / m_interval))] += amount;
    return;
  }
  if (to <= from) return;
  const double rate = amount / (endS - startS);
  auto b = static_cast<std::size_t>((from - m_start) / m_interval);
  for (; b < m_bins; ++b) {
    const double binStart = m_start + m_interval * static_cast<double>(b);
    const double binEnd = binStart + m_interval;
    if (binStart >= to) break;
    const double overlap = std::min(binEnd, to) - std::max(binStart, from);
    if (overlap > 0) bins[b] += rate * overlap;
  }
}

void UnitActivity::onActivity(const ActivityEvent& e) {
  const double start = e.start.to_seconds();
  const double end = e.time.to_seconds();
  if (m_bins == 0 || end < m_start || start >= m_start + m_interval * static_cast<double>(m_bins)) return;
  if (e.activity == Activity::kLinkBytes && e.chip >= 0) {
    if (static_cast<std::size_t>(e.chip) < m_values.size())
      spread(m_values[e.chip][kFabricBytes], e.amount, start, end);
    return;
  }
  const Target target = targetOf(e);
  if (target.chip < 0 || static_cast<std::size_t>(target.chip) >= m_values.size() || target.quantity < 0) return;
  auto& chip = m_values[static_cast<std::size_t>(target.chip)];
  switch (e.activity) {
    case Activity::kMacs:
      if (target.quantity == kTensorBusyS) spread(chip[kTensorBusyS], end - start, start, end);
      break;
    case Activity::kVectorOps:
      if (target.quantity == kVectorBusyS) spread(chip[kVectorBusyS], end - start, start, end);
      break;
    case Activity::kDramReadBursts:
    case Activity::kDramWriteBursts:
      spread(chip[kHbmBytes], e.amount * m_burstBytes[static_cast<std::size_t>(target.chip)], start, end);
      // One transaction moves reads or writes, and refreshes ride along: count it once.
      spread(chip[kHbmRequestS], end - start, start, end);
      break;
    default: break;
  }
}

}  // namespace scoville::trace
