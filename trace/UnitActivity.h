#pragma once
// Per chip and unit, how busy the hardware was in each interval of a window: the listener behind
// the VCD waveforms (docs/trace.md). Each event's amount is spread evenly over its [start, end],
// as the power model spreads energy, so the waveforms and the power timeline line up.
//
// Why not sampled sc_signals: in loosely-timed mode a unit annotates a transaction's time ahead
// of the kernel's clock, so a signal sampled at the current time would show work before it
// happens. Binning the units' own [start, end] intervals places it where it happened.

#include <array>
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "tlm/ActivityBus.h"

namespace scoville::trace {

class UnitActivity : public tlm::ActivityListener {
 public:
  /// What is measured per chip and bin.
  enum Quantity : std::size_t {
    kTensorBusyS,  ///< time the tensor core computed
    kVectorBusyS,  ///< time the vector unit computed
    kHbmBytes,     ///< bytes the HBM moved (bursts x burst size)
    kHbmRequestS,  ///< HBM transaction-seconds (their mean number in flight x the bin)
    kFabricBytes,  ///< bytes through the chip's fabric ports, sent and received
    kQuantities
  };

  /// `burstBytes[c]`: chip c's HBM burst size. Bins of `intervalS` cover [startS, endS).
  UnitActivity(double startS, double endS, double intervalS, std::vector<double> burstBytes);

  void onActivity(const tlm::ActivityEvent& event) override;

  std::size_t bins() const { return m_bins; }
  double interval() const { return m_interval; }
  double start() const { return m_start; }
  /// Quantity `q` of chip `chip` in bin `b`.
  double at(std::size_t chip, Quantity q, std::size_t b) const { return m_values[chip][q][b]; }

 private:
  /// (chip, quantity) of a chip unit's event, from its source name; cached per source.
  struct Target {
    int chip = -1;
    int quantity = -1;
  };
  Target targetOf(const tlm::ActivityEvent& event);
  void spread(std::vector<double>& bins, double amount, double startS, double endS) const;

  double m_start;
  double m_interval;
  std::size_t m_bins;
  std::vector<double> m_burstBytes;
  std::vector<std::array<std::vector<double>, kQuantities>> m_values;  // [chip][quantity][bin]
  std::unordered_map<const char*, Target> m_targets;                   // by source pointer: stable names for the run
};

}  // namespace scoville::trace
