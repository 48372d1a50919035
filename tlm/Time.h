#pragma once
// Conversions from model arithmetic (seconds as double) to simulation time.

#include <cmath>
#include <systemc>

namespace scoville::tlm {

/// The smallest sc_time >= `seconds`: durations are rounded up to the kernel's resolution so that
/// rounding can never make a modelled step faster than its physical bound.
inline sc_core::sc_time durationCeil(double seconds) {
  const double ticks = seconds / sc_core::sc_get_time_resolution().to_seconds();
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::ceil(ticks - 1e-6)));
}

}  // namespace scoville::tlm
