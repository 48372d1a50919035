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
  /// Seconds `cycles` of a unit clocked at `nominalHz` take at the current scale.
  double seconds(double cycles, double nominalHz) const { return cycles / (nominalHz * m_scale); }
  /// What the current scale adds to those seconds (0 at nominal).
  double stretch(double cycles, double nominalHz) const {
    return m_scale != 1.0 ? cycles / nominalHz * (1.0 / m_scale - 1.0) : 0.0;
  }

 private:
  double m_scale = 1.0;
};

}  // namespace scoville::tlm
