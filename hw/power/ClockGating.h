#pragma once
// The clock gating of a chip's power manager: the clocks (and the clocked-active floor they cost)
// run while any compute unit or the memory stream works, and stop after `hold` of idleness. Fed
// the units' busy intervals as they are reported (in time order per unit, a little out of order
// across units), it keeps their union and hands out its new stretches: each stretch of time is
// handed out once. An interval that arrives after its place in the union was closed (more than
// `hold` behind the current one) adds only what lies after the closed part.

#include <vector>

namespace scoville::hw {

class ClockGating {
 public:
  /// A stretch of time the clocks ran, [startS, endS].
  struct Stretch {
    double startS = 0.0;
    double endS = 0.0;
  };

  /// `holdS`: idle gaps shorter than this keep the clocks on; `chunkS`: the union is handed out in
  /// stretches of at least this length (or when it closes), so a listener sees it at most that late.
  ClockGating(double holdS, double chunkS);

  /// Hands the union out in stretches of at least `chunkS` from now on.
  void setStretch(double chunkS) { m_chunk = chunkS; }
  /// A unit worked over [startS, endS]: appends the new stretches of the union that are due.
  void busy(double startS, double endS, std::vector<Stretch>& out);
  /// Appends everything of the union not handed out yet.
  void flush(std::vector<Stretch>& out);
  /// Seconds handed out so far.
  double handedOutS() const { return m_handedOut; }

 private:
  void handOut(double startS, double endS, std::vector<Stretch>& out);

  double m_hold;
  double m_chunk;
  bool m_open = false;
  double m_start = 0.0;  ///< the open interval of the union
  double m_end = 0.0;
  double m_emitted = 0.0;  ///< the open interval is handed out up to here
  double m_closed = 0.0;   ///< the end of the last closed interval: nothing before it is handed out again
  double m_handedOut = 0.0;
};

}  // namespace scoville::hw
