#pragma once
// The data bus of one DRAM channel: busy until its last transfer ends, with a turnaround when the
// direction changes (tWTR after writes, tRTW after reads), and the burst arithmetic of a
// transfer.

#include <cstdint>

#include "hw/dram/MemoryControllerConfig.h"

namespace scoville::hw {

class DataBus {
 public:
  /// `config` describes the channel as timed (a lockstep group counts as one channel).
  explicit DataBus(const MemoryControllerConfig& config);

  /// When a transfer in direction `write` may start; counts a turnaround if it changes direction.
  double readyFor(bool write, double& turnarounds, double lockstep) const {
    double ready = m_free;
    if (m_used && m_lastWrite != write) {
      ready += m_lastWrite ? m_t.tWTR : m_t.tRTW;
      turnarounds += lockstep;
    }
    return ready;
  }
  /// Bursts of a transfer of `bytes` (rounded up) and their bus time.
  uint64_t bursts(uint64_t bytes) const {
    const uint64_t roundedUp = bytes + m_burstBytes - 1;
    return m_burstShift >= 0 ? roundedUp >> m_burstShift : roundedUp / m_burstBytes;
  }
  double secondsPerBurst() const { return m_secondsPerBurst; }
  /// A transfer in direction `write` holds the bus until `end`.
  void occupy(double end, bool write) {
    m_free = end;
    m_lastWrite = write;
    m_used = true;
  }

 private:
  const DramTimingConfig& m_t;
  uint64_t m_burstBytes;
  int m_burstShift = -1;  ///< log2(burst bytes), or -1
  double m_secondsPerBurst;
  double m_free = 0.0;
  bool m_lastWrite = false;
  bool m_used = false;
};

}  // namespace scoville::hw
