#pragma once
// Value change dump (IEEE 1364 VCD) of real-valued waveforms sampled at a fixed interval, for
// GTKWave and other waveform viewers (docs/trace.md).

#include <string>
#include <vector>

namespace scoville::trace {

class VcdWriter {
 public:
  /// Adds a real signal `name` under `scope` (e.g. "chip3") with one value per sample.
  void add(const std::string& scope, const std::string& name, std::vector<double> values);

  /// The VCD text: sample i at startS + i x intervalS (timescale 1 ns); a value is written when
  /// it changes. Signals are grouped by scope in the order first added.
  std::string text(double startS, double intervalS, const std::string& comment) const;

 private:
  struct Signal {
    std::string scope;
    std::string name;
    std::vector<double> values;
  };
  std::vector<Signal> m_signals;
};

}  // namespace scoville::trace
