#pragma once
// One parser for every physical quantity in Scoville's configuration files.
//
// A quantity is a number followed by a unit: "4.8 TB/s", "700 W", "1.8 GHz", "96 MiB", "250 ns",
// "3.9 pJ/bit", "2.5 PFLOP/s", "0.8 V", "15 mm", "0.1 pJ/bit/mm". Values are converted once to SI
// base units (seconds, bytes, joules, FLOPs, volts, metres and their quotients) and carried as
// double from then on. A unit is one term, optionally divided by one or two more ("pJ/bit/mm").
//
// Prefixes: decimal f p n u m k/K M G T P (10^3 steps); binary Ki Mi Gi Ti Pi (2^10 steps) on
// B and bit only. Temperatures: "K" (kelvin) and "C" (degrees Celsius) take no prefix and count one
// degree each, so that "25 K" and "25 C" are the same difference; absolute temperatures are
// Celsius (an offset the parser does not apply). "b"/"bit" are bits (1/8 byte), "B" bytes; "Gbps" is accepted for
// Gbit/s.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace scoville::config {

/// Physical dimension as integer exponents of the base quantities time, bytes, energy, FLOPs,
/// volts (for DVFS operating points), metres (on-chip wire lengths) and kelvin (the thermal
/// model: temperatures, thermal resistances and heat capacities).
struct Dimension {
  int8_t time = 0;
  int8_t bytes = 0;
  int8_t energy = 0;
  int8_t flops = 0;
  int8_t volts = 0;
  int8_t metres = 0;
  int8_t kelvin = 0;

  friend bool operator==(const Dimension& a, const Dimension& b) {
    return a.time == b.time && a.bytes == b.bytes && a.energy == b.energy && a.flops == b.flops && a.volts == b.volts &&
           a.metres == b.metres && a.kelvin == b.kelvin;
  }
  friend bool operator!=(const Dimension& a, const Dimension& b) { return !(a == b); }
};

namespace dim {
inline constexpr Dimension kDimensionless{};
inline constexpr Dimension kTime{1, 0, 0, 0};
inline constexpr Dimension kFrequency{-1, 0, 0, 0};
inline constexpr Dimension kBytes{0, 1, 0, 0};
inline constexpr Dimension kBandwidth{-1, 1, 0, 0};
inline constexpr Dimension kEnergy{0, 0, 1, 0};
inline constexpr Dimension kPower{-1, 0, 1, 0};
inline constexpr Dimension kEnergyPerByte{0, -1, 1, 0};
inline constexpr Dimension kEnergyPerFlop{0, 0, 1, -1};
inline constexpr Dimension kFlops{0, 0, 0, 1};
inline constexpr Dimension kFlopRate{-1, 0, 0, 1};
inline constexpr Dimension kVoltage{0, 0, 0, 0, 1};
inline constexpr Dimension kLength{0, 0, 0, 0, 0, 1};
inline constexpr Dimension kEnergyPerByteLength{0, -1, 1, 0, 0, -1};  ///< on-chip wires: per byte per metre
/// A temperature or a temperature difference: "105 C" or "25 K" (one degree either way; an absolute
/// temperature is read in degrees Celsius, see ThermalConfig).
inline constexpr Dimension kTemperature{0, 0, 0, 0, 0, 0, 1};
inline constexpr Dimension kThermalResistance{1, 0, -1, 0, 0, 0, 1};  ///< K/W
inline constexpr Dimension kHeatCapacity{0, 0, 1, 0, 0, 0, -1};       ///< J/K
}  // namespace dim

/// A value in SI base units together with its dimension.
struct Quantity {
  double value = 0.0;
  Dimension dimension;
};

/// Raised by the unit parser; the message says what was wrong with the text, without location
/// (the configuration layer adds file, line and key).
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Parses "NUMBER UNIT" into SI units. Throws UnitError on a malformed number, an unknown unit
/// or a missing unit (a bare number is rejected: units are never guessed).
Quantity parseQuantity(std::string_view text);

/// Parses text and checks it has the expected dimension; returns the SI value.
/// Throws UnitError naming the expected kind of quantity and an example.
double parseQuantityAs(std::string_view text, Dimension expected);

/// Human name of a dimension ("bandwidth", "time", ...); "quantity" for unnamed ones.
std::string dimensionName(Dimension d);

/// dimensionName with its indefinite article: "a time", "an energy".
std::string aDimension(Dimension d);

/// A typical example value of a dimension, used in error messages and docs ("4.8 TB/s").
std::string dimensionExample(Dimension d);

/// The SI unit symbol of a dimension ("B/s", "s", "W", ...), used in reports.
std::string siUnit(Dimension d);

/// The magnitudes a configured quantity of one dimension may take, in SI units. A value other
/// than zero whose magnitude lies outside [min, max] is refused where a schema reads it
/// (readQuantity): the bounds are far outside any real design and catch unit slips (1e-300 TB/s,
/// 1e300 GHz) that would stall a run for hours or overflow its arithmetic. Every time is at most
/// kMaxConfigTimeS, so that no sum of configured times can pass the simulated-time limit.
struct PlausibleRange {
  double min = 0.0;  ///< 0: no floor
  double max = 0.0;
};
/// The plausible range of `d` ({0, 0}: not checked, e.g. plain numbers).
PlausibleRange plausibleRange(Dimension d);
/// Every dimension's plausible range, as a Markdown table (docs/config.md).
std::string plausibleRangesMarkdown();

/// The longest configured time (latencies, overheads, windows): 60 s.
inline constexpr double kMaxConfigTimeS = 60.0;

/// The longest simulated time a run may reach (about 11.6 days), and so the longest duration a
/// model may ask for: with both at most this, no time plus a duration can pass what SystemC's
/// 64-bit clock holds at its 1 ps resolution (1.8e7 s) and wrap around (tlm::durationCeil).
/// `scoville run --max-sim-time` lowers it; a load trace's arrivals must not pass it.
inline constexpr double kMaxSimulatedTimeS = 1e6;

/// Formats an SI value with a readable decimal prefix and 4 significant digits: 4.8e12 B/s ->
/// "4.8 TB/s". Inverse of parseQuantity up to rounding.
std::string formatQuantity(double siValue, Dimension d);

}  // namespace scoville::config
