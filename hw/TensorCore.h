#pragma once
// Tensor core: `count` weight-stationary systolic arrays behind one TLM-2.0 target socket.
//
// Timing model (per GEMM of `count` x (M x K) * (K x N) at precision p, rate r = MACs/cell/cycle):
//   tiles         = ceil(K / rows) * ceil(N / (cols * r))
//   cycles/tile   = max(M, rows)       M activation rows stream through a loaded weight tile; with
//                                      >= 2 operand buffers the next tile's `rows` load cycles
//                                      overlap the stream, so a tile costs the longer of the two
//                                      (single buffered: M + rows)
//   rounds        = ceil(batch * tiles / arrays)   tiles are dealt round-robin to the `count` arrays
//   cycles        = rounds * cycles/tile + rows + cols + pipeline_latency  (fill + drain)
// so a large GEMM approaches peak while a decode GEMV (M = 1..8) is limited by weight-tile loads
// and uses M/rows of the array; too few tiles leave arrays idle. The core executes one GEMM at a
// time; overlapping requests queue behind m_busyUntil: contention between initiators shows up.
//
// Functional mode: a GEMM payload that carries GemmOperands (GemmOperands.h) also gets its
// product, computed by the reference; the RTL co-simulation compares against it.

#include <cstdint>
#include <systemc>
#include <tlm>

#include "hw/TensorCoreConfig.h"
#include "hw/TimedTarget.h"
#include "stats/StatsGroup.h"
#include "tlm/ClockDomain.h"
#include "tlm/OpExtension.h"

namespace scoville::hw {

/// The tensor core's statistics, kept alike by the TLM model and the RTL co-simulation core.
class TensorCoreStats {
 public:
  TensorCoreStats();
  TensorCoreStats(const TensorCoreStats&) = delete;
  TensorCoreStats& operator=(const TensorCoreStats&) = delete;

  /// Counts one GEMM that occupied the arrays `cycles` cycles after waiting `queueS` seconds, with
  /// `throttledS` seconds of that from a DVFS clock below nominal.
  void record(const TensorCoreConfig& config, const tlm::OpExtension& op, double cycles, double queueS,
              double throttledS);

  stats::Group group;

 private:
  stats::Counter& m_gemms;
  stats::Counter& m_flops;
  stats::Counter& m_busyCycles;
  stats::Counter& m_idealCycles;
  stats::Counter& m_queueTime;
  stats::Counter& m_throttledTime;
};

/// Accepts kGemm payloads on its socket; anything else gets TLM_COMMAND_ERROR_RESPONSE.
class TensorCore : public TimedTarget {
 public:
  TensorCore(const sc_core::sc_module_name& name, const TensorCoreConfig& config);

  const TensorCoreConfig& config() const { return m_config; }
  const stats::Group& stats() const { return m_stats.group; }
  /// Runs on `clock` (DVFS lowers its scale); by default on a domain of its own, at the
  /// configured clock.
  void setClockDomain(const tlm::ClockDomain& clock) { m_clock = &clock; }
  /// Powers all but `arrays` of the `count` arrays off (power gating): later GEMMs deal their tiles
  /// over the `arrays` left. 1 <= arrays <= count.
  void setActiveArrays(int arrays);
  int activeArrays() const { return m_active.count; }

  /// Bytes a GEMM moves into and out of the arrays: A (M x K) and B (K x N) at the operand
  /// precision, C (M x N) at BF16 accumulation output, per product.
  static double operandBytes(const tlm::GemmShape& shape, tlm::Precision p);

 private:
  sc_core::sc_time serve(::tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) override;

  TensorCoreConfig m_config;
  TensorCoreConfig m_active;  ///< m_config with `count` the arrays powered on
  sc_core::sc_time m_busyUntil = sc_core::SC_ZERO_TIME;
  tlm::ClockDomain m_nominalClock;
  const tlm::ClockDomain* m_clock = &m_nominalClock;

  TensorCoreStats m_stats;
};

}  // namespace scoville::hw
