#include "config/Units.h"
#include "config/Text.h"

#include <fmt/format.h>
#include <array>
#include <cmath>
#include <cstdlib>

namespace scoville::config {
namespace {

struct Atom {
  std::string_view symbol;
  Dimension dimension;
  double scale;          // SI value of one unit
  bool binaryPrefix;     // Ki/Mi/... allowed
  bool prefixed = true;  // false: no prefix at all (the temperature units)
};

// Longest symbols first so "Hz" wins over "z"-less matches and "bit" over "b"; the metre last, so
// that "ms" is a millisecond and "mm" a millimetre.
constexpr std::array<Atom, 14> kAtoms{{
    {"FLOP", dim::kFlops, 1.0, false},
    {"flop", dim::kFlops, 1.0, false},
    {"bps", {-1, 1, 0, 0}, 1.0 / 8.0, false},
    {"bit", dim::kBytes, 1.0 / 8.0, true},
    {"Hz", dim::kFrequency, 1.0, false},
    {"B", dim::kBytes, 1.0, true},
    {"b", dim::kBytes, 1.0 / 8.0, true},
    {"s", dim::kTime, 1.0, false},
    {"J", dim::kEnergy, 1.0, false},
    {"W", dim::kPower, 1.0, false},
    {"V", dim::kVoltage, 1.0, false},
    {"m", dim::kLength, 1.0, false},
    {"K", dim::kTemperature, 1.0, false, false},
    {"C", dim::kTemperature, 1.0, false, false},
}};

struct Prefix {
  std::string_view symbol;
  double scale;
  bool binary;
};

constexpr std::array<Prefix, 17> kPrefixes{{
    {"", 1.0, false},
    {"f", 1e-15, false},
    {"p", 1e-12, false},
    {"n", 1e-9, false},
    {"u", 1e-6, false},
    {"\xC2\xB5", 1e-6, false},
    {"m", 1e-3, false},
    {"k", 1e3, false},
    {"K", 1e3, false},
    {"M", 1e6, false},
    {"G", 1e9, false},
    {"T", 1e12, false},
    {"P", 1e15, false},
    {"Ki", 1024.0, true},
    {"Mi", 1048576.0, true},
    {"Gi", 1073741824.0, true},
    {"Ti", 1099511627776.0, true},
}};

Dimension divide(Dimension a, Dimension b) {
  return Dimension{static_cast<int8_t>(a.time - b.time),     static_cast<int8_t>(a.bytes - b.bytes),
                   static_cast<int8_t>(a.energy - b.energy), static_cast<int8_t>(a.flops - b.flops),
                   static_cast<int8_t>(a.volts - b.volts),   static_cast<int8_t>(a.metres - b.metres),
                   static_cast<int8_t>(a.kelvin - b.kelvin)};
}

// One unit term such as "TB", "ns", "pJ", "Gbit". Returns false when it is not a known unit.
bool parseTerm(std::string_view term, Quantity& out) {
  for (const Atom& atom : kAtoms) {
    if (term.size() < atom.symbol.size() || term.substr(term.size() - atom.symbol.size()) != atom.symbol) {
      continue;
    }
    std::string_view prefix = term.substr(0, term.size() - atom.symbol.size());
    if (!atom.prefixed && !prefix.empty()) continue;
    for (const Prefix& p : kPrefixes) {
      if (p.symbol == prefix && (!p.binary || atom.binaryPrefix)) {
        out = Quantity{p.scale * atom.scale, atom.dimension};
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Quantity parseQuantity(std::string_view text) {
  const std::string_view s = trimBlanks(text);
  if (s.empty()) throw UnitError("empty value");
  const std::string buffer(s);
  char* end = nullptr;
  const double number = std::strtod(buffer.c_str(), &end);
  const std::size_t numberLength = static_cast<std::size_t>(end - buffer.c_str());
  if (numberLength == 0) throw UnitError(fmt::format("'{}' does not start with a number", s));
  if (!std::isfinite(number)) throw UnitError(fmt::format("'{}' is not a finite number", s));
  // strtod accepts "inf", "nan" and hex floats; only plain decimal numbers are meant here.
  for (std::size_t i = 0; i < numberLength; ++i) {
    const char c = buffer[i];
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
      throw UnitError(fmt::format("'{}' is not a decimal number", s));
    }
  }
  const std::string_view unit = trimBlanks(s.substr(numberLength));
  if (unit.empty()) throw UnitError(fmt::format("'{}' has no unit", s));

  // A term divided by at most two more: "pJ", "TB/s", "pJ/bit/mm".
  std::size_t slash = unit.find('/');
  Quantity numerator;
  const std::string_view top = trimBlanks(unit.substr(0, slash));
  if (!parseTerm(top, numerator)) throw UnitError(fmt::format("unknown unit '{}' in '{}'", top, s));
  for (int divisions = 0; slash != std::string_view::npos; ++divisions) {
    const std::size_t next = unit.find('/', slash + 1);
    const std::string_view bottom =
        trimBlanks(unit.substr(slash + 1, next == std::string_view::npos ? next : next - slash - 1));
    Quantity denominator;
    if (divisions == 2 || !parseTerm(bottom, denominator)) {
      throw UnitError(fmt::format("unknown unit '{}' in '{}'", bottom, s));
    }
    numerator = Quantity{numerator.value / denominator.value, divide(numerator.dimension, denominator.dimension)};
    slash = next;
  }
  if (numerator.dimension == dim::kDimensionless) {
    throw UnitError(fmt::format("'{}': its units cancel out; a plain number is written without a unit", s));
  }
  const double value = number * numerator.value;
  if (!std::isfinite(value))
    throw UnitError(fmt::format("'{}' is too large: it overflows once its unit is applied", s));
  if (value == 0.0 && number != 0.0) {
    throw UnitError(fmt::format("'{}' is too small: it is zero once its unit is applied", s));
  }
  return Quantity{value, numerator.dimension};
}

double parseQuantityAs(std::string_view text, Dimension expected) {
  Quantity q;
  try {
    q = parseQuantity(text);
  } catch (const UnitError& e) {
    throw UnitError(
        fmt::format("{}; expected {} such as '{}'", e.what(), aDimension(expected), dimensionExample(expected)));
  }
  if (q.dimension != expected) {
    throw UnitError(fmt::format("'{}' is {}, expected {} such as '{}'", trimBlanks(text), aDimension(q.dimension),
                                aDimension(expected), dimensionExample(expected)));
  }
  return q.value;
}

namespace {
struct NamedDimension {
  Dimension dimension;
  std::string_view name;
  std::string_view example;
  std::string_view unit;
  PlausibleRange plausible;  // see plausibleRange()
};
// The floors keep a step's duration bounded (a bandwidth, clock or rate near zero makes one step
// last for ever); the ceilings keep products and sums finite.
constexpr std::array<NamedDimension, 17> kNamed{{
    {dim::kDimensionless, "plain number", "1.5", "", {0.0, 0.0}},
    {dim::kTime, "time", "250 ns", "s", {0.0, kMaxConfigTimeS}},
    {dim::kFrequency, "frequency", "1.8 GHz", "Hz", {1e6, 1e13}},
    {dim::kBytes, "size", "96 MiB", "B", {1.0, 1e21}},
    {dim::kBandwidth, "bandwidth", "4.8 TB/s", "B/s", {1e8, 1e18}},
    {dim::kEnergy, "energy", "2 nJ", "J", {0.0, 1e12}},
    {dim::kPower, "power", "700 W", "W", {0.0, 1e9}},
    {dim::kEnergyPerByte, "energy per byte or bit", "3.9 pJ/bit", "J/B", {0.0, 1e-3}},
    {dim::kEnergyPerFlop, "energy per FLOP", "0.2 pJ/FLOP", "J/FLOP", {0.0, 1e-6}},
    {dim::kFlops, "FLOP count", "5 GFLOP", "FLOP", {0.0, 1e30}},
    {dim::kFlopRate, "compute rate", "2.5 PFLOP/s", "FLOP/s", {1e6, 1e22}},
    {dim::kVoltage, "voltage", "0.8 V", "V", {0.0, 1e3}},
    {dim::kLength, "length", "15 mm", "m", {0.0, 1e4}},
    {dim::kEnergyPerByteLength, "energy per byte (or bit) and wire length", "0.1 pJ/bit/mm", "J/B/m", {0.0, 1.0}},
    {dim::kTemperature, "temperature", "105 C", "C", {0.0, 1e3}},
    {dim::kThermalResistance, "thermal resistance", "0.05 K/W", "K/W", {1e-6, 1e3}},
    {dim::kHeatCapacity, "heat capacity", "40 J/K", "J/K", {1e-6, 1e9}},
}};

const NamedDimension* findNamed(Dimension d) {
  for (const auto& n : kNamed) {
    if (n.dimension == d) return &n;
  }
  return nullptr;
}
}  // namespace

std::string dimensionName(Dimension d) {
  const NamedDimension* n = findNamed(d);
  return n ? std::string(n->name) : std::string("quantity");
}

std::string aDimension(Dimension d) {
  const std::string name = dimensionName(d);
  return (std::string("aeiou").find(name.front()) == std::string::npos ? "a " : "an ") + name;
}

std::string dimensionExample(Dimension d) {
  const NamedDimension* n = findNamed(d);
  return n ? std::string(n->example) : std::string("?");
}

PlausibleRange plausibleRange(Dimension d) {
  const NamedDimension* n = findNamed(d);
  return n ? n->plausible : PlausibleRange{};
}

std::string plausibleRangesMarkdown() {
  std::string out = "| quantity | smallest value other than 0 | largest value |\n|---|---|---|\n";
  for (const NamedDimension& n : kNamed) {
    if (n.plausible.max == 0.0) continue;
    out += fmt::format("| {} | {} | {} |\n", n.name,
                       n.plausible.min > 0.0 ? formatQuantity(n.plausible.min, n.dimension) : "no floor",
                       formatQuantity(n.plausible.max, n.dimension));
  }
  return out;
}

std::string siUnit(Dimension d) {
  const NamedDimension* n = findNamed(d);
  return n ? std::string(n->unit) : std::string("?");
}

std::string formatQuantity(double siValue, Dimension d) {
  static constexpr std::array<std::pair<double, std::string_view>, 10> kSteps{{
      {1e15, "P"},
      {1e12, "T"},
      {1e9, "G"},
      {1e6, "M"},
      {1e3, "k"},
      {1.0, ""},
      {1e-3, "m"},
      {1e-6, "u"},
      {1e-9, "n"},
      {1e-12, "p"},
  }};
  const std::string unit = siUnit(d);
  const double magnitude = std::fabs(siValue);
  for (const auto& [scale, prefix] : kSteps) {
    if (magnitude >= scale || scale == 1e-12) {
      if (magnitude == 0.0) return fmt::format("0 {}", unit);
      return fmt::format("{:.4g} {}{}", siValue / scale, prefix, unit);
    }
  }
  return fmt::format("{:.4g} {}", siValue, unit);
}

}  // namespace scoville::config
