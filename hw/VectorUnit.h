#pragma once
// Vector unit: `lanes` element operations per cycle, one kVector transaction at a time.
// A transaction of E element operations takes ceil(E / lanes) + pipeline latency cycles; later
// arrivals queue behind the busy-until time.

#include <systemc>

#include "hw/TimedTarget.h"
#include "hw/VectorUnitConfig.h"
#include "stats/StatsGroup.h"
#include "tlm/ClockDomain.h"

namespace scoville::hw {

/// Accepts kVector payloads; anything else gets TLM_COMMAND_ERROR_RESPONSE.
class VectorUnit : public TimedTarget {
 public:
  /// Its lanes are spread over `computeUnits` compute units (a GPU's SMs, TensorCoreConfig::
  /// computeUnits), which a fused kernel's blocks are scheduled onto.
  VectorUnit(const sc_core::sc_module_name& name, const VectorUnitConfig& config, int computeUnits = 1);

  const stats::Group& stats() const { return m_stats; }
  /// Runs on `clock` (DVFS lowers its scale); by default on a domain of its own, at the
  /// configured clock.
  void setClockDomain(const tlm::ClockDomain& clock) { m_clock = &clock; }

 private:
  sc_core::sc_time serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) override;

  VectorUnitConfig m_config;
  int m_units = 1;
  sc_core::sc_time m_busyUntil = sc_core::SC_ZERO_TIME;
  tlm::ClockDomain m_nominalClock;
  const tlm::ClockDomain* m_clock = &m_nominalClock;
  stats::Group m_stats;
  stats::Counter& m_ops;
  stats::Counter& m_elementOps;
  stats::Counter& m_specialOps;
  stats::Counter& m_convertOps;
  stats::Counter& m_busyCycles;
  stats::Counter& m_throttledTime;
};

}  // namespace scoville::hw
