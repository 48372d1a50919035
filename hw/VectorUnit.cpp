#include "hw/VectorUnit.h"

#include <algorithm>
#include <cmath>

#include "hw/GridSchedule.h"
#include "tlm/OpExtension.h"
#include "tlm/Time.h"

namespace scoville::hw {

VectorUnit::VectorUnit(const sc_core::sc_module_name& name, const VectorUnitConfig& config, int computeUnits)
    : TimedTarget(name),
      m_config(config),
      m_units(computeUnits),
      m_stats("vector_unit", "element-wise SIMD unit"),
      m_ops(m_stats.counter("ops", "", "vector transactions executed")),
      m_elementOps(m_stats.counter("element_ops", "op", "element operations executed")),
      m_specialOps(m_stats.counter("special_ops", "op",
                                   "of them, transcendental functions (on the special-function lanes where the unit "
                                   "has them)")),
      m_convertOps(m_stats.counter("convert_ops", "op",
                                   "of them, weight conversions in registers (a grouped-GEMM kernel's mixed input)")),
      m_busyCycles(m_stats.counter("busy_cycles", "cycle", "cycles the unit was occupied")),
      m_throttledTime(m_stats.counter("throttled_time", "s", "extra busy time from a DVFS clock below nominal")) {}

sc_core::sc_time VectorUnit::serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  uint64_t n = op.kind == tlm::OpKind::kVector ? m_config.cycles(op.elementOps, op.specialOps) : 0;
  if (n > 0 && op.grid != nullptr) {
    // The softmax of a fused kernel runs in its blocks, on the units they were scheduled onto.
    n = static_cast<uint64_t>(std::ceil(static_cast<double>(n) * gridStretch(*op.grid, m_units)));
  }
  if (n == 0) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return arrival;
  }
  const sc_core::sc_time start = std::max(arrival, m_busyUntil);
  m_busyUntil = start + tlm::durationCeil(m_clock->seconds(static_cast<double>(n), m_config.clockHz));
  tlm::opOf(payload).queuedS = tlm::seconds(start - arrival);
  m_throttledTime.add(m_clock->stretch(static_cast<double>(n), m_config.clockHz));
  m_ops.add();
  m_elementOps.add(op.elementOps);
  m_specialOps.add(op.specialOps);
  m_busyCycles.add(static_cast<double>(n));
  // Conversions are priced apart: the unit's other element operations, then its conversions.
  const double convert = std::min(op.convertOps, op.elementOps);
  m_convertOps.add(convert);
  m_activity.emit(tlm::Activity::kVectorOps, op.elementOps - convert, op, start, m_busyUntil);
  if (convert > 0.0) m_activity.emit(tlm::Activity::kConvertOps, convert, op, start, m_busyUntil);
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  return m_busyUntil;
}

}  // namespace scoville::hw
