#pragma once
// The command-timing rules of one DRAM channel, fed by its timing set (DramTimingConfig: one set
// per standard in platforms/dram/, or a chip's own): when an ACT may issue given the channel's
// recent activations (tRRD_S between bank groups, tRRD_L within one, at most four ACTs per tFAW),
// and what a bank's own row cycle allows (tRAS before PRE, tRP before the next ACT). It keeps the
// last four activations; banks keep their own state (BankMachine). DramChannel's stream closed
// forms read the same state through the accessors below, so that both paths obey one set of
// rules.

#include <algorithm>
#include <array>
#include <cstdint>

#include "hw/dram/MemoryControllerConfig.h"

namespace scoville::hw {

class TimingChecker {
 public:
  /// `streamRrd` is the ACT-to-ACT gap of consecutive pages of a stream (tRRD_S when the address
  /// mapping rotates bank groups, else tRRD_L).
  TimingChecker(const DramTimingConfig& timing, int banks, double streamRrd);

  const DramTimingConfig& timing() const { return m_t; }

  /// The earliest ACT in `group` at or after `at` under tRRD_S/L and tFAW.
  double earliestActivate(int group, double at) const {
    if (m_lastAct >= 0) at = std::max(at, m_lastAct + (group == m_lastActGroup ? m_t.tRRDl : m_t.tRRDs));
    return std::max(at, m_recentActs[m_recentActNext] + m_t.tFAW);  // the oldest of the last four
  }
  /// Records an ACT in `group` at `at` (from earliestActivate or later).
  void recordActivate(int group, double at) {
    m_recentActs[m_recentActNext] = at;
    m_recentActNext = (m_recentActNext + 1) & 3;
    m_lastAct = at;
    m_lastActGroup = group;
  }
  /// Issues an ACT in `group` no earlier than `at`; returns its time.
  double activate(int group, double at) {
    at = earliestActivate(group, at);
    recordActivate(group, at);
    return at;
  }
  /// A row conflict: the open row (activated at `actAt`) is precharged no earlier than tRAS after
  /// its ACT, and the next ACT may follow tRP later; `at` is the earliest the controller wants it.
  double afterPrecharge(double at, double actAt) const { return std::max(at, actAt + m_t.tRAS) + m_t.tRP; }
  /// A bank closed by auto-precharge after its ACT at `actAt` may activate again after tRC.
  double rowCycleEnd(double actAt) const { return actAt + m_t.tRAS + m_t.tRP; }

  // For the stream closed forms (DramChannel::streamPages).
  /// The m-th newest of the last four activations (m = 0 newest).
  double recentAct(std::size_t m) const {
    return m_recentActs[(static_cast<std::size_t>(m_recentActNext) + 3 - m) & 3];
  }
  /// Records `count` activations at times t[0..count) (in order) as the newest.
  void recordActivations(const double* t, uint64_t count, int lastGroup) {
    if (count >= 4) {
      // The last four are the last four activations, oldest first (the next to be replaced).
      std::copy_n(t + count - 4, 4, m_recentActs.begin());
      m_recentActNext = 0;
    } else {
      for (uint64_t k = 0; k < count; ++k) {
        m_recentActs[m_recentActNext] = t[k];
        m_recentActNext = (m_recentActNext + 1) & 3;
      }
    }
    m_lastAct = t[count - 1];
    m_lastActGroup = lastGroup;
  }
  /// Records a long stream's last activation (its earlier ones are no longer binding).
  void setLastActivation(double at) { m_lastAct = at; }
  double lastAct() const { return m_lastAct; }
  int lastActGroup() const { return m_lastActGroup; }
  /// phi[j]: the latest j-th activation after one at time 0 under the stream tRRD and tFAW alone.
  const std::array<double, 8>& phi() const { return m_phi; }
  bool fawBinds() const { return m_fawBinds; }  ///< tFAW >= 4 stream tRRD: phi[j + 4] = phi[j] + tFAW
  /// max(stream tRRD, tFAW / 4, tRC / banks): the ACT period of a stream longer than the banks.
  double steadyActPeriod() const { return m_steadyActPeriod; }

 private:
  const DramTimingConfig& m_t;
  std::array<double, 8> m_phi;
  bool m_fawBinds = false;
  double m_steadyActPeriod;
  std::array<double, 4> m_recentActs;  ///< last four ACTs, ring buffer (tFAW)
  int m_recentActNext = 0;
  double m_lastAct = -1.0;
  int m_lastActGroup = -1;
};

}  // namespace scoville::hw
