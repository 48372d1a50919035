#include "power/PowerMonitor.h"

#include <algorithm>

namespace scoville::power {

PowerMonitor::PowerMonitor(const PowerManagementConfig& config, const std::vector<ChipPowerSpec>& chips,
                           const SwitchEnergyConfig* switchEnergy, int switches)
    : m_config(config) {
  for (const ChipPowerSpec& spec : chips) {
    m_mirrorOf.push_back(-1);
    if (spec.energy == nullptr) {
      if (std::find(m_missing.begin(), m_missing.end(), spec.type) == m_missing.end()) m_missing.push_back(spec.type);
      m_chips.push_back(nullptr);
      continue;
    }
    m_chips.push_back(std::make_unique<ChipPower>(spec.name, spec.type, *spec.energy, spec.hbmBurstBytes, spec.ratedW,
                                                  config.intervalS, static_cast<std::size_t>(config.maxBins),
                                                  spec.thermal));
    if (governed(*m_chips.back()) || spec.thermal != nullptr) m_chips.back()->keepRecent(spec.thermal != nullptr);
  }
  if (switchEnergy != nullptr && switches > 0) {
    m_switches.emplace(*switchEnergy, switches, config.intervalS, static_cast<std::size_t>(config.maxBins));
  }
}

bool PowerMonitor::governed(const ChipPower& chip) const {
  return m_config.governor.drives(chip.energy(), chip.thermalConfig() != nullptr);
}

void PowerMonitor::setMirrors(std::vector<int> mirrorOf) {
  mirrorOf.resize(m_chips.size(), -1);
  m_mirrorOf = std::move(mirrorOf);
  for (std::size_t c = 0; c < m_chips.size(); ++c) {
    if (m_mirrorOf[c] >= 0 && m_chips[c]) m_chips[c]->setMirror();
  }
}

bool PowerMonitor::usesChip(int chip) const {
  const auto c = static_cast<std::size_t>(chip);
  return chip >= 0 && c < m_chips.size() && m_chips[c] != nullptr && m_mirrorOf[c] < 0;
}

void PowerMonitor::onActivity(const tlm::ActivityEvent& e) {
  if (e.activity == tlm::Activity::kLinkBytes) {
    if (usesChip(e.chip)) m_chips[static_cast<std::size_t>(e.chip)]->onActivity(e);
  } else if (m_switches) {
    const auto src = static_cast<std::size_t>(e.srcChip);
    if (e.srcChip >= 0 && src < m_switchWeight.size() && m_switchWeight[src] != 1.0) {
      tlm::ActivityEvent weighted = e;
      weighted.amount *= m_switchWeight[src];
      m_switches->onActivity(weighted);
    } else {
      m_switches->onActivity(e);
    }
  }
}

}  // namespace scoville::power
