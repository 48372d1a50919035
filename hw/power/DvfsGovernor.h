#pragma once
// The DVFS governor of a chip's power manager: every `response_time` it reads the chip's power
// telemetry (power::PowerSensor) and picks the core operating point for the window that ends at
// its next decision. The part of that window already past is known; the next response time is
// predicted from the last one, with the core's dynamic power (the part whose rate follows the core
// clock) scaled by V^2 f to each point and the static power taken at each point's voltage, the rest
// of the chip unchanged. It drops to the highest point predicted to keep the window under the cap
// less half the hysteresis (the lowest when none is), and rises only to a point predicted under
// cap x (1 - hysteresis).
//
// With a thermal model (ThermalControl.h), a decision also predicts the die temperature at the next
// decision at each point, from the model's state and the same predicted power, and takes no point
// predicted above the junction limit (the lowest when every one is); it rises only to a point
// predicted below the limit less `thermal.throttle_hysteresis`. Where the limit, not the cap, picks
// the point, the core is throttled. Impl thermal has no power cap: the limit alone.
//
// Decisions are taken lazily: when the chip reports activity starting at or after a decision's
// time, every decision due until then is taken from the energy known at that moment.

#include <cstddef>
#include <functional>
#include <vector>

#include "power/ChipPower.h"
#include "power/PowerConfig.h"

namespace scoville::hw {
class ThermalControl;
}

namespace scoville::hw {

class DvfsGovernor {
 public:
  /// `move(time, point)` applies a decision (the caller changes the clock and announces it).
  using Move = std::function<void(double timeS, std::size_t point)>;
  /// Reports that the junction limit starts (true) or stops (false) choosing the point.
  using Throttle = std::function<void(double timeS, bool throttled)>;

  /// `thermal`: the chip's thermal control, or null.
  DvfsGovernor(const power::GovernorConfig& config, double capW, std::vector<power::DvfsPoint> points,
               const power::PowerSensor& sensor, Move move, const ThermalControl* thermal = nullptr,
               Throttle throttle = {});

  /// Takes every decision due at or before `timeS`; `lastActivityEndS` is the latest end of any
  /// activity reported so far (a long idle gap at the nominal point skips its decisions). Returns
  /// the time before which no later decision reads the sensor's energy.
  double decideUntil(double timeS, double lastActivityEndS);
  std::size_t point() const { return m_point; }
  double capW() const { return m_capW; }
  /// The first decision's time (windows starting then are the governor's to answer for).
  double firstDecisionS() const { return m_responseS; }

 private:
  void decide(double timeS);
  /// What decisions aim under: half the hysteresis below the cap, a guard band for the prediction
  /// and for transactions already running at the old clock.
  double aimW() const { return m_capW * (1.0 - 0.5 * m_hysteresis); }

  /// The point the junction limit allows at decision `time`, from point `now` (the lowest when none
  /// is predicted under it); `power(k)` is the chip's predicted power at point k.
  std::size_t thermalPoint(double time, const std::function<double(std::size_t)>& power) const;

  double m_capW;
  double m_windowS;
  double m_responseS;
  double m_hysteresis;
  std::vector<power::DvfsPoint> m_points;
  const power::PowerSensor& m_sensor;
  Move m_move;
  std::size_t m_point = 0;
  double m_nextDecision;
  const ThermalControl* m_thermal;
  Throttle m_throttle;
  bool m_throttled = false;
};

}  // namespace scoville::hw
