#include "hw/power/ClockGating.h"

#include <algorithm>

namespace scoville::hw {

ClockGating::ClockGating(double holdS, double chunkS) : m_hold(holdS), m_chunk(chunkS) {}

void ClockGating::handOut(double startS, double endS, std::vector<Stretch>& out) {
  if (endS <= startS) return;
  out.push_back(Stretch{startS, endS});
  m_handedOut += endS - startS;
}

void ClockGating::busy(double startS, double endS, std::vector<Stretch>& out) {
  startS = std::max(startS, m_closed);
  if (endS <= startS) return;
  if (m_open && startS > m_end + m_hold) {
    // The clocks stopped after the open interval: close it.
    handOut(m_emitted, m_end, out);
    m_closed = m_end;
    m_open = false;
  }
  if (!m_open) {
    m_open = true;
    m_start = startS;
    m_end = endS;
    m_emitted = startS;
  } else {
    if (startS < m_start) {
      // Reported late, before the open interval's start: what lies before it is new.
      handOut(startS, std::min(endS, m_start), out);
      m_start = startS;
    }
    m_end = std::max(m_end, endS);  // a gap shorter than the hold stays clocked
  }
  if (m_end - m_emitted >= m_chunk) {
    handOut(m_emitted, m_end, out);
    m_emitted = m_end;
  }
}

void ClockGating::flush(std::vector<Stretch>& out) {
  if (!m_open) return;
  handOut(m_emitted, m_end, out);
  m_emitted = m_end;
}

}  // namespace scoville::hw
