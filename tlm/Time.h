#pragma once
// Conversions from model arithmetic (seconds as double) to simulation time.

#include <cmath>
#include <systemc>

namespace scoville::tlm {

/// The kernel's time resolution in seconds. It is fixed before the first time is made (Scoville
/// keeps SystemC's default), so it is read once.
inline double resolutionSeconds() {
  static const double resolution = sc_core::sc_get_time_resolution().to_seconds();
  return resolution;
}

/// `t.to_seconds()` without the library call on hot paths: the same arithmetic as SystemC 2.3's
/// (ticks x resolution in femtoseconds x 1e-15), so the same bits (a unit test compares them).
inline double seconds(const sc_core::sc_time& t) {
  static const double resolutionFs = std::round(resolutionSeconds() * 1e15);
  return static_cast<double>(t.value()) * resolutionFs * 1e-15;
}

/// The smallest sc_time >= `seconds`: durations are rounded up to the kernel's resolution so that
/// rounding can never make a modelled step faster than its physical bound.
inline sc_core::sc_time durationCeil(double seconds) {
  const double ticks = seconds / resolutionSeconds();
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::ceil(ticks - 1e-6)));
}

}  // namespace scoville::tlm
