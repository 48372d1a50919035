#include "hw/TensorCore.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hw/GemmOperands.h"
#include "hw/GridSchedule.h"
#include "tlm/Time.h"

namespace scoville::hw {

TensorCoreStats::TensorCoreStats()
    : group("tensor_core", "systolic matrix engine"),
      m_gemms(group.counter("gemms", "", "GEMM transactions executed")),
      m_flops(group.counter("flops", "FLOP", "FLOPs executed (2 per MAC)")),
      m_busyCycles(group.counter("busy_cycles", "cycle", "cycles the array was occupied")),
      m_idealCycles(group.counter("ideal_cycles", "cycle", "cycles the same FLOPs need at 100% array use")),
      m_queueTime(group.counter("queue_time", "s", "time GEMMs waited for the array to free up")),
      m_throttledTime(group.counter("throttled_time", "s", "extra busy time from a DVFS clock below nominal")) {
  group.formula("array_utilization", "", "ideal_cycles / busy_cycles",
                [this] { return m_busyCycles.value() > 0 ? m_idealCycles.value() / m_busyCycles.value() : 0.0; });
}

void TensorCoreStats::record(const TensorCoreConfig& config, const tlm::OpExtension& op, double cycles, double queueS,
                             double throttledS) {
  const double flops = op.shape.flops();
  m_gemms.add();
  m_flops.add(flops);
  m_busyCycles.add(cycles);
  m_idealCycles.add(flops / (config.peakFlops(op.precision) / config.clockHz));
  m_queueTime.add(queueS);
  m_throttledTime.add(throttledS);
}

TensorCore::TensorCore(const sc_core::sc_module_name& name, const TensorCoreConfig& config)
    : TimedTarget(name), m_config(config), m_active(config) {}

double TensorCore::operandBytes(const tlm::GemmShape& shape, tlm::Precision p) {
  const auto m = static_cast<double>(shape.m);
  const auto n = static_cast<double>(shape.n);
  const auto k = static_cast<double>(shape.k);
  const double inputs = (m * k + k * n) * tlm::bitsPerElement(p) / 8.0;
  const double outputs = m * n * tlm::bitsPerElement(tlm::Precision::kBf16) / 8.0;
  return (inputs + outputs) * static_cast<double>(shape.count);
}

void TensorCore::setActiveArrays(int arrays) {
  if (arrays < 1 || arrays > m_config.count) {
    throw std::invalid_argument(
        fmt::format("{}: {} active arrays, but the tensor core has {}", name(), arrays, m_config.count));
  }
  m_active.count = arrays;
}

sc_core::sc_time TensorCore::serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) {
  const tlm::OpExtension& op = tlm::opOf(payload);
  uint64_t cycles = op.kind == tlm::OpKind::kGemm ? m_active.gemmCycles(op.shape, op.precision, op.warpMma) : 0;
  if (cycles > 0 && op.grid != nullptr) {
    // A fused kernel's blocks on the compute units: idle units of its last wave and its longest
    // blocks stretch the even spread.
    cycles =
        static_cast<uint64_t>(std::ceil(static_cast<double>(cycles) * gridStretch(*op.grid, m_active.computeUnits())));
  }
  if (cycles == 0) {
    payload.set_response_status(::tlm::TLM_COMMAND_ERROR_RESPONSE);
    return arrival;
  }
  if (auto* operands = payload.get_extension<GemmOperands>()) {
    if (!operands->fits(op.shape)) {
      payload.set_response_status(::tlm::TLM_GENERIC_ERROR_RESPONSE);
      return arrival;
    }
    referenceProduct(op.shape, *operands);
  }
  const sc_core::sc_time start = std::max(arrival, m_busyUntil);
  m_busyUntil = start + tlm::durationCeil(m_clock->seconds(static_cast<double>(cycles), m_config.clockHz));
  const double queuedS = tlm::seconds(start - arrival);
  tlm::opOf(payload).queuedS = queuedS;
  m_stats.record(m_config, op, static_cast<double>(cycles), queuedS,
                 m_clock->stretch(static_cast<double>(cycles), m_config.clockHz));

  const double flops = op.shape.flops();
  m_activity.emit(tlm::Activity::kMacs, flops / 2.0, op, start, m_busyUntil);
  m_activity.emit(tlm::Activity::kOperandBytes, operandBytes(op.shape, op.precision), op, start, m_busyUntil);
  payload.set_response_status(::tlm::TLM_OK_RESPONSE);
  return m_busyUntil;
}

}  // namespace scoville::hw
