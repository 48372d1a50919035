#pragma once
// Conversions from model arithmetic (seconds as double) to simulation time.

#include <cmath>
#include <stdexcept>
#include <string>
#include <systemc>

#include "config/Units.h"

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

/// The longest simulated time a run may reach, and so the longest duration (config/Units.h).
using config::kMaxSimulatedTimeS;

/// The start of the message of a duration out of range (a model asked for a negative, non-finite
/// or too long time): the CLI recognises it in the report SystemC makes of the exception.
inline constexpr const char* kTimeRangeMessage = "simulated time out of range";

/// Thrown by durationCeil for a duration it cannot represent.
class TimeRangeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throwTimeRange(double seconds) {
  throw TimeRangeError(std::string(kTimeRangeMessage) + ": a duration of " + std::to_string(seconds) +
                       " s is negative, not finite, or longer than the " + std::to_string(kMaxSimulatedTimeS) +
                       " s a run may simulate (an implausible latency, bandwidth or rate?)");
}

/// The smallest sc_time >= `seconds`: durations are rounded up to the kernel's resolution so that
/// rounding can never make a modelled step faster than its physical bound. Throws TimeRangeError
/// for a negative or non-finite duration or one over kMaxSimulatedTimeS, which would wrap around.
inline sc_core::sc_time durationCeil(double seconds) {
  const double ticks = seconds / resolutionSeconds();
  if (__builtin_expect(!(ticks > -1.0 && seconds <= kMaxSimulatedTimeS), 0)) throwTimeRange(seconds);
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::ceil(ticks - 1e-6)));
}

}  // namespace scoville::tlm
