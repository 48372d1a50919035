#pragma once
// The energy of a fabric's switches: per byte and per packet forwarded, plus static power.

#include "power/EnergyTimeline.h"
#include "power/PowerConfig.h"
#include "tlm/ActivityBus.h"

namespace scoville::power {

/// Every switch of the fabric together (one switch type per platform).
class SwitchPower : public tlm::ActivityListener {
 public:
  SwitchPower(const SwitchEnergyConfig& energy, int switches, double intervalS, std::size_t maxBins = kDefaultMaxBins)
      : m_energy(energy), m_switches(switches), m_timeline(intervalS, maxBins) {}
  void onActivity(const tlm::ActivityEvent& event) override;
  double staticW() const { return m_energy.staticW * m_switches; }
  int switches() const { return m_switches; }
  double dynamicJ() const { return m_bytesJ + m_packetsJ; }
  double bytesJ() const { return m_bytesJ; }
  double packetsJ() const { return m_packetsJ; }
  const EnergyTimeline& timeline() const { return m_timeline; }
  EnergyTimeline& timeline() { return m_timeline; }

 private:
  const SwitchEnergyConfig& m_energy;
  int m_switches;
  double m_bytesJ = 0.0;
  double m_packetsJ = 0.0;
  EnergyTimeline m_timeline;
};

}  // namespace scoville::power
