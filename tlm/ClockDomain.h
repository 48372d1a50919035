#pragma once
// A clock domain whose frequency a power governor may lower (DVFS). Units on it divide their cycle
// counts by clock x scale(); the governor sets the scale. At scale 1 timing is exactly the
// nominal clock's.

namespace scoville::tlm {

class ClockDomain {
 public:
  /// Current frequency over the nominal one, in (0, 1].
  double scale() const { return m_scale; }
  void setScale(double scale) { m_scale = scale; }

 private:
  double m_scale = 1.0;
};

}  // namespace scoville::tlm
