#pragma once
// How much work a run gave the simulator: transactions served by the hardware units (every
// TimedTarget and fabric interface), process-wide. Reported under "kernel" in report.json with
// the SystemC delta-cycle count, for the benchmarks (scripts/bench): transactions per simulated
// token and per wall-clock second.

#include <cstdint>

namespace scoville::tlm {

/// The counter (one per process; a run is one elaboration).
inline uint64_t& unitTransactions() {
  static uint64_t count = 0;
  return count;
}

}  // namespace scoville::tlm
